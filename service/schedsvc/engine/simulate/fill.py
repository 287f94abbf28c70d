"""The fill step: how many copies of a template fit, and where. Copies (names.pod_copies)
scheduled one by one with kube's full cycle and no preemption (the question is capacity: a
copy that would have to preempt does not fit), until `max_pods` placed or one fits nowhere.
Copies share the template's shape token, so batching hints the runs of equal pods; once a
run can continue from its cache, fill_run.py places the next copies in rounds, as their
cycles would."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from ...model import Outcome
from ..schedule_one import schedule_one
from .fill_run import continue_fill
from .fork import ClusterFork
from .names import pod_copies
from .steps import Fill, FillResult
from .stopped import Stopped

__all__ = ["ASK_EVERY", "fill", "fill_last"]

ASK_EVERY = 64  # copies between two questions to should_continue (a copy takes ~0.1 ms)


def fill(
    fork: ClusterFork, step: Fill, should_continue: Callable[[], bool], keep: bool = True
) -> FillResult:
    """The step; with `keep` False the copies' pod records need not be made (fill_last)."""
    was = fork.preemption
    fork.set_preemption(False)
    try:
        return _fill(fork, step, should_continue, keep)
    finally:
        fork.set_preemption(was)


def fill_last(
    fork: ClusterFork, step: Fill, should_continue: Callable[[], bool]
) -> FillResult:
    """fill as a simulation's last step: nothing reads the fork after it, so the copies a run
    places in rounds get no pod records where the rounds can do without (fill_run.py)."""
    return fill(fork, step, should_continue, keep=False)


def _fill(
    fork: ClusterFork, step: Fill, should_continue: Callable[[], bool], keep: bool
) -> FillResult:
    """Copies one by one; after each, the run continues in rounds when it can (fill_run.py).
    `counts`: copies per node, in the order each node first took one."""
    env, cursor = fork.env, fork.cursor
    counts: Counter[str] = Counter()
    copies = pod_copies(fork.snapshot, step.template)
    fw = env.frameworks.get(step.template.scheduler_name)
    placed = 0
    while placed < step.max_pods:
        if placed % ASK_EVERY == 0 and not should_continue():
            raise Stopped
        p = schedule_one(env, cursor, next(copies), False)
        if p.outcome is not Outcome.SCHEDULED:
            return FillResult(placed, dict(counts), p)
        counts[p.node_name] += 1
        placed += 1
        if fw is not None and placed < step.max_pods:
            placed = continue_fill(
                env, cursor, fw, copies, counts, placed, step.max_pods, ASK_EVERY,
                should_continue, keep,
            )
    return FillResult(placed, dict(counts))
