"""Fill's copies in rounds from the run's WindowCache: the choices the copies' cycles make one
by one, without paying a cycle per copy.

Once a copy was placed from a complete WindowCache (every node's verdict and raw scores for
the template's signature) and nothing else changed (batching/continued_run.py), the
next copy's cycle is the cache's pick over its window: the first `to_find` feasible rows
from the start index, normalized and drawn from as that sampled cycle would (batching's own
claim, held by its tests). A row's verdict and scores for such a pod read that row alone,
and only the rows that took copies changed. So a round picks copy after copy from the cache
as it stands (a lap at once, batching/window_lap.py, or one by one), moving the start index
as each cycle would, until a copy's window reaches (its filter stage would visit) a row an
earlier copy of the round took: that window would read a stale row. The round's copies are
then assumed and their rows re-filtered and rescored, and the next round begins. Each pick
draws from the cursor's generator as its cycle would, so the placements, the generator, the
start index and the cycle counter end as the copies' cycles leave them.

When every plugin that reads usage for the template reads only its row's usage columns
(PluginTraits.row_usage_only), a rescored row's result is looked up by those columns (rows in
equal states share it), and the copies' pod records, which nothing in the run reads, are
made once at the end, or never when the fill is the simulation's last step (`keep` False).

A copy with volumes (Reserve binds its claims) or host ports never comes here; nominated
pods end a run before (continued_run). After the rounds the batch state is the one the
copies' cycles leave (run_continued: the run goes on, parked runs journal the copies' rows);
a stop or an error midway invalidates the batches instead (the fork is dropped)."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...framework import Rows
from ...framework.podinfo import PodInfo
from ...framework.snapshot import Snapshot
from ..batching.continued_run import continued_run, run_continued
from ..batching.window_cache import WindowCache
from ..batching.window_lap import UsageMemo, lap_picks, recheck_by_usage, recheck_taken
from ..cycle_context import CycleCursor
from ..cycle_env import CycleEnv
from ..runtime import CycleState, Framework
from .names import PodCopies
from .stopped import Stopped

__all__ = ["continue_fill"]


@dataclass(slots=True)
class _Run:
    """One continued run: what its rounds read and what they leave for the end."""

    env: CycleEnv
    cursor: CycleCursor
    fw: Framework
    info: PodInfo
    st: WindowCache
    cs: CycleState
    memo: UsageMemo | None  # usage-only: rescored rows by their usage (module docstring)
    # rows of the rounds' copies, in placement order (with `memo`, none recorded yet)
    taken: list[int] = field(default_factory=list)


def continue_fill(
    env: CycleEnv, cursor: CycleCursor, fw: Framework, copies: PodCopies,
    counts: Counter[str], placed: int, max_pods: int, ask_every: int,
    should_continue: Callable[[], bool], keep: bool = True,
) -> int:
    """Copies placed after the `placed` ones, in rounds while the run continues, counted per
    node into `counts`; returns the new total. Unchanged (nothing placed, batches untouched)
    when the run cannot continue from its cache (module docstring)."""
    snap, info, batch = env.snapshot, cursor.last_info, env.batch[fw.name]
    cont = continued_run(batch, snap, cursor.cycle)
    if cont is None or info is None or info.pod.volumes or info.host_ports:
        return placed
    st, cs, last = cont
    memo = UsageMemo.of(fw, cs, st) if fw.pre_score_assume_stable else None
    run = _Run(env, cursor, fw, info, st, cs, memo)
    try:
        st.recheck_rows(fw, info, snap, cs, np.array([last], dtype=np.intp), -1, True)
        placed = _rounds(run, copies, counts, placed, max_pods, ask_every, should_continue)
        _finish(run, copies, counts, keep)
    except BaseException:
        env.batches.invalidate()
        raise
    if run.taken:
        run_continued(env.batches, batch, snap, cursor.cycle, run.taken)
    return placed


def _rounds(
    run: _Run, copies: PodCopies, counts: Counter[str], placed: int, max_pods: int,
    ask_every: int, should_continue: Callable[[], bool],
) -> int:
    """Round after round until `max_pods` or nothing fits: the round's picks (a lap at once
    when lap_picks can read it, else window by window), their usage assumed, their rows
    rechecked (by usage, or per round with the copies recorded now), the cursor moved as
    their cycles move it, then their questions to should_continue. The new total."""
    env, cursor, fw, info, st, cs = run.env, run.cursor, run.fw, run.info, run.st, run.cs
    snap = env.snapshot
    _, to_find = env.sampling[fw.name]
    n = len(snap.order)
    while placed < max_pods:
        lap = lap_picks(st, cursor.next_start_index % n, to_find, max_pods - placed, cursor.rng)
        if lap is not None:
            picks, start = lap
        else:
            picks, start = _picks(st, fw, info, cs, cursor, to_find, max_pods - placed, snap)
        if len(picks) == 0:  # nothing fits: the next copy's full cycle says why
            return placed
        snap.account_copies(picks, info)  # the assumes' usage (no Reserve: no volumes)
        rows = picks.tolist()
        run.taken.extend(rows)
        if run.memo is not None:
            recheck_by_usage(st, fw, info, snap, cs, picks, run.memo)
        else:
            names = [snap.node(r).name for r in rows]
            pods = [next(copies) for _ in rows]
            snap.add_records(pods, names, rows, info)
            counts.update(names)
            cursor.last_info = snap.pods[pods[-1].uid].info
            if fw.pre_score_assume_stable:
                recheck_taken(st, fw, info, snap, cs, picks)
            else:
                st.recheck_rows(fw, info, snap, cs, picks, -1, True)
        cursor.cycle += len(picks)
        cursor.next_start_index = start
        for _ in range(_questions(placed, len(picks), ask_every)):
            if not should_continue():
                raise Stopped
        placed += len(picks)
    return placed


def _questions(placed: int, k: int, ask_every: int) -> int:
    """The questions to should_continue that copies placed .. placed + k - 1 ask one by one
    (fill.py): one before each copy whose index is a multiple of `ask_every`. Asked after the
    round (a no drops the step: what the round placed is never seen); the question before
    copy placed + k is fill.py's, or the next round's, so none is asked after the last copy."""
    return (placed + k - 1) // ask_every - (placed - 1) // ask_every


def _finish(run: _Run, copies: PodCopies, counts: Counter[str], keep: bool) -> None:
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


def _picks(
    st: WindowCache, fw: Framework, info: PodInfo, cs: CycleState, cursor: CycleCursor,
    to_find: int, most: int, snap: Snapshot,
) -> tuple[Rows, int]:
    """One round read window by window (lap_picks cannot): the rows the next copies' cycles
    pick (at most `most`) until a window reaches a row the round took; the start after."""
    n = len(st.order)
    start = cursor.next_start_index % n
    position, rng = st.position, cursor.rng
    picks: list[int] = []
    taken: list[int] = []  # positions of the round's rows, ascending
    while len(picks) < most:
        win = st.window(fw, info, snap, cs, start, to_find)
        if len(win.rows) == 0 or _reaches(taken, start, win.processed, n):
            break
        row, _ = st.pick(info, win.rows, rng)
        picks.append(row)
        pos = int(position[row])
        taken.insert(bisect_left(taken, pos), pos)
        start = (start + win.processed) % n
    return np.array(picks, dtype=np.intp), start


def _reaches(taken: list[int], start: int, processed: int, n: int) -> bool:
    """Whether a position in `taken` (ascending) lies among the `processed` positions the
    filter stage visits from `start`, wrapping past the last node."""
    if not taken:
        return False
    end = start + processed
    i = bisect_left(taken, start)
    if i < len(taken) and taken[i] < min(end, n):
        return True
    return end > n and taken[0] < end - n
