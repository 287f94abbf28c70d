"""The fill step: how many copies of a template fit, and where. Copies (names.pod_copies)
scheduled one by one with kube's full cycle and no preemption (the question is capacity: a
copy that would have to preempt does not fit), until `max_pods` placed or one fits nowhere.
Copies share the template's shape token, so batching hints the runs of equal pods."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from ...model import Outcome
from ..schedule_one import schedule_one
from .fork import ClusterFork
from .names import pod_copies
from .steps import Fill, FillResult
from .stopped import Stopped

__all__ = ["ASK_EVERY", "fill"]

ASK_EVERY = 64  # copies between two questions to should_continue (a copy takes ~0.1 ms)


def fill(fork: ClusterFork, step: Fill, should_continue: Callable[[], bool]) -> FillResult:
    was = fork.preemption
    fork.set_preemption(False)
    try:
        return _fill(fork, step, should_continue)
    finally:
        fork.set_preemption(was)


def _fill(fork: ClusterFork, step: Fill, should_continue: Callable[[], bool]) -> FillResult:
    env, cursor = fork.env, fork.cursor
    nodes: list[str] = []
    copies = pod_copies(fork.snapshot, step.template)
    for i in range(step.max_pods):
        if i % ASK_EVERY == 0 and not should_continue():
            raise Stopped
        p = schedule_one(env, cursor, next(copies), False)
        if p.outcome is not Outcome.SCHEDULED:
            return FillResult(i, _counts(nodes), p)
        nodes.append(p.node_name)
    return FillResult(step.max_pods, _counts(nodes))


def _counts(nodes: list[str]) -> dict[str, int]:
    """Copies per node, in the order each node first took one."""
    return dict(Counter(nodes))
