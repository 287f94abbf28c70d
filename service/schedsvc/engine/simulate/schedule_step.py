"""The schedule step: Cluster.schedule_held's loop over schedule_one on the fork (kube's
full cycle, batching, sampling from the fork's cursor, preemption as configured; without
preemption, as scale_up runs it, an equal pod after a failure answered by it:
equivalent_failures.py); with all_or_nothing, on a child fork kept only if every pod is
SCHEDULED."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...model import Outcome, Pod
from ..cycle_env import generic_workload
from ..pod_group_cycle import schedule_pod_group
from ..pod_group_order import group_order, group_run_end
from ..schedule_one import Placement, schedule_one
from .equivalent_failures import EquivalentFailures
from .fork import ClusterFork
from .steps import ScheduleStep, ScheduleStepResult
from .stopped import Stopped

__all__ = ["schedule", "schedule_pods"]


def schedule_pods(
    fork: ClusterFork, pods: Sequence[Pod], should_continue: Callable[[], bool]
) -> list[Placement]:
    """Each pod's cycle on `fork`, in order, `should_continue` asked before each (Stopped
    when it says no); a pod equal to one that just failed takes its answer. Under
    GenericWorkload a PodGroup's pods are one pod group cycle, at the place of its first
    (as Schedule orders a request: Engine.order_pods); the placements keep `pods`' order."""
    if generic_workload(fork.env.frameworks) and any(p.pod_group for p in pods):
        return _with_groups(fork, pods, should_continue)
    out: list[Placement] = []
    cycles = EquivalentFailures(fork.env, fork.cursor)
    for p in pods:
        if not should_continue():
            raise Stopped
        out.append(cycles.schedule_one(p))
    return out


def _with_groups(
    fork: ClusterFork, pods: Sequence[Pod], should_continue: Callable[[], bool]
) -> list[Placement]:
    """schedule_pods with pod group cycles: every pod its own cycle (no answer reused)."""
    ordered = group_order(pods)
    by_uid: dict[str, Placement] = {}
    i = 0
    while i < len(ordered):
        if not should_continue():
            raise Stopped
        p = ordered[i]
        if p.pod_group:
            j = group_run_end(ordered, i)
            for placed in schedule_pod_group(fork.env, fork.cursor, ordered[i:j], False):
                by_uid[placed.pod_uid] = placed
            i = j
        else:
            by_uid[p.uid] = schedule_one(fork.env, fork.cursor, p, False)
            i += 1
    return [by_uid[p.uid] for p in pods]


def schedule(
    fork: ClusterFork, step: ScheduleStep, should_continue: Callable[[], bool]
) -> ScheduleStepResult:
    if not step.all_or_nothing:
        return ScheduleStepResult(tuple(schedule_pods(fork, step.pods, should_continue)), True)
    child = fork.child()
    try:
        out = schedule_pods(child, step.pods, should_continue)
    except BaseException:
        child.discard()
        raise
    ok = all(p.outcome is Outcome.SCHEDULED for p in out)
    if ok:
        child.commit()
    else:
        child.discard()
    return ScheduleStepResult(tuple(out), ok)
