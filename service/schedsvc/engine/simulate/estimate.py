"""The cluster-autoscaler's binpacking estimate for one node template
(estimator/binpacking_estimator.go), as scale_up's first guess, and what bounds it.

Filter-only, as the autoscaler's CheckPredicates: a pod is checked against new nodes with its
profile's PreFilter and Filter over those rows (no scores, no sampling); kube's full cycle
then verifies the guess (scale_up.py)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ...framework.podinfo import PodInfo, pod_info
from ...model import Node, Pod
from ..update_types import SnapshotUpdate
from .fork import ClusterFork
from .node_steps import update_fork
from .stopped import Stopped

__all__ = ["binpacking_estimate", "decreasing_pod_order", "fits", "helpable", "lower_bound"]

_SCORED = ("cpu", "memory")  # DecreasingPodOrderer's podScoreCalculator


def decreasing_pod_order(pods: Sequence[Pod], template: Node) -> list[Pod]:
    """DecreasingPodOrderer: by cpu and memory requests relative to the template's allocatable
    (their sum), largest first; equal scores keep the given order."""
    alloc = template.allocatable

    def score(p: Pod) -> float:
        req = pod_info(p).requests
        return sum(req.get(r, 0) / alloc[r] for r in _SCORED if alloc.get(r, 0) > 0)

    scored = [(score(p), i, p) for i, p in enumerate(pods)]
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [p for _, _, p in scored]


def lower_bound(pods: Sequence[Pod], template: Node) -> int:
    """The fewest template nodes whose allocatable holds the pods' summed requests, resource by
    resource (the `pods` count included): fewer cannot hold them all."""
    need: dict[str, int] = {"pods": len(pods)}
    info: PodInfo | None = None
    for p in pods:
        info = pod_info(p, info)  # worked out once per run of one shape
        for r, v in info.requests.items():
            need[r] = need.get(r, 0) + v
    lb = 0
    for r, total in need.items():
        cap = template.allocatable.get(r, 0)
        if total > 0 and cap > 0:
            lb = max(lb, math.ceil(total / cap))
    return lb


def fits(fork: ClusterFork, info: PodInfo, rows: Sequence[int]) -> list[int]:
    """The rows (in the given order) where the pod passes its profile's PreFilter + Filter."""
    fw = fork.env.frameworks.get(info.pod.scheduler_name)
    if fw is None or not rows:
        return []
    snap = fork.snapshot
    cs = fw.run_pre_filter(info, snap)
    if cs.rejected is not None:
        return []
    block = np.asarray(rows, dtype=np.intp)
    res = fw.run_filter(cs, info, snap, block, diagnose=False)
    return [int(r) for r in block[res.feasible]]


def helpable(
    fork: ClusterFork, template_node: Node, pods: Sequence[Pod],
    should_continue: Callable[[], bool],
) -> tuple[list[Pod], list[Pod]]:
    """The pods that fit an empty node of the template on the fork, and the others (the
    autoscaler's "pod can't be helped by this node group"), each in the given order."""
    child = fork.child()
    try:
        update_fork(child, SnapshotUpdate(upsert_nodes=(template_node,)))
        row = child.snapshot.row_of(template_node.name)
        assert row is not None
        yes: list[Pod] = []
        no: list[Pod] = []
        seen: dict[object, bool] = {}
        for p in pods:
            if not should_continue():
                raise Stopped
            ok = seen.get(p.shape) if p.shape is not None else None
            if ok is None:
                ok = bool(fits(child, pod_info(p), [row]))
                if p.shape is not None:
                    seen[p.shape] = ok
            (yes if ok else no).append(p)
        return yes, no
    finally:
        child.discard()


def binpacking_estimate(
    fork: ClusterFork, new_nodes: Sequence[Node], pods: Sequence[Pod],
    should_continue: Callable[[], bool],
) -> int:
    """Estimate's answer: pods in decreasing order, each on the first new node it fits, else
    on a node added for it while `new_nodes` lasts (the limiter); the count of new nodes that
    got a pod. As the autoscaler's equivalence groups, a pod of a shape that fit none of the
    first m new nodes is not tried on them again (placing pods only fills them). Run on a
    child of `fork`, dropped after."""
    if not new_nodes:
        return 0
    child = fork.child()
    try:
        rows: list[int] = []
        used: set[int] = set()
        full: dict[object, int] = {}  # shape -> the new nodes it is known not to fit
        for p in decreasing_pod_order(pods, new_nodes[0]):
            if not should_continue():
                raise Stopped
            info = pod_info(p)
            fit = fits(child, info, rows[full.get(p.shape, 0) if p.shape is not None else 0:])
            if not fit and p.shape is not None:
                full[p.shape] = len(rows)
            if not fit and len(rows) < len(new_nodes):
                node = new_nodes[len(rows)]
                update_fork(child, SnapshotUpdate(upsert_nodes=(node,)))
                row = child.snapshot.row_of(node.name)
                assert row is not None
                rows.append(row)
                fit = fits(child, info, rows[-1:])
            if fit:
                child.snapshot.add_pod(p, child.snapshot.node(fit[0]).name, True, info)
                used.add(fit[0])
        return len(used)
    finally:
        child.discard()
