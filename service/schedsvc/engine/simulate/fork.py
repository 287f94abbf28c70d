"""What a simulation's steps run on: a cluster's state forked copy-on-write, with its own
cursor, batch states and CycleEnv, so `schedule_one`, `explain`, `apply_update` and
preemption run unmodified on it and nothing of the cluster moves.

- the snapshot: a ForkSnapshot (framework/fork.py), never writing the cluster's;
- the cursor: copied (the rng's state included), so the fork's placements are the ones the
  cluster's next real Schedule calls would make, and the cluster's own cursor stays;
- the batch states: fresh and empty (batching is exact, so an empty state places as a warm
  one does), parking within a small budget of the simulation's own: never the server's
  shared one (a simulation would evict live clusters' parked runs), never 0 (unbounded);
- the CycleEnv: the cluster's settings with the null observer and no cycle records, so no
  placement metric counts a simulated pod.

A `child()` is a fork of the fork (a step tried, then kept with `commit()` or dropped with
`discard()`). The cluster's lock is held from `ClusterFork.of` to the last use (engine/
cluster.py `Cluster.fork`): the base cannot move under the fork.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from ...config import SchedulerConfig
from ...framework.fork import ForkSnapshot
from ...framework.snapshot import Snapshot
from ..batching import ClusterBatches, OpportunisticBatch, ParkedBudget, SiblingBatch
from ..cycle_context import CycleCursor
from ..cycle_env import CycleEnv, sampling_by_profile
from ..observer import NULL_OBSERVER
from ..runtime import Framework

__all__ = ["SIM_PARKED_BYTES", "ClusterFork", "ForkSettings"]

# what one fork's batch states may park (ParkedBudget(0) would mean unbounded)
SIM_PARKED_BYTES = 8 << 20


class ForkSettings(Protocol):
    """What a fork reads of the engine (scheduler.Engine, cluster.EngineSettings)."""

    @property
    def config(self) -> SchedulerConfig: ...
    @property
    def frameworks(self) -> Mapping[str, Framework]: ...
    @property
    def batching_enabled(self) -> bool: ...
    @property
    def executor(self) -> ThreadPoolExecutor | None: ...
    @property
    def max_nominated_pods(self) -> int: ...


def _copied(c: CycleCursor) -> CycleCursor:
    return CycleCursor(copy.deepcopy(c.rng), c.cycle, c.next_start_index, c.last_info)


class ClusterFork:
    """A cluster's state as a simulation sees it; see the module docstring. Run cycles with
    `schedule_one(fork.env, fork.cursor, pod, False)`; after changing nodes (apply_update)
    tell `batches.updated(...)` and call `refresh_env()`, as Cluster._apply does."""

    __slots__ = ("settings", "snapshot", "cursor", "batches", "env", "preemption", "parent")

    def __init__(
        self, settings: ForkSettings, snapshot: ForkSnapshot, cursor: CycleCursor,
        parent: ClusterFork | None, preemption: bool, siblings: bool = False,
    ) -> None:
        self.settings = settings
        self.snapshot = snapshot
        self.cursor = cursor
        self.batches = ClusterBatches(
            settings.frameworks, NULL_OBSERVER, settings.batching_enabled,
            ParkedBudget(SIM_PARKED_BYTES), SiblingBatch if siblings else OpportunisticBatch,
        )
        self.preemption = preemption
        self.parent = parent
        self.env = self._env()

    @classmethod
    def of(cls, snapshot: Snapshot, cursor: CycleCursor, settings: ForkSettings) -> ClusterFork:
        """A fork of a cluster's snapshot and cursor (the caller holds the cluster's lock)."""
        return cls(settings, ForkSnapshot.of(snapshot), _copied(cursor), None, True)

    def _env(self) -> CycleEnv:
        s, snap = self.settings, self.snapshot
        pct = s.config.percentage_of_nodes_to_score
        return CycleEnv(
            snap, self.batches, s.frameworks, NULL_OBSERVER, pct, s.executor,
            s.config.parallelism, s.max_nominated_pods, self.batches.by_profile(),
            sampling_by_profile(s.frameworks, pct, snap.num_nodes), False, self.preemption,
        )

    def refresh_env(self) -> None:
        """Rebuild the env after the node count changed (the sampling is worked out from it)."""
        self.env = self._env()

    def set_preemption(self, on: bool) -> None:
        """Whether an unschedulable pod runs PostFilter here (off: what fits, fits as is)."""
        if on != self.preemption:
            self.preemption = on
            self.env = self._env()

    def child(self, siblings: bool = False) -> ClusterFork:
        """A fork of this fork: its own snapshot fork, copied cursor, fresh batch states.
        Leave this fork alone until the child is committed or discarded. `siblings`: its
        batch states start runs from a sibling's cache or at once (batching/siblings.py),
        for pods that come in long runs of replicas (a drain's); each such start holds a
        cache of node length, which a run of one pod would not have built."""
        return ClusterFork(
            self.settings, self.snapshot.fork(), _copied(self.cursor), self, self.preemption,
            siblings,
        )

    def commit(self) -> None:
        """This child's state becomes its parent's (snapshot, cursor); the parent's batch
        states, which did not see the child's pods, are dropped (batching is exact)."""
        parent = self.parent
        if parent is None:
            raise TypeError("only a child fork commits; a cluster's fork is discarded")
        self.snapshot.commit()
        parent.cursor = self.cursor
        parent.batches.invalidate()
        parent.refresh_env()
        self.parent = None

    def discard(self) -> None:
        """Drop this fork (its base was never written: nothing to undo)."""
        self.snapshot.discard()
        self.parent = None
