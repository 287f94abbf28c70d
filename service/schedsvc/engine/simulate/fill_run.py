"""Fill's copies in rounds from the run's WindowCache (engine/run_rounds.py): the choices the
copies' cycles make one by one, without paying a cycle per copy.

The copies share the template's shape, so once a copy was placed from a complete cache the
next copies continue its run. Between rounds, the copies' questions to should_continue are
asked as the copy-by-copy fill asks them. When rescoring goes by usage, the copies' pod
records, which nothing in the run reads, are made once at the end, or never when the fill is
the simulation's last step (`keep` False); a stop or an error midway invalidates the batches
(the fork is dropped)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np

from ..cycle_context import CycleCursor
from ..cycle_env import CycleEnv
from ..run_rounds import Rounds, start_rounds
from ..runtime import Framework
from .names import PodCopies
from .stopped import Stopped

__all__ = ["continue_fill"]


def continue_fill(
    env: CycleEnv, cursor: CycleCursor, fw: Framework, copies: PodCopies,
    counts: Counter[str], placed: int, max_pods: int, ask_every: int,
    should_continue: Callable[[], bool], keep: bool = True,
) -> int:
    """Copies placed after the `placed` ones, in rounds while the run continues, counted per
    node into `counts`; returns the new total. Unchanged (nothing placed, batches untouched)
    when the run cannot continue from its cache (rounds.start_rounds)."""
    run = start_rounds(env, cursor, fw)
    if run is None:
        return placed
    try:
        placed = _rounds(run, copies, counts, placed, max_pods, ask_every, should_continue)
        _finish(run, copies, counts, keep)
    except BaseException:
        run.abandon()
        raise
    run.end()
    return placed


def _rounds(
    run: Rounds, copies: PodCopies, counts: Counter[str], placed: int, max_pods: int,
    ask_every: int, should_continue: Callable[[], bool],
) -> int:
    """Round after round until `max_pods` or nothing fits, each round's copies then asking
    their questions to should_continue. The new total."""
    snap, cursor, info = run.env.snapshot, run.cursor, run.info

    def record(rows: list[int]) -> None:
        names = [snap.node(r).name for r in rows]
        pods = [next(copies) for _ in rows]
        snap.add_records(pods, names, rows, info)
        counts.update(names)
        cursor.last_info = snap.pods[pods[-1].uid].info

    while placed < max_pods:
        rnd = run.picks(max_pods - placed)
        k = len(rnd.rows)
        if k == 0:  # nothing fits: the next copy's full cycle says why
            return placed
        run.take(rnd, None if run.memo is not None else record)
        for _ in range(_questions(placed, k, ask_every)):
            if not should_continue():
                raise Stopped
        placed += k
    return placed


def _questions(placed: int, k: int, ask_every: int) -> int:
    """The questions to should_continue that copies placed .. placed + k - 1 ask one by one
    (fill.py): one before each copy whose index is a multiple of `ask_every`. Asked after the
    round (a no drops the step: what the round placed is never seen); the question before
    copy placed + k is fill.py's, or the next round's, so none is asked after the last copy."""
    return (placed + k - 1) // ask_every - (placed - 1) // ask_every


def _finish(run: Rounds, copies: PodCopies, counts: Counter[str], keep: bool) -> None:
    """The copies the rounds deferred (rescoring by usage) counted per node (in the order each
    node first took one) and, with `keep`, made and recorded in placement order; else only
    passed over in the naming."""
    rows = run.taken
    if run.memo is None or not rows:
        return
    snap = run.env.snapshot
    arr = np.asarray(rows, dtype=np.intp)
    uniq, first, cnt = np.unique(arr, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    for r, c in zip(uniq[order].tolist(), cnt[order].tolist(), strict=True):
        counts[snap.node(r).name] += c
    if not keep:
        copies.skip(len(rows))
        return
    pods = [next(copies) for _ in rows]
    snap.add_records(pods, [snap.node(r).name for r in rows], rows, run.info)
    run.cursor.last_info = snap.pods[pods[-1].uid].info
