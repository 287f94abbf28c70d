"""The two engine calls a step makes on a fork, exactly as the cluster makes them: a snapshot
update (Cluster.update's validate + apply, then the batch states and the env told, as
Cluster._apply does) and a run of cycles (Cluster.schedule_held's loop), asking the caller
before each pod."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from ...framework.snapshot import Snapshot
from ...model import Node, Pod
from ..schedule_one import Placement, schedule_one
from ..update_apply import apply_update
from ..update_check import validate_update
from ..update_types import SnapshotUpdate
from .fork import ClusterFork
from .stopped import Stopped

__all__ = [
    "update_fork", "schedule_on_fork", "template_nodes", "pending_with_shapes", "HOSTNAME",
    "AUTOSCALER_TAINTS",
]

HOSTNAME = "kubernetes.io/hostname"
# the cluster-autoscaler's own taints, which a node made from a template does not carry
AUTOSCALER_TAINTS = frozenset(
    {"ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler"}
)


def update_fork(fork: ClusterFork, upd: SnapshotUpdate) -> None:
    """`upd` applied to the fork as an UpdateSnapshot would apply it to the cluster."""
    infos = validate_update(fork.snapshot, upd)
    dirty, node_rows = apply_update(fork.snapshot, upd, infos)
    fork.batches.updated(upd, dirty, node_rows)
    if upd.nodes_changed:
        fork.refresh_env()  # the sampling is worked out from the node count


def schedule_on_fork(
    fork: ClusterFork, pods: Iterable[Pod], should_continue: Callable[[], bool],
) -> list[Placement]:
    """Each pod's cycle on the fork in order (assumed where it fits), as Schedule's; Stopped
    when the caller says no before a pod."""
    out: list[Placement] = []
    for pod in pods:
        if not should_continue():
            raise Stopped
        out.append(schedule_one(fork.env, fork.cursor, pod, False))
    return out


def template_nodes(snap: Snapshot, template: Node, count: int) -> list[Node]:
    """`count` nodes made from `template` as a node group makes them (the autoscaler's
    sanitized template): named "<template>-<k>" with k from 0, skipping names `snap` holds,
    the hostname label set to the name, other labels, taints (less the autoscaler's own)
    and unschedulable copied."""
    taints = tuple(t for t in template.taints if t.key not in AUTOSCALER_TAINTS)
    out: list[Node] = []
    k = 0
    while len(out) < count:
        name = f"{template.name}-{k}"
        k += 1
        if snap.row_of(name) is None:
            labels = {**template.labels, HOSTNAME: name}
            out.append(replace(template, name=name, labels=labels, taints=taints))
    return out


def pending_with_shapes(pods: Iterable[Pod]) -> list[Pod]:
    """The pods as pending pods (node and nomination cleared), equal ones (all fields but uid
    and name) sharing one shape token, as the server's conversion cache gives a run of equal
    pods: PodInfo and the batching signature are then worked out once per run. A pod's own
    token is kept (its equals already share it)."""
    tokens: dict[str, object] = {}
    out: list[Pod] = []
    for pod in pods:
        token = pod.shape
        if token is None:
            key = repr(replace(pod, uid="", name="", node_name="", nominated_node_name=""))
            token = tokens.setdefault(key, object())
        out.append(replace(pod, node_name="", nominated_node_name="", shape=token))
    return out
