"""What a batch keeps when a hint must stand for a sampled cycle, or for scores that reach
across nodes (soft spreading).

A cycle under percentageOfNodesToScore scores the first N feasible nodes in visiting order from
the start index, normalizes over them, picks, and advances the start index by the nodes it
visited. The cache keeps every node's feasibility and raw scores (one evaluation over all
nodes per run; afterwards only the rows that change are re-evaluated), so a hint reads the
window of the cycle it replaces instead of filtering: the positions of the feasible rows in
visiting order, a binary search for the start index, N of them with wrap-around. Scores are
normalized over the window exactly as that cycle would, and plugins whose PreScore depends on
the scored set (window_scored) score the window from their own kept state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..framework import SKIP, Rows, ScorePlugin, WindowScorePlugin
from ..framework.podinfo import PodInfo
from ..framework.snapshot import BoolArray, IntArray, Snapshot
from .run_memo import RunMemo
from .runtime import CycleState, Framework
from .select_host import best_positions, select_host

__all__ = ["Window", "WindowCache"]


@dataclass(slots=True)
class Window:
    rows: Rows  # the cycle's feasible nodes, in its visiting order
    processed: int  # nodes that cycle visits: how far the start index moves


@dataclass(slots=True)
class WindowCache:
    signature: bytes
    created: float
    order: Rows  # the snapshot's visiting order the cache was built on
    position: Rows  # per row: its position in `order` (-1: not a node)
    feasible: BoolArray  # per row
    fpos: Rows  # positions of the feasible rows, ascending
    raw: dict[str, IntArray]  # per row (valid where feasible), of the plugins not window_scored
    identity: list[tuple[str, int]]  # (plugin, weight) summed in `fixed`
    fixed: IntArray  # per row: weighted sum of the identity-normalized plugins' raw scores
    # uniform plugins whose raw score is one value on every feasible row: (plugin, value,
    # weight); their normalized score is one constant for any window, `constant` in all
    uniform: list[tuple[ScorePlugin, int, int]]
    constant: int
    dense: list[tuple[ScorePlugin, int]]  # normalized over each window from `raw`
    windowed: list[tuple[WindowScorePlugin, Any, int]]  # (plugin, its state, weight)
    states: dict[str, Any]
    skipped: set[str]
    pending: bool = False  # stored, not yet built (see pending_for)

    @property
    def nlive(self) -> int:
        return 1 if self.pending else len(self.fpos)

    @classmethod
    def pending_for(cls, signature: bytes, created: float) -> WindowCache:
        """A cache for `signature` to be built (`new`) when the next pod asks for a hint."""
        none: Rows = np.zeros(0, dtype=np.intp)
        return cls(
            signature=signature, created=created, order=none, position=none,
            feasible=np.zeros(0, dtype=np.bool_), fpos=none, raw={}, identity=[],
            fixed=np.zeros(0, dtype=np.int64), uniform=[], constant=0, dense=[], windowed=[],
            states={}, skipped=set(), pending=True,
        )

    @classmethod
    def new(
        cls, fw: Framework, info: PodInfo, snap: Snapshot, cs: CycleState, signature: bytes,
        created: float,
    ) -> WindowCache:
        """Filter every node and raw-score the feasible ones (the cost of one cycle at 100 %)."""
        order = snap.order
        cap = snap.capacity
        position = np.full(cap, -1, dtype=np.intp)
        position[order] = np.arange(len(order), dtype=np.intp)
        feasible = np.zeros(cap, dtype=np.bool_)
        feasible[order] = fw.run_filter(cs, info, snap, order, diagnose=False).feasible
        fpos = np.flatnonzero(feasible[order]).astype(np.intp)
        rows = order[fpos]
        exclude = fw.window_scored_names
        sr = fw.run_score(info, snap, rows, raw_only=True, exclude=exclude)
        raw: dict[str, IntArray] = {}
        for name, arr in sr.raw.items():
            col = np.zeros(cap, dtype=np.int64)
            col[rows] = arr
            raw[name] = col
        st = cls(
            signature=signature, created=created, order=order, position=position,
            feasible=feasible, fpos=fpos, raw=raw, identity=[],
            fixed=np.zeros(cap, dtype=np.int64), uniform=[], constant=0, dense=[],
            windowed=[], states=sr.states, skipped=sr.skipped,
        )
        for p in fw.score:
            weight = fw.weights[p.name]
            if p.name in exclude:
                state = fw.window_scored[p.name].window_state(info, snap, order)
                if state is not SKIP:
                    st.windowed.append((fw.window_scored[p.name], state, weight))
                continue
            if p.name in sr.skipped:
                continue
            col = raw[p.name]
            if p.traits.normalize_is_identity:
                st.identity.append((p.name, weight))
                st.fixed += col * weight
            elif (
                p.traits.normalize_uniform and p.traits.score_is_static and len(rows)
                and bool((col[rows] == col[rows[0]]).all())
            ):
                st.uniform.append((p, int(col[rows[0]]), weight))
            else:
                st.dense.append((p, weight))
        st._uniform_constant(info)
        return st

    def _uniform_constant(self, info: PodInfo) -> None:
        """Equal raw scores normalize to one value however many there are (normalize_uniform)."""
        self.constant = 0
        for p, value, weight in self.uniform:
            one = p.normalize(self.states.get(p.name), info, np.array([value], dtype=np.int64))
            self.constant += int(one[0]) * weight

    # ---- changes ------------------------------------------------------------------------------
    def set_feasible(self, row: int, ok: bool) -> None:
        if bool(self.feasible[row]) == ok:
            return
        self.feasible[row] = ok
        pos = int(self.position[row])
        i = int(self.fpos.searchsorted(pos))
        self.fpos = np.insert(self.fpos, i, pos) if ok else np.delete(self.fpos, i)

    def set_raw(self, row: int, raw: dict[str, int]) -> None:
        """New raw scores of one feasible row's dynamic plugins (kept uniform ones are static)."""
        cols = self.raw
        for name, value in raw.items():
            col = cols.get(name)
            if col is not None:
                col[row] = value
        total = 0
        for name, weight in self.identity:
            total += int(cols[name][row]) * weight
        self.fixed[row] = total

    def set_raws(self, info: PodInfo, rows: Rows, raw: dict[str, IntArray]) -> None:
        """New raw scores of feasible rows; a row new to the cache comes with its static scores
        too, which may break a uniform plugin's one value: it is normalized per window then."""
        for name, arr in raw.items():
            col = self.raw.get(name)
            if col is not None:
                col[rows] = arr
        total = np.zeros(len(rows), dtype=np.int64)
        for name, weight in self.identity:
            total += self.raw[name][rows] * weight
        self.fixed[rows] = total
        broken = [u for u in self.uniform if u[0].name in raw and (raw[u[0].name] != u[1]).any()]
        if broken:
            self.uniform = [u for u in self.uniform if u not in broken]
            self.dense += [(p, weight) for p, _, weight in broken]
            self._uniform_constant(info)

    def pods_changed(self, snap: Snapshot, rows: Rows) -> None:
        """The pods on `rows` changed: window_scored plugins move their kept counts."""
        for p, state, _ in self.windowed:
            p.window_sync(state, snap, rows)

    # ---- the rescore path ---------------------------------------------------------------------
    def recheck_last(
        self, fw: Framework, info: PodInfo, snap: Snapshot, cs: CycleState, row: int,
        rescore: bool, memo: RunMemo | None,
    ) -> bool:
        """The last chosen row, in scalar arithmetic: it holds the last pod (unless a dry
        run). False when it still fits but rescoring is off (kube's node_not_full)."""
        was = bool(self.feasible[row])
        fits = fw.filter_one(cs, info, snap, row, dynamic_only=was)
        if fits and not rescore:
            return False
        if fits != was:
            self.set_feasible(row, fits)
        exclude = fw.window_scored_names
        if fits:
            if was and memo is not None and memo.pre_scored is not None:
                self.set_raw(row, fw.score_one(info, snap, row, memo.pre_scored, exclude))
            else:
                one = np.array([row], dtype=np.intp)
                sr = fw.run_score(
                    info, snap, one, dynamic_only=was, raw_only=True, exclude=exclude
                )
                if was and memo is not None and fw.pre_score_assume_stable:
                    memo.pre_scored = (sr.states, sr.skipped)
                self.set_raws(info, one, sr.raw)
        if self.windowed:
            self.pods_changed(snap, np.array([row], dtype=np.intp))
        return True

    def recheck_rows(
        self, fw: Framework, info: PodInfo, snap: Snapshot, cs: CycleState, rows: Rows,
        last: int, rescore: bool,
    ) -> bool:
        """The last chosen row and every row an UpdateSnapshot touched (their pods changed):
        re-filter, rescore those that fit."""
        was = self.feasible[rows]
        feasible = np.zeros(len(rows), dtype=np.bool_)
        for part, dyn in ((was, True), (~was, False)):
            if part.any():
                # a row that fitted changed only in usage: it passes every static filter
                feasible[part] = fw.run_filter(
                    cs, info, snap, rows[part], dynamic_only=dyn, diagnose=False
                ).feasible
        if not rescore and bool(feasible[rows == last].any()):
            return False
        for r, ok in zip(rows.tolist(), feasible.tolist(), strict=True):
            self.set_feasible(r, ok)
        exclude = fw.window_scored_names
        for part, dyn in ((was & feasible, True), (~was & feasible, False)):
            if part.any():
                sr = fw.run_score(
                    info, snap, rows[part], dynamic_only=dyn, raw_only=True, exclude=exclude
                )
                self.set_raws(info, rows[part], sr.raw)
        self.pods_changed(snap, rows)
        return True

    # ---- the sampled cycle a hint stands for --------------------------------------------------
    def window(self, start: int, to_find: int) -> Window:
        """The first `to_find` feasible rows from position `start`, and the nodes the filter
        stage visits to find them (all when there are fewer)."""
        fpos, n = self.fpos, len(self.order)
        m = len(fpos)
        k = int(fpos.searchsorted(start))
        if m < to_find:
            w = np.concatenate((fpos[k:], fpos[:k])) if k else fpos
            return Window(self.order[w], n)
        end = k + to_find
        if end <= m:
            w = fpos[k:end]
            return Window(self.order[w], int(w[-1]) - start + 1)
        w = np.concatenate((fpos[k:], fpos[: end - m]))
        return Window(self.order[w], int(w[-1]) + n - start + 1)

    def pick(self, info: PodInfo, rows: Rows, rng: np.random.Generator) -> tuple[int, int]:
        """(row, score): PreScore-free Score, NormalizeScore, weights and selectHost over the
        window, as the cycle over exactly these feasible rows."""
        if len(rows) == 1:  # kube scores no single feasible node
            return int(rows[0]), 0
        totals = self.fixed[rows]  # `constant` is added to the best alone: it moves no tie
        for p, weight in self.dense:
            norm = p.normalize(self.states.get(p.name), info, self.raw[p.name][rows])
            totals = totals + norm * weight
        for wp, state, weight in self.windowed:
            _, norm = wp.window_scores(state, rows)
            totals = totals + norm * weight
        best, ties = best_positions(totals)
        return int(rows[select_host(ties, rng)]), best + self.constant
