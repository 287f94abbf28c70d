"""The fewest new nodes of a template that scale_up's helpable pods need, proven without a
probe: no probe runs below it.

Both bounds count only the pods that must land on a new node. A pod pending on the cluster as
it is fails there again in every probe when its filters are monotone in pods: a pod added
anywhere never turns a failing filter into a passing one (resources, ports, volume limits,
taints, node affinity, pod anti-affinity). Required pod affinity and DoNotSchedule spreading
are not (a pod placed on a new node can satisfy the affinity or raise the spread's minimum and
let a pending pod onto an existing node): pods with either count in neither bound.

- resources (estimate.lower_bound): the summed requests over the template's allocatable;
- shape: per shape, `most`: the copies an empty template node takes (filters on a child
  holding one template node, copy after copy). A new node of the template takes no more in a
  probe: it starts empty and differs from that node only in its name and hostname, which no
  node of the fork carries as its hostname (checked), and whatever else a probe placed only
  makes monotone filters stricter. Pods with volumes are left out (a probe's Reserve binds
  claims, which copies here do not).

When the helpable pods are all of one such shape, with no required pod anti-affinity either,
a new node's filters read its own pods only: node i of a probe takes a fixed number cap_i of
them, whatever the other nodes hold, so a probe with k nodes places them all exactly when
cap_1 + ... + cap_k reaches their count. The probes are then monotone in k, and any first
guess finds the same smallest k: scale_up starts from the bound instead of the estimate."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...framework.podinfo import pod_info
from ...model import Node, Pod
from ..update_types import SnapshotUpdate
from .estimate import fits, lower_bound
from .fork import ClusterFork
from .node_steps import HOSTNAME, update_fork
from .stopped import Stopped

__all__ = ["NodeBound", "must_land_on_new_node", "node_bound"]


@dataclass(frozen=True, slots=True)
class NodeBound:
    nodes: int  # fewer new nodes cannot place every helpable pod
    monotone: bool  # probes are monotone in k: the bound may serve as the first guess


def must_land_on_new_node(pod: Pod) -> bool:
    """The pod's filters are monotone in pods (see the module docstring): no required pod
    affinity, no DoNotSchedule spreading of its own or, without its own, possibly from the
    profile's defaults (it has a default selector)."""
    a = pod.affinity
    if a is not None and a.pod_affinity is not None and a.pod_affinity.required:
        return False
    if pod.topology_spread_constraints:
        return all(c.when_unsatisfiable != "DoNotSchedule" for c in pod.topology_spread_constraints)
    sel = pod.default_selector
    return sel is None or sel.is_empty


def _node_local(pod: Pod) -> bool:
    """No filter of the pod reads another node's pods: no required anti-affinity either."""
    a = pod.affinity
    return a is None or a.pod_anti_affinity is None or not a.pod_anti_affinity.required


def node_bound(
    fork: ClusterFork, new_nodes: Sequence[Node], pods: Sequence[Pod], template: Node,
    should_continue: Callable[[], bool],
) -> NodeBound:
    """The larger of the two bounds over `pods` (helpable, in order), and whether the probes
    are monotone."""
    landing = [p for p in pods if must_land_on_new_node(p)]
    by_shape: dict[object, list[Pod]] = {}
    for p in landing:
        if p.shape is not None and not p.volumes:
            by_shape.setdefault(p.shape, []).append(p)
    best = lower_bound(landing, template)
    most = _most_per_node(fork, new_nodes, by_shape, should_continue)
    for shape, m in most.items():
        best = max(best, math.ceil(len(by_shape[shape]) / m))
    one = next(iter(most), None)
    monotone = (
        len(most) == 1 and len(by_shape[one]) == len(pods) and _node_local(pods[0])
    )
    return NodeBound(best, monotone)


def _most_per_node(
    fork: ClusterFork, new_nodes: Sequence[Node], by_shape: dict[object, list[Pod]],
    should_continue: Callable[[], bool],
) -> dict[object, int]:
    """Per shape of two pods or more (one pod bounds nothing), the copies of it (its own pods,
    in order) that an empty template node takes, at most all of them; none when a node of the
    fork carries a new node's name as its hostname (that node's domain would not be a fresh
    one's). One child holds the node; each shape's copies go on a child of it, dropped after."""
    shapes = [s for s, same in by_shape.items() if len(same) > 1]
    if not shapes or not new_nodes or _hostname_taken(fork, new_nodes):
        return {}
    node = new_nodes[0]
    holder = fork.child()
    try:
        update_fork(holder, SnapshotUpdate(upsert_nodes=(node,)))
        row = holder.snapshot.row_of(node.name)
        assert row is not None
        out: dict[object, int] = {}
        for shape in shapes:
            m = _copies_taken(holder, node.name, row, by_shape[shape], should_continue)
            if m:  # 0: not helpable here (the caller passes helpable pods)
                out[shape] = m
        return out
    finally:
        holder.discard()


def _copies_taken(
    holder: ClusterFork, name: str, row: int, same: Sequence[Pod],
    should_continue: Callable[[], bool],
) -> int:
    """How many of `same`, in order, the node at `row` takes (on a child of `holder`)."""
    child = holder.child()
    try:
        info = None
        for m, p in enumerate(same):
            if not should_continue():
                raise Stopped
            info = pod_info(p, info)
            if not fits(child, info, [row]):
                return m
            child.snapshot.add_pod(p, name, True, info)
        return len(same)
    finally:
        child.discard()


def _hostname_taken(fork: ClusterFork, new_nodes: Sequence[Node]) -> bool:
    col = fork.snapshot.labels.get(HOSTNAME)
    if col is None:
        return False
    for n in new_nodes:
        vid = col.index.get(n.name)
        if vid is not None and col.counts[vid] > 0:
            return True
    return False
