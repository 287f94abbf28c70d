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

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...framework import SKIP, Rows, ScorePlugin, WindowScorePlugin
from ...framework.podinfo import PodInfo
from ...framework.snapshot import BoolArray, IntArray, Snapshot
from ..runtime import CycleState, Framework
from ..select_host import select_best, select_host
from .array_bytes import array_bytes
from .batch_types import Hint
from .run_memo import RunMemo

__all__ = ["Window", "WindowCache"]

# tombstones `fpos` may hold before it is compacted: a node that stops fitting (every
# placement of a pod that fills its node) costs O(1), not a copy of every feasible position
DEAD_MAX = 64


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
    fpos: Rows  # positions of the feasible rows, ascending, with `dead` tombstones among them
    falive: BoolArray  # per entry of fpos: False for a tombstone (the row stopped fitting)
    frows: Rows  # per entry of fpos: its row (order[fpos]), so a window is one gather less
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
    dead: int = 0  # tombstones in fpos
    # `fixed` of every feasible row while they are all equal (None before the first, or
    # once two differ): with nothing dense or windowed, every window is then one tie
    level: int | None = None
    uneven: bool = False

    # per position: evaluated. The first hint evaluates what its window needs (about a
    # cycle's work), the second every other node at once: a run of two pays about a cycle,
    # a longer one one pass over the nodes (numpy's per-call cost makes many small passes
    # dearer than one)
    known: BoolArray = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))
    complete: bool = False  # every position evaluated
    classified: bool = False  # the plugins sorted into identity / uniform / dense

    @property
    def nlive(self) -> int:
        """Feasible rows; 1 while some are not known yet (pending, or not evaluated)."""
        if self.pending or not self.complete:
            return max(len(self.fpos) - self.dead, 1)
        return len(self.fpos) - self.dead

    def nbytes(self) -> int:
        """The bytes of the arrays the cache owns: its per-row columns and its plugins' window
        states (`order` and shared indexes are the snapshot's and are not counted)."""
        own = [self.position, self.feasible, self.fpos, self.falive, self.frows, self.fixed,
               self.known, *self.raw.values()]
        return sum(a.nbytes for a in own) + sum(array_bytes(s) for _, s, _ in self.windowed)

    def renew(self, now: float) -> None:
        """Every row that changed since it was parked was re-evaluated: as fresh as new."""
        self.created = now

    @classmethod
    def pending_for(cls, signature: bytes, created: float) -> WindowCache:
        """A cache for `signature` to be built (`new`) when the next pod asks for a hint."""
        none, no = np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.bool_)
        return cls(
            signature, created, none, none, no, none, no, none, {}, [],
            np.zeros(0, dtype=np.int64), [], 0, [], [], {}, set(), pending=True,
        )

    @classmethod
    def new(
        cls, fw: Framework, info: PodInfo, snap: Snapshot, signature: bytes, created: float,
    ) -> WindowCache:
        """A cache over the snapshot's nodes, none evaluated yet (see `known`)."""
        st = cls.pending_for(signature, created)
        st._build(fw, info, snap)
        return st

    def _build(self, fw: Framework, info: PodInfo, snap: Snapshot) -> None:
        """A pending cache made one over the snapshot's nodes, none evaluated yet."""
        order = self.order = snap.order
        cap = snap.capacity
        self.position = np.full(cap, -1, dtype=np.intp)
        self.position[order] = np.arange(len(order), dtype=np.intp)
        self.feasible = np.zeros(cap, dtype=np.bool_)
        self.fixed = np.zeros(cap, dtype=np.int64)
        self.known = np.zeros(len(order), dtype=np.bool_)
        self.pending = False
        for name, wp in fw.window_scored.items():  # in the order of fw.score
            state = wp.window_state(info, snap, order)
            if state is not SKIP:
                self.windowed.append((wp, state, fw.weights[name]))

    def hint(
        self, fw: Framework, info: PodInfo, snap: Snapshot, cs: CycleState, start: int,
        to_find: int, rng: np.random.Generator,
    ) -> Hint | None:
        """The sampled cycle's pick from `start` (built first if pending); None: none fits."""
        if self.pending:
            self._build(fw, info, snap)
        win = self.window(fw, info, snap, cs, start, to_find)
        if len(win.rows) == 0:
            return None
        row, score = self.pick(info, win.rows, rng)
        return row, score, win.processed

    def _evaluate(
        self, fw: Framework, info: PodInfo, snap: Snapshot, cs: CycleState, ps: Rows
    ) -> None:
        """Filter the positions `ps` (not evaluated yet) and raw-score their feasible rows."""
        rows = self.order[ps]
        # PreScore of the first scored rows holds for this run's pods (pre_score_assume_stable)
        stable = self.classified and fw.pre_score_assume_stable
        pre = (self.states, self.skipped) if stable else None
        ok, sr = fw.evaluate(cs, info, snap, rows, pre)
        self.feasible[rows] = ok
        self._compact()
        self._set_fpos(np.sort(np.concatenate((self.fpos, ps[ok]))))
        self.known[ps] = True
        self.complete = bool(self.known.all())
        if sr is None:
            return
        if not self.classified:
            self._classify(fw, info, sr.raw, sr.states, sr.skipped)
        self.set_raws(info, rows[ok], sr.raw)

    def _classify(
        self, fw: Framework, info: PodInfo, raw: dict[str, IntArray], states: dict[str, Any],
        skipped: set[str],
    ) -> None:
        """Sort the plugins by how a window normalizes them, from the first scored rows."""
        self.classified = True
        self.states, self.skipped = states, skipped
        cap = len(self.feasible)
        for p in fw.score:
            if p.name in fw.window_scored_names or p.name in skipped or p.name not in raw:
                continue
            self.raw[p.name] = np.zeros(cap, dtype=np.int64)
            arr, weight = raw[p.name], fw.weights[p.name]
            if p.traits.normalize_is_identity:
                self.identity.append((p.name, weight))
            elif (
                p.traits.normalize_uniform and p.traits.score_is_static
                and bool((arr == arr[0]).all())
            ):
                # one value on every row so far: one constant for any window
                self.uniform.append((p, int(arr[0]), weight))
            else:
                self.dense.append((p, weight))
        self._uniform_constant(info)

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
        fpos = self.fpos
        i = int(fpos.searchsorted(pos))
        if not ok:
            self.falive[i] = False
            self.dead += 1
            if self.dead > DEAD_MAX:
                self._compact()
        elif i < len(fpos) and int(fpos[i]) == pos:  # its tombstone comes back
            self.falive[i] = True
            self.dead -= 1
        else:
            self.fpos = np.insert(fpos, i, pos)
            self.falive = np.insert(self.falive, i, True)
            self.frows = np.insert(self.frows, i, row)

    def _compact(self) -> None:
        """Drop the tombstones from fpos."""
        if self.dead:
            self._set_fpos(self.fpos[self.falive])

    def _set_fpos(self, fpos: Rows) -> None:
        """fpos, none of them a tombstone."""
        self.fpos = fpos
        self.frows = self.order[fpos]
        self.falive = np.ones(len(fpos), dtype=np.bool_)
        self.dead = 0

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
        if total != self.level:
            self.uneven = True

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
        if not self.uneven and len(rows):
            if self.level is None:
                self.level = int(total[0])
            if bool((total != self.level).any()):
                self.uneven = True
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
        re-filter, rescore those that fit. Rows not evaluated yet are evaluated when reached;
        their pods still move the kept counts."""
        self.pods_changed(snap, rows)
        rows = rows[self.known[self.position[rows]]]  # not evaluated yet: when reached
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
        flipped = rows[feasible != was]
        if len(flipped):
            self.feasible[flipped] = ~self.feasible[flipped]
            self._set_fpos(np.flatnonzero(self.feasible[self.order]))
        exclude = fw.window_scored_names
        for part, dyn in ((was & feasible, True), (~was & feasible, False)):
            if part.any():
                sr = fw.run_score(
                    info, snap, rows[part], dynamic_only=dyn, raw_only=True, exclude=exclude
                )
                if not self.classified:  # the first feasible rows (dyn is False for them)
                    self._classify(fw, info, sr.raw, sr.states, sr.skipped)
                self.set_raws(info, rows[part], sr.raw)
        return True

    # ---- the sampled cycle a hint stands for --------------------------------------------------
    def window(
        self, fw: Framework, info: PodInfo, snap: Snapshot, cs: CycleState, start: int,
        to_find: int,
    ) -> Window:
        """The first `to_find` feasible rows from position `start`, and the nodes the filter
        stage visits to find them (all when there are fewer)."""
        self._reach(fw, info, snap, cs, start, to_find)
        fpos, rows, alive, dead, n = self.fpos, self.frows, self.falive, self.dead, len(self.order)
        m = len(fpos)
        k = int(fpos.searchsorted(start))
        if m - dead < to_find:
            w = np.concatenate((rows[k:], rows[:k])) if k else rows
            if dead:
                w = w[np.concatenate((alive[k:], alive[:k])) if k else alive]
            return Window(w, n)
        # the next to_find + dead entries (all of them at most) hold to_find live ones
        end = k + min(to_find + dead, m)
        if end <= m:
            w = rows[k:end]
            if dead:
                w = w[alive[k:end]][:to_find]
        else:
            w = np.concatenate((rows[k:], rows[: end - m]))
            if dead:
                w = w[np.concatenate((alive[k:], alive[: end - m]))][:to_find]
        last = int(self.position[w[-1]])  # from k on >= start, wrapped ones below it
        return Window(w, last - start + 1 if last >= start else last + n - start + 1)

    def _reach(
        self, fw: Framework, info: PodInfo, snap: Snapshot, cs: CycleState, start: int,
        to_find: int,
    ) -> None:
        """Make the window from `start` known: the first time, the positions from `start` on
        (wrapping, in pieces of 2 * to_find) until `to_find` feasible are found; after that,
        every position not known yet, at once."""
        if self.complete:
            return
        n = len(self.order)
        if self.known.any():
            self._evaluate(fw, info, snap, cs, np.flatnonzero(~self.known))
            return
        piece = max(2 * to_find, 64)
        found, pos = 0, start
        while found < to_find and not self.complete:
            ps = (pos + np.arange(min(piece, n - int(self.known.sum())))) % n
            before = len(self.fpos) - self.dead
            self._evaluate(fw, info, snap, cs, np.sort(ps))
            found += len(self.fpos) - self.dead - before
            pos = (pos + len(ps)) % n

    def pick(self, info: PodInfo, rows: Rows, rng: np.random.Generator) -> tuple[int, int]:
        """(row, score): PreScore-free Score, NormalizeScore, weights and selectHost over the
        window, as the cycle over exactly these feasible rows."""
        if len(rows) == 1:  # kube scores no single feasible node
            return int(rows[0]), 0
        if not self.uneven and self.level is not None and not self.dense and not self.windowed:
            # every total is `level`: the draw among them all, without building them
            return int(rows[select_host(range(len(rows)), rng)]), self.level + self.constant
        totals = self.fixed[rows]  # `constant` is added to the best alone: it moves no tie
        for p, weight in self.dense:
            norm = p.normalize(self.states.get(p.name), info, self.raw[p.name][rows])
            totals = totals + norm * weight
        for wp, state, weight in self.windowed:
            _, norm = wp.window_scores(state, rows)
            totals = totals + norm * weight
        pos, best = select_best(totals, rng)
        return int(rows[pos]), best + self.constant
