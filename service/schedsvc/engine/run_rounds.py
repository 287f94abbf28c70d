"""Pods of one shape placed in rounds from their run's WindowCache: the choices their cycles
make one by one, without paying a cycle per pod (a fill's copies, simulate/fill_run.py; a pod
group's members, engine/pod_group_rounds.py).

Once a pod was placed from a complete WindowCache (every node's verdict and raw scores for
its signature) and nothing else changed (batching/continued_run.py), the next cycle of a pod of that
shape (equal in every field but uid and name) is the cache's pick over its window: the first
`to_find` feasible rows from the start index, normalized and drawn from as that sampled cycle
would (batching's own claim, held by its tests). A row's verdict and scores for such a pod
read that row alone, and only the rows that took pods changed. So a round picks pod after
pod from the cache as it stands (a lap at once, batching/window_lap.py, or one by one), moving the
start index as each cycle would, until a pod's window reaches (its filter stage would visit)
a row an earlier pod of the round took: that window would read a stale row. The round's pods
are then assumed and their rows re-filtered and rescored, and the next round begins. Each
pick draws from the cursor's generator as its cycle would, so the placements, their scores,
the generator, the start index and the cycle counter end as the pods' cycles leave them.

When every plugin that reads usage for the pod reads only its row's usage columns
(PluginTraits.row_usage_only), a rescored row's result is looked up by those columns (rows in
equal states share it) and the pods' records, which nothing in the run reads, may come later
(`add_records` None); otherwise each round records its pods before its rows are rescored.

A pod with volumes (Reserve binds its claims) or host ports never comes here; nominated pods
and rescoring turned off end a run before (continued_run). maxBatchAge is read once per
round, where each hinted cycle reads it once: a run past its age stops at the round's start.
The rounds' own filtering and scoring report no extension point, as the hinted cycles they
stand for report none. After the rounds (`end_rounds`) the batch state is the one
the pods' cycles leave (run_continued); a caller that stops midway with an error invalidates
the batches (`Rounds.abandon`)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..framework import Rows
from ..framework.podinfo import PodInfo
from .batching.continued_run import continued_run, run_continued
from .batching.run_memo import RunMemo
from .batching.window_cache import WindowCache
from .batching.window_lap import UsageMemo, lap_picks, recheck_by_usage, recheck_taken
from .cycle_context import CURRENT, CycleCursor, CycleRecord
from .cycle_env import CycleEnv
from .runtime import CycleState, Framework

__all__ = ["Round", "Rounds", "start_rounds"]


@dataclass(slots=True)
class Round:
    """One round's picks, in cycle order: their rows, each cycle's score (the pick's total,
    as select_host reports it), and the start index after the last."""

    rows: Rows
    scores: list[int]
    start: int


@dataclass(slots=True)
class Rounds:
    """One continued run: what its rounds read, and the rows they took, in placement order."""

    env: CycleEnv
    cursor: CycleCursor
    fw: Framework
    info: PodInfo  # the run's pod (the last placed): every pod of the rounds has its shape
    st: WindowCache
    cs: CycleState
    memo: UsageMemo | None  # usage-only: rescored rows by their usage (module docstring)
    memo_run: RunMemo | None = None  # the batch's: its kept PreScore (pre_scored)
    # whether the next pod's hint, rechecking the pick before it, runs PreScore and Score
    # (run_score, which reports them) rather than score_one; known for the first pod once
    # start_rounds rechecked its last pick, else None (worked out when its round is taken)
    rescores_next: bool | None = None
    taken: list[int] = field(default_factory=list)

    def picks(self, most: int) -> Round:
        """The rows the next pods' cycles pick, at most `most`, as one round: a lap at once
        when lap_picks can read it, else window by window; nothing assumed yet. No rows:
        nothing fits, or the cache has outlived maxBatchAge (read once per round); the next
        pod's own cycle says which."""
        cursor, st, batch = self.cursor, self.st, self.env.batch[self.fw.name]
        if batch.clock() > st.created + batch.max_age:
            return Round(np.zeros(0, dtype=np.intp), [], cursor.next_start_index)
        _, to_find = self.env.sampling[self.fw.name]
        with _unreported():
            lap = lap_picks(
                st, cursor.next_start_index % len(st.order), to_find, most, cursor.rng
            )
            if lap is None:
                return _window_picks(self, to_find, most)
        rows, best, start = lap
        scores = [0] * len(rows) if to_find == 1 else (best + st.constant).tolist()
        return Round(rows, scores, start)

    def take(
        self, rnd: Round, add_records: Callable[[list[int]], None] | None
    ) -> list[bool]:
        """The round's pods assumed: their usage, their records (`add_records`, given the
        rows; None defers them, allowed only when rescoring goes by usage), their rows
        re-filtered and rescored, the cursor moved as their cycles move it. Per pod, whether
        its hint's recheck of the pick before it would run (and report) PreScore and Score
        (recheck_last: when that row still fits and no PreScore is kept yet, which the first
        such recheck keeps when it holds across the run's assumes)."""
        with _unreported():
            # the pick before the round's first pod may be picked again in this round: its
            # recheck reads it as it is now
            first = self.rescores_next
            if first is None:
                first = self._rescores(self.taken[-1])
            self._take(rnd, add_records)
            rows = self.taken[len(self.taken) - len(rnd.rows):]
            out = [first, *(self._rescores(r) for r in rows[:-1])]
        self.rescores_next = None
        return out

    def _rescores(self, row: int) -> bool:
        """Whether the hint rechecking `row` (a pick of the run, fitting when picked, its pods
        as they are now) runs PreScore and Score; if so, the PreScore it would keep is kept."""
        memo = self.memo_run
        if not bool(self.st.feasible[row]) or (memo is not None and memo.pre_scored is not None):
            return False
        fw = self.fw
        if memo is not None and fw.pre_score_assume_stable:
            sr = fw.run_score(
                self.info, self.env.snapshot, np.array([row], dtype=np.intp),
                dynamic_only=True, raw_only=True, exclude=fw.window_scored_names,
            )
            memo.pre_scored = (sr.states, sr.skipped)
        return True

    def _take(self, rnd: Round, add_records: Callable[[list[int]], None] | None) -> None:
        snap, st, fw, info, cs = self.env.snapshot, self.st, self.fw, self.info, self.cs
        picks = rnd.rows
        snap.account_copies(picks, info)  # the assumes' usage (no Reserve: no volumes)
        rows = picks.tolist()
        self.taken.extend(rows)
        if add_records is not None:
            add_records(rows)
        if self.memo is not None:
            recheck_by_usage(st, fw, info, snap, cs, picks, self.memo)
        else:
            if add_records is None:
                raise ValueError("records are deferred only when rescoring goes by usage")
            if fw.pre_score_assume_stable:
                recheck_taken(st, fw, info, snap, cs, picks)
            else:
                st.recheck_rows(fw, info, snap, cs, picks, -1, True)
        self.cursor.cycle += len(rows)
        self.cursor.next_start_index = rnd.start

    def end(self) -> None:
        """The batch state the pods' cycles leave (continued_run.run_continued)."""
        if self.taken:
            env = self.env
            run_continued(
                env.batches, env.batch[self.fw.name], env.snapshot, self.cursor.cycle,
                self.taken,
            )

    def abandon(self) -> None:
        """An error stopped the rounds midway: no cached evaluation can be trusted."""
        self.env.batches.invalidate()


def start_rounds(env: CycleEnv, cursor: CycleCursor, fw: Framework) -> Rounds | None:
    """The run of the pod last placed (cursor.last_info), ready for rounds, its last pick
    rechecked as the next hint rechecks it (recheck_last); None when it cannot continue from
    its cache (continued_run), or its pod has volumes or host ports."""
    snap, info, batch = env.snapshot, cursor.last_info, env.batch[fw.name]
    cont = continued_run(batch, snap, cursor.cycle)
    if cont is None or info is None or info.pod.volumes or info.host_ports:
        return None
    st, cs, last = cont
    if batch.clock() > st.created + batch.max_age:
        return None  # the next pod's hint flushes it (expired)
    memo = UsageMemo.of(fw, cs, st) if fw.pre_score_assume_stable else None
    run = Rounds(env, cursor, fw, info, st, cs, memo)
    memo_run = run.memo_run = batch._run
    kept = memo_run is not None and memo_run.pre_scored is not None
    try:
        with _unreported():  # the first pod's hint would report it: its record says so
            st.recheck_last(fw, info, snap, cs, last, True, memo_run)
    except BaseException:
        run.abandon()
        raise
    run.rescores_next = bool(st.feasible[last]) and not kept
    return run


@contextmanager
def _unreported() -> Iterator[None]:
    """The rounds' own filtering and scoring stand for hinted cycles, which report no
    extension point (their rechecks run filter_one and score_one): what the plugins run
    here reports into a record nobody reads."""
    held = CURRENT.rec
    CURRENT.rec = CycleRecord("", "", 0.0)
    try:
        yield
    finally:
        CURRENT.rec = held


def _window_picks(run: Rounds, to_find: int, most: int) -> Round:
    """One round read window by window (lap_picks cannot): the rows the next pods' cycles
    pick (at most `most`) until a window reaches a row the round took; the start after."""
    st, fw, info, cs, cursor = run.st, run.fw, run.info, run.cs, run.cursor
    snap = run.env.snapshot
    n = len(st.order)
    start = cursor.next_start_index % n
    position, rng = st.position, cursor.rng
    picks: list[int] = []
    scores: list[int] = []
    taken: list[int] = []  # positions of the round's rows, ascending
    while len(picks) < most:
        win = st.window(fw, info, snap, cs, start, to_find)
        if len(win.rows) == 0 or _reaches(taken, start, win.processed, n):
            break
        row, score = st.pick(info, win.rows, rng)
        picks.append(row)
        scores.append(score)
        pos = int(position[row])
        taken.insert(bisect_left(taken, pos), pos)
        start = (start + win.processed) % n
    return Round(np.array(picks, dtype=np.intp), scores, start)


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
