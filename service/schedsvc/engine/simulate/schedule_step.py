"""The schedule step: Cluster.schedule_held's loop over schedule_one on the fork (kube's
full cycle, batching, sampling from the fork's cursor, preemption as configured; without
preemption, as scale_up runs it, an equal pod after a failure answered by it:
equivalent_failures.py); with all_or_nothing, on a child fork kept only if every pod is
SCHEDULED."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...model import Outcome, Pod
from ..schedule_one import Placement
from .equivalent_failures import EquivalentFailures
from .fork import ClusterFork
from .steps import ScheduleStep, ScheduleStepResult
from .stopped import Stopped

__all__ = ["schedule", "schedule_pods"]


def schedule_pods(
    fork: ClusterFork, pods: Sequence[Pod], should_continue: Callable[[], bool]
) -> list[Placement]:
    """Each pod's cycle on `fork`, in order, `should_continue` asked before each (Stopped
    when it says no); a pod equal to one that just failed takes its answer."""
    out: list[Placement] = []
    cycles = EquivalentFailures(fork.env, fork.cursor)
    for p in pods:
        if not should_continue():
            raise Stopped
        out.append(cycles.schedule_one(p))
    return out


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
