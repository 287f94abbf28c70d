"""The `scale_up` step: per node template, the fewest new nodes that let the pending pods
schedule with kube's full cycle (design §2.6); the fork is left as it was.

The pods are first scheduled on the cluster as it is (preemption off): those that fit are
`scheduled_now`, the rest are pending, as kube's queue would leave them. Per template, the
pending pods that fit no empty node of it are unhelpable; for the others, a first guess k0
(the autoscaler's binpacking estimate, estimate.py, or the bound when the probes are
monotone, node_bound.py), and each probe k is a verification on a child fork: k nodes added,
the pods scheduled in the request's order. The answer is the smallest k that placed every
helpable pod, with k-1 refuted by a probe or by the bound (node_bound.py: fewer nodes cannot
hold the pods' requests, or the copies of one shape a node takes); no k within max_new_nodes:
`fits=False` and the pods still pending at max_new_nodes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...model import Node, Outcome, Pod
from ..schedule_one import Placement
from ..update_types import SnapshotUpdate
from .estimate import binpacking_estimate, helpable
from .fork import ClusterFork
from .node_bound import node_bound
from .node_steps import new_nodes, update_fork
from .on_fork import pending_with_shapes
from .schedule_step import schedule_pods
from .steps import ScaleUp, ScaleUpResult, TemplateEstimate

__all__ = ["scale_up"]

_Probe = Callable[[int], "list[Placement] | None"]


def scale_up(
    fork: ClusterFork, step: ScaleUp, should_continue: Callable[[], bool]
) -> ScaleUpResult:
    """See the module docstring. Stopped when the caller says no (before each pod)."""
    now_fork = fork.child()
    try:
        now_fork.set_preemption(False)
        pods = pending_with_shapes(step.pods)
        now = schedule_pods(now_fork, pods, should_continue)
        placed = {p.pod_uid for p in now if p.outcome is Outcome.SCHEDULED}
        pending = [p for p in pods if p.uid not in placed]
        out = tuple(
            _for_template(now_fork, t, pending, step.max_new_nodes, should_continue)
            for t in step.node_templates
        )
    finally:
        now_fork.discard()
    return ScaleUpResult(tuple(now), out)


def _for_template(
    fork: ClusterFork, template: Node, pending: Sequence[Pod], max_new: int,
    should_continue: Callable[[], bool],
) -> TemplateEstimate:
    nodes = new_nodes(fork.snapshot, template, max(max_new, 1))
    ok, unhelpable = helpable(fork, nodes[0], pending, should_continue)
    gone = tuple(p.uid for p in unhelpable)
    if not ok:
        return TemplateEstimate(template.name, 0, True, unhelpable_pod_uids=gone)
    if max_new < 1:
        return TemplateEstimate(
            template.name, 0, False, unhelpable_pod_uids=gone,
            pending_pod_uids=tuple(p.uid for p in ok),
        )
    probes: dict[int, list[Placement] | None] = {}

    def probe(k: int) -> list[Placement] | None:
        if k not in probes:
            probes[k] = _verify(fork, nodes[:k], ok, should_continue)
        return probes[k]

    bound = node_bound(fork, nodes, ok, template, should_continue)
    lb = max(bound.nodes, 1)
    # a first guess only: monotone probes find the same k from any, and the bound is often it
    guess = lb if bound.monotone else binpacking_estimate(fork, nodes, ok, should_continue)
    k0 = min(max(guess, lb), max_new)
    k = _smallest_working(probe, k0, lb, max_new)
    if k is None:
        last = _placements(fork, nodes, ok, should_continue)
        left = tuple(p.pod_uid for p in last if p.outcome is not Outcome.SCHEDULED)
        return TemplateEstimate(
            template.name, max_new, False, tuple(last), gone, left,
            tuple(n.name for n in nodes),
        )
    found = probe(k)
    assert found is not None
    return TemplateEstimate(
        template.name, k, True, tuple(found), gone, (), tuple(n.name for n in nodes[:k])
    )


def _smallest_working(probe: _Probe, k0: int, lb: int, max_new: int) -> int | None:
    """The smallest k in [lb, max_new] whose probe works while k-1's fails (lb - 1 fails by
    the bound): k0 first (usually exact: then k0 and k0-1 are the only probes, k0 alone when
    it is lb), then galloping (x2) away from it and bisecting; None if max_new fails."""
    if probe(k0) is not None:
        hi, step, lo = k0, 1, -1  # hi works; lo: the largest known to fail
        while lo < 0:
            k = max(hi - step, lb - 1)
            if k == lb - 1 or probe(k) is None:
                lo = k
            else:
                hi, step = k, step * 2
    else:
        lo, step, hi = k0, 1, -1
        while hi < 0:
            k = min(lo + step, max_new)
            if probe(k) is not None:
                hi = k
            elif k == max_new:
                return None
            else:
                lo, step = k, step * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if probe(mid) is not None:
            hi = mid
        else:
            lo = mid
    return hi


def _placements(
    fork: ClusterFork, nodes: Sequence[Node], pods: Sequence[Pod],
    should_continue: Callable[[], bool], first_failure: bool = False,
) -> list[Placement]:
    """The pods scheduled in order on a child with `nodes` added (up to the first that fails,
    with `first_failure`); the child dropped after."""
    child = fork.child()
    try:
        update_fork(child, SnapshotUpdate(upsert_nodes=tuple(nodes)))
        out: list[Placement] = []
        for p in pods:
            out.extend(schedule_pods(child, (p,), should_continue))
            if first_failure and out[-1].outcome is not Outcome.SCHEDULED:
                break
        return out
    finally:
        child.discard()


def _verify(
    fork: ClusterFork, nodes: Sequence[Node], pods: Sequence[Pod],
    should_continue: Callable[[], bool],
) -> list[Placement] | None:
    """The placements when every pod fits with `nodes` added, else None."""
    out = _placements(fork, nodes, pods, should_continue, first_failure=True)
    return out if all(p.outcome is Outcome.SCHEDULED for p in out) else None
