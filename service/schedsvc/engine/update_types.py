"""What an UpdateSnapshot asks of a cluster and what it answers, as domain values.

A module of its own so that the modules that validate, apply and stage an update, and the
batching package that hears of it, read these types without importing the cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Namespace, Node, Pod, PodDisruptionBudget

__all__ = ["SnapshotUpdate", "UpdateResult"]


@dataclass(frozen=True, slots=True)
class SnapshotUpdate:
    replace: bool = False
    upsert_nodes: Sequence[Node] = ()
    remove_nodes: Sequence[str] = ()
    upsert_pods: Sequence[Pod] = ()
    remove_pods: Sequence[str] = ()
    upsert_namespaces: Sequence[Namespace] = ()
    expected_generation: int = 0
    expected_epoch: str = ""
    upsert_pod_disruption_budgets: Sequence[PodDisruptionBudget] = ()
    remove_pod_disruption_budgets: Sequence[str] = ()  # "namespace/name"
    stage: bool = False  # a chunk of a staged replace (staged.py)
    staged_replace: str = ""  # the open staged replace a later chunk adds to
    commit: bool = False  # the staged replace's last chunk: swap it in

    @property
    def nodes_changed(self) -> bool:
        """Nodes are added, removed or relabelled: cluster-wide score inputs move."""
        return bool(self.upsert_nodes or self.remove_nodes)


@dataclass(frozen=True, slots=True)
class UpdateResult:
    generation: int
    nodes: int
    pods: int
    epoch: str
    staged_replace: str = ""  # the open staged replace a chunk built ("" once committed)
