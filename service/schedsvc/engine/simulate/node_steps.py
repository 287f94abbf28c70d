"""The steps add_nodes and remove_nodes: UpdateSnapshot's own code (validate_update,
apply_update) run on the fork, then what Cluster._apply does after an update (the batch
states told, the env rebuilt for the new node count). So a simulated node change is the
cluster's UpdateSnapshot with the same nodes, by construction."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ...errors import InvalidArgument
from ...framework.snapshot import Snapshot
from ...model import Node, frozen_map
from ..update_apply import apply_update
from ..update_check import validate_update
from ..update_types import SnapshotUpdate
from .fork import ClusterFork
from .names import node_names
from .steps import AddNodes, AddNodesResult, RemoveNodes, RemoveNodesResult

__all__ = ["AUTOSCALER_TAINTS", "add_nodes", "new_nodes", "remove_nodes", "update_fork"]

HOSTNAME = "kubernetes.io/hostname"
# the cluster-autoscaler's own taints, which a node made from a template does not carry
# (utils/taints: ToBeDeletedTaint, DeletionCandidateTaint)
AUTOSCALER_TAINTS = frozenset(
    {"ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler"}
)


def update_fork(fork: ClusterFork, upd: SnapshotUpdate) -> None:
    """`upd` applied to the fork as Cluster.update applies it to a cluster (no replace, no
    staging: a simulation never makes those)."""
    infos = validate_update(fork.snapshot, upd)
    dirty, node_rows = apply_update(fork.snapshot, upd, infos)
    if upd.nodes_changed:
        fork.refresh_env()  # the sampling is worked out from the node count
    fork.batches.updated(upd, dirty, node_rows)


def new_nodes(snap: Snapshot, template: Node, count: int) -> list[Node]:
    """`count` nodes as a node group makes them from `template` (the autoscaler's
    FreshNodeInfoFromTemplateNodeInfo): hostname label set to the new name, other labels,
    taints but the autoscaler's own, and unschedulable copied."""
    taints = tuple(t for t in template.taints if t.key not in AUTOSCALER_TAINTS)
    return [
        dataclasses.replace(
            template, name=name, taints=taints,
            labels=frozen_map({**template.labels, HOSTNAME: name}),
        )
        for name in node_names(snap, template.name, count)
    ]


def add_nodes(
    fork: ClusterFork, step: AddNodes, should_continue: Callable[[], bool]
) -> AddNodesResult:
    nodes = new_nodes(fork.snapshot, step.template, step.count)
    update_fork(fork, SnapshotUpdate(upsert_nodes=nodes))
    return AddNodesResult(tuple(n.name for n in nodes))


def remove_nodes(
    fork: ClusterFork, step: RemoveNodes, should_continue: Callable[[], bool]
) -> RemoveNodesResult:
    """The nodes removed with their pods (listed, not re-placed). A name the fork does not
    hold, or named twice, is an error naming it, decided before anything is removed."""
    snap, seen = fork.snapshot, set[str]()
    for j, name in enumerate(step.names):
        if name not in snap.index or name in seen:
            what = "named twice" if name in seen else "no such node here"
            raise InvalidArgument(f"remove_nodes.names[{j}]", f"{what}: {name!r}")
        seen.add(name)
    gone = tuple(uid for n in step.names for uid in snap.pods_on_row[snap.index[n]])
    update_fork(fork, SnapshotUpdate(remove_nodes=step.names))
    return RemoveNodesResult(gone)
