"""The `drain` step: the cluster-autoscaler's scale-down simulation of each node
(simulator/cluster.go SimulateNodeRemoval), its pods re-placed with kube's full cycle.

Per node, in the step's order, on a child fork (committed when every pod found a place,
discarded otherwise): the drainability rules over the node's pods in kube's NodeInfo order
(drainability.py), the budgets left after the step's earlier nodes, then the node kept as a
ghost tainted ToBeDeletedByClusterAutoscaler (a topology domain still, a place for nothing)
while its movable pods are scheduled without preemption, and last the node removed with the
pods that go with it (DaemonSet, mirror). Pods move by priority (descending), then equal pods
together in order of first appearance (their controllers recreate them at one instant; a run
of equal pods is what batching hints), then the node's order."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ...model import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Outcome,
    Pod,
    Taint,
)
from ..preemption.evaluator import Victim
from ..schedule_one import Placement, schedule_one
from ..update_types import SnapshotUpdate
from .drainability import DrainOutcome, RemainingPdbTracker, drainability
from .fork import ClusterFork
from .node_steps import update_fork
from .on_fork import pending_with_shapes
from .steps import BlockingPodReason, Drain, DrainResult, NodeDrainVerdict, UnremovableReason
from .stopped import Stopped

__all__ = ["TO_BE_DELETED_TAINT", "drain", "drain_order", "ghost_node", "not_on"]

# taints.ToBeDeletedTaint: what the autoscaler puts on a node it is about to delete
TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"


@dataclass(frozen=True, slots=True)
class _PodsToMove:
    """GetPodsToMove's answer for one node: the pods to re-place and the DaemonSet pods, or
    the verdict of the pod that blocks it."""

    pods: tuple[Pod, ...] = ()
    daemonset_uids: tuple[str, ...] = ()
    blocked: NodeDrainVerdict | None = None


def drain(fork: ClusterFork, step: Drain, should_continue: Callable[[], bool]) -> DrainResult:
    """Each node of `step` drained on `fork` in order (module docstring); the drained ones
    stay drained for the next node and the next step. Stopped when the caller says no."""
    tracker = RemainingPdbTracker(fork.snapshot.pdbs.values())
    now = str(int(time.time()))
    out: list[NodeDrainVerdict] = []
    for name in step.node_names:
        if not should_continue():
            raise Stopped
        out.append(_drain_node(fork, name, tracker, now, should_continue))
    return DrainResult(tuple(out))


def ghost_node(node: Node, now: str) -> Node:
    """The node as the autoscaler keeps it while its pods move (replaceWithTaintedGhostNode):
    tainted ToBeDeletedByClusterAutoscaler=<unix time>:NoSchedule."""
    kept = tuple(t for t in node.taints if t.key != TO_BE_DELETED_TAINT)
    return replace(node, taints=(*kept, Taint(TO_BE_DELETED_TAINT, now, "NoSchedule")))


def not_on(pod: Pod, ghost: Taint, name: str) -> Pod:
    """The pod, kept off the drained node even when it tolerates the ghost's taint (an Exists
    toleration without a key tolerates every taint): the autoscaler never counts the node it
    removes as a place (findPlaceFor's isCandidateNode). Such a pod gets `metadata.name NotIn
    [name]` ANDed into its required node affinity; any other pod is returned as it is."""
    if not any(t.tolerates(ghost) for t in pod.tolerations):
        return pod
    req = NodeSelectorRequirement("metadata.name", "NotIn", (name,))
    aff = pod.affinity or Affinity()
    na = aff.node_affinity or NodeAffinity()
    terms = (
        (NodeSelectorTerm((), (req,)),) if na.required is None
        else tuple(replace(t, match_fields=(*t.match_fields, req)) for t in na.required)
    )
    return replace(pod, affinity=replace(aff, node_affinity=replace(na, required=terms)))


def drain_order(pods: Sequence[Pod]) -> list[Pod]:
    """The pods as their replacements arrive, pending (on_fork.pending_with_shapes): priority
    descending, then equal pods together in order of first appearance, then the given order."""
    pending = pending_with_shapes(pods)
    first: dict[object, int] = {}
    for i, p in enumerate(pending):
        first.setdefault(p.shape, i)
    # sorted() is stable: the given order among equal keys
    return sorted(pending, key=lambda p: (-p.priority, first[p.shape]))


def _victim(pod: Pod) -> Victim:
    return Victim(pod.uid, pod.namespace, pod.name, pod.priority)


def _pods_to_move(
    fork: ClusterFork, row: int, name: str, tracker: RemainingPdbTracker
) -> _PodsToMove:
    """GetPodsToMove: every pod through the rules (the first blocked one decides), then the
    movable ones together against the budgets left."""
    pods: list[Pod] = []
    daemonset: list[str] = []
    for rec in fork.snapshot.pods_on_row[row].values():
        pod = rec.pod
        d = drainability(pod, tracker)
        if d.outcome is DrainOutcome.BLOCK_DRAIN:
            return _PodsToMove(blocked=NodeDrainVerdict(
                name, False, UnremovableReason.BLOCKED_BY_POD, _victim(pod), d.reason, d.message,
            ))
        if d.outcome is DrainOutcome.SKIP_DRAIN:
            if d.daemonset:
                daemonset.append(pod.uid)
            continue
        pods.append(pod)
    over = tracker.can_remove_pods(pods)
    if over is not None:
        return _PodsToMove(blocked=NodeDrainVerdict(
            name, False, UnremovableReason.BLOCKED_BY_POD, _victim(over),
            BlockingPodReason.NOT_ENOUGH_PDB,
            f"not enough pod disruption budget to move {over.namespace}/{over.name}",
        ))
    return _PodsToMove(tuple(pods), tuple(daemonset))


def _drain_node(
    fork: ClusterFork, name: str, tracker: RemainingPdbTracker, now: str,
    should_continue: Callable[[], bool],
) -> NodeDrainVerdict:
    row = fork.snapshot.row_of(name)
    if row is None:  # reported, not an error, as the autoscaler reports it
        return NodeDrainVerdict(name, False, UnremovableReason.NO_NODE_INFO)
    plan = _pods_to_move(fork, row, name, tracker)
    if plan.blocked is not None:
        return plan.blocked
    child = fork.child(siblings=True)  # a node's pods: replicas, in runs
    try:
        moved = _move(child, fork.snapshot.node(row), plan.pods, now, should_continue)
        if moved[-1:] and moved[-1].outcome is not Outcome.SCHEDULED:
            child.discard()
            return _no_place(name, moved[-1], plan)
        update_fork(child, SnapshotUpdate(remove_nodes=(name,)))
    except BaseException:
        child.discard()
        raise
    child.commit()
    tracker.remove_pods(plan.pods)
    return NodeDrainVerdict(name, True, moved=tuple(moved), daemonset_pod_uids=plan.daemonset_uids)


def _move(
    child: ClusterFork, node: Node, pods: Sequence[Pod], now: str,
    should_continue: Callable[[], bool],
) -> list[Placement]:
    """The ghost node in, the pods out, then each pod's cycle (no preemption) until one finds
    no place (it is the last placement returned)."""
    child.set_preemption(False)
    ghost = ghost_node(node, now)
    update_fork(child, SnapshotUpdate(
        upsert_nodes=(ghost,), remove_pods=tuple(p.uid for p in pods),
    ))
    out: list[Placement] = []
    for pod in drain_order([not_on(p, ghost.taints[-1], node.name) for p in pods]):
        if not should_continue():
            raise Stopped
        p = schedule_one(child.env, child.cursor, pod, False)
        out.append(p)
        if p.outcome is not Outcome.SCHEDULED:
            break
    return out


def _no_place(name: str, failed: Placement, plan: _PodsToMove) -> NodeDrainVerdict:
    pod = next(p for p in plan.pods if p.uid == failed.pod_uid)
    return NodeDrainVerdict(
        name, False, UnremovableReason.NO_PLACE_TO_MOVE_PODS, _victim(pod), None,
        failed.message, dict(failed.reasons), daemonset_pod_uids=plan.daemonset_uids,
    )
