"""Every profile's batch state of one cluster, and what a change of the cluster does to it.

The cluster tells this object what happened (an update applied, a pod assumed, a nomination
made or ended, a state damaged); which cached evaluations that invalidates is decided here.
"""

from __future__ import annotations

from collections.abc import Mapping, ValuesView

from ...model import Pod
from ..observer import Observer
from ..runtime import Framework
from ..update_types import SnapshotUpdate
from .batch import OpportunisticBatch
from .parked import ParkedBudget

__all__ = ["ClusterBatches"]


class ClusterBatches:
    """One OpportunisticBatch per profile. Called under the cluster lock only."""

    __slots__ = ("_by_profile",)

    def __init__(
        self, frameworks: Mapping[str, Framework], observer: Observer, enabled: bool,
        parked_budget: ParkedBudget, kind: type[OpportunisticBatch] = OpportunisticBatch,
    ) -> None:
        """`kind`: the batch state's class (a fork's: siblings.SiblingBatch)."""
        self._by_profile = {
            name: kind(fw, observer, enabled, parked_budget=parked_budget)
            for name, fw in frameworks.items()
        }

    def __getitem__(self, profile: str) -> OpportunisticBatch:
        return self._by_profile[profile]

    def values(self) -> ValuesView[OpportunisticBatch]:
        return self._by_profile.values()

    def by_profile(self) -> Mapping[str, OpportunisticBatch]:
        """Each profile's batch state, for the cycle to ask its hint of (a plain lookup)."""
        return self._by_profile

    def updated(
        self, upd: SnapshotUpdate, dirty: set[int] | None, node_rows: set[int]
    ) -> None:
        """An update was applied: `dirty` the rows whose node or pods changed (None: any may
        have), `node_rows` those whose node was upserted. A change of storage objects drops
        every cached evaluation: a volume plugin's verdict on any row may read them (the
        simplest exact choice; storage changes are rare beside pod updates)."""
        if upd.storage_changed:
            dirty = None
        nodes_changed = upd.nodes_changed
        for b in self._by_profile.values():
            b.on_snapshot_change(dirty, node_rows, nodes_changed)

    def invalidate(self) -> None:
        """Anything may have changed (a replace, a nomination made or ended, a state damaged
        or a dry run cut short): every cached evaluation is dropped."""
        for b in self._by_profile.values():
            b.on_snapshot_change(None)

    def pod_assumed(
        self, row: int, pod: Pod, owner: OpportunisticBatch, before: int, after: int
    ) -> None:
        """The pod of `owner`'s cycle was assumed on `row`, taking the generation from
        `before` to `after`: every profile's batch hears of it, the owner's run too."""
        for b in self._by_profile.values():
            b.pod_assumed(row, pod, (before, after) if b is owner else None)
