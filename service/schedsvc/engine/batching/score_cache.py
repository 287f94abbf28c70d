"""The scores a batch keeps between pods (where kube keeps SortedScoredNodes).

The cache of a cycle that visited every node (see window_cache.py for a sampled one).
Kube pops the next node of the last cycle's sorted list. We keep that cycle's feasible rows in
visiting order with each plugin's *raw* scores, so a hint renormalizes over the rows that remain
and picks the best exactly as a full cycle would (same ties, same seeded draw), after the rows
that changed have been rescored in place.

A hint must cost little next to a full cycle, so the cache does per pod only what changed: a
node that stops fitting is tombstoned (O(1)), identity-normalized plugins are kept as one
running weighted sum (`fixed`), uniform normalizations are one constant, and the best of
`fixed` with its ties is kept from one pick to the next.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...framework import Rows
from ...framework.podinfo import PodInfo
from ...framework.snapshot import BoolArray, IntArray
from ..runtime import Framework
from ..select_host import best_positions, select_best, select_host

__all__ = ["ScoreCache", "COMPACT_MIN"]

_DEAD = np.int64(-(1 << 62))  # below any weighted sum of scores
COMPACT_MIN = 64  # compact once tombstones outnumber live rows in a cache longer than this
_SPAN = 1 << 40  # above any row number, so rotated keys never collide


def _rotated(rows: Rows, start_row: int) -> Rows:
    """Sort keys of the visiting order: rows ascending, rotated to start at start_row."""
    out: Rows = np.where(rows < start_row, rows + _SPAN, rows)
    return out


def _discard(sorted_list: list[int], item: int) -> None:
    """Remove `item` from an ascending list if there (bisect, not a linear scan)."""
    i = bisect.bisect_left(sorted_list, item)
    if i < len(sorted_list) and sorted_list[i] == item:
        del sorted_list[i]


@dataclass(slots=True)
class ScoreCache:
    signature: bytes
    # feasible rows of the last full cycle, in visiting order; a row that stops fitting stays
    # as a tombstone (live False) until the next compaction, so removing one costs O(1)
    rows: Rows
    raw: dict[str, IntArray]  # plugin -> raw scores aligned with rows
    states: dict[str, Any]  # plugin -> its PreScore state (for normalize)
    skipped: set[str]
    created: float
    start_row: int  # first row the full cycle visited: the visiting order is rows rotated there
    keys: Rows = field(default_factory=lambda: np.zeros(0, dtype=np.intp))  # rotated rows
    live: BoolArray = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))
    nlive: int = 0
    # weighted sum of the raw scores of plugins whose normalize is the identity; _DEAD at
    # tombstones, so the best of it is the best live row
    fixed: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    identity: list[tuple[str, int]] = field(default_factory=list)  # (plugin, weight) in fixed
    # normalize_uniform plugins: [raw value at store, live rows whose raw differs from it];
    # while every count is 0 their normalized scores are one constant, `uniform_total`
    uniform: dict[str, list[int]] = field(default_factory=dict)
    uniform_total: int = 0
    dense: bool = False  # another normalizing plugin: renormalize every row for each pick
    # the best of `fixed` and its positions, ascending, kept up to date by kill and set_one
    # (a run changes one row per pod); None: recompute at the next pick
    ties: list[int] | None = None
    best: int = 0

    @classmethod
    def new(
        cls, fw: Framework, info: PodInfo, signature: bytes, feasible: Rows,
        raw: dict[str, IntArray], states: dict[str, Any], skipped: set[str], created: float,
        start_row: int,
    ) -> ScoreCache:
        n = len(feasible)
        st = cls(
            signature=signature,
            rows=feasible.copy(),
            raw={k: np.array(v, dtype=np.int64) for k, v in raw.items()},
            states=dict(states),
            skipped=set(skipped),
            created=created,
            start_row=start_row,
            keys=_rotated(feasible, start_row),
            live=np.ones(n, dtype=np.bool_),
            nlive=n,
        )
        st.index(fw, info)
        return st

    # ---- where rows are -----------------------------------------------------------------------
    def positions(self, rows: Rows) -> tuple[Rows, BoolArray]:
        """Where `rows` are (or would be inserted), and which are cached.

        The rows are in visiting order: snapshot rows ascending, rotated to start at
        `start_row`; rotating the keys makes that order sorted, so a binary search finds them.
        """
        want = _rotated(rows, self.start_row)
        pos: Rows = np.searchsorted(self.keys, want)
        inside = pos < len(self.rows)
        present: BoolArray = np.zeros(len(rows), dtype=np.bool_)
        present[inside] = self.rows[pos[inside]] == rows[inside]
        return pos, present

    def locate(self, row: int) -> tuple[int, bool]:
        """`positions` for one row, in scalar arithmetic."""
        key = row + _SPAN if row < self.start_row else row
        pos = int(self.keys.searchsorted(key))
        return pos, pos < len(self.rows) and int(self.rows[pos]) == row

    # ---- derived sums -------------------------------------------------------------------------
    def index(self, fw: Framework, info: PodInfo) -> None:
        """Derive the running sums from `raw` over the live rows (after a store or rescore)."""
        self.identity = [
            (p.name, fw.weights[p.name]) for p in fw.score
            if p.name not in self.skipped and p.name in self.raw
            and p.traits.normalize_is_identity
        ]
        self.fixed = self._fixed(slice(None))
        self.fixed[~self.live] = _DEAD
        self.ties = None
        self.uniform, self.uniform_total, self.dense = {}, 0, False
        for p in fw.score:
            if p.name in self.skipped or p.traits.normalize_is_identity:
                continue
            if not p.traits.normalize_uniform or p.name not in self.raw:
                self.dense = True
                continue
            live = self.raw[p.name][self.live]
            base = int(live[0]) if len(live) else 0
            self.uniform[p.name] = [base, int(np.count_nonzero(live != base))]
            one = p.normalize(self.states.get(p.name), info, np.array([base], dtype=np.int64))
            self.uniform_total += int(one[0]) * fw.weights[p.name]

    def _fixed(self, at: Any) -> IntArray:
        """Weighted sum of the identity-normalized plugins' raw scores at `at`."""
        total: IntArray | None = None
        for name, weight in self.identity:
            term = self.raw[name][at] * weight
            total = term if total is None else total + term
        if total is None:
            zeros: IntArray = np.zeros(len(self.rows), dtype=np.int64)[at]
            return zeros
        return total

    def rescore(self, fw: Framework, info: PodInfo, raw: dict[str, IntArray],
                states: dict[str, Any], skipped: set[str]) -> None:
        """Replace every live row's scores (the cache compacted first): a full rescore."""
        self.raw, self.states, self.skipped = raw, dict(states), set(skipped)
        self.index(fw, info)

    # ---- changes ------------------------------------------------------------------------------
    def kill(self, at: Rows) -> None:
        """Tombstone the live rows at positions `at`: they stopped fitting."""
        for name, u in self.uniform.items():
            u[1] -= int(np.count_nonzero(self.raw[name][at] != u[0]))
        if self.ties is not None:
            for p in at[self.fixed[at] == self.best].tolist():
                _discard(self.ties, p)
            if not self.ties:
                self.ties = None
        self.live[at] = False
        self.fixed[at] = _DEAD
        self.nlive -= len(at)

    def kill_one(self, pos: int) -> None:
        """`kill` for one position, in scalar arithmetic."""
        for name, u in self.uniform.items():
            if int(self.raw[name][pos]) != u[0]:
                u[1] -= 1
        ties = self.ties
        if ties is not None and int(self.fixed[pos]) == self.best:
            _discard(ties, pos)
            if not ties:
                self.ties = None
        self.live[pos] = False
        self.fixed[pos] = _DEAD
        self.nlive -= 1

    def set_one(self, pos: int, raw: dict[str, int]) -> None:
        """`upsert` for one cached row (live or a tombstone), in scalar arithmetic."""
        was_live = bool(self.live[pos])
        for name, new in raw.items():
            col = self.raw.get(name)
            if col is None:
                continue
            u = self.uniform.get(name)
            if u is not None:
                if was_live and int(col[pos]) != u[0]:
                    u[1] -= 1
                if new != u[0]:
                    u[1] += 1
            col[pos] = new
        new_fixed = sum(int(self.raw[name][pos]) * weight for name, weight in self.identity)
        ties = self.ties
        if ties is not None:
            if was_live and int(self.fixed[pos]) == self.best:
                _discard(ties, pos)
            if new_fixed > self.best:
                ties[:] = [pos]
                self.best = new_fixed
            elif new_fixed == self.best:
                bisect.insort(ties, pos)
            if not ties:
                self.ties = None
        self.fixed[pos] = new_fixed
        if not was_live:
            self.live[pos] = True
            self.nlive += 1

    def upsert(self, rows: Rows, raw: dict[str, IntArray]) -> None:
        """Set the raw scores of `rows` (which fit), reviving tombstones and inserting rows not
        cached at their visiting place. A row not live comes with every plugin's score but those
        whose PreScore skipped it: such a plugin's inputs changed for every node (a node change),
        so a full rescore follows, and 0 holds the place until then."""
        pos, present = self.positions(rows)
        self.ties = None
        if present.any():
            at = pos[present]
            was_live = self.live[at]
            for name, arr in raw.items():
                col = self.raw.get(name)
                if col is None:
                    continue
                new = arr[present]
                u = self.uniform.get(name)
                if u is not None:
                    u[1] += int(np.count_nonzero(new != u[0]))
                    u[1] -= int(np.count_nonzero((col[at] != u[0]) & was_live))
                col[at] = new
            self.fixed[at] = self._fixed(at)
            self.nlive += int(np.count_nonzero(~was_live))
            self.live[at] = True
        if present.all():
            return
        # in visiting order: rows on both sides of the wrap can share an insertion point, and
        # np.insert keeps the order it is given there
        new = np.flatnonzero(~present)
        keys = _rotated(rows[new], self.start_row)
        order = np.argsort(keys, kind="stable")
        new, keys = new[order], keys[order]
        where = pos[new]
        count = len(new)
        zeros = np.zeros(count, dtype=np.int64)
        values = {name: raw[name][new] if name in raw else zeros for name in self.raw}
        self.rows = np.insert(self.rows, where, rows[new])
        self.keys = np.insert(self.keys, where, keys)
        self.live = np.insert(self.live, where, True)
        self.raw = {name: np.insert(arr, where, values[name]) for name, arr in self.raw.items()}
        for name, u in self.uniform.items():
            u[1] += int(np.count_nonzero(values[name] != u[0]))
        added = np.zeros(count, dtype=np.int64)
        for name, weight in self.identity:
            added += values[name] * weight
        self.fixed = np.insert(self.fixed, where, added)
        self.nlive += count

    def compact(self) -> None:
        """Drop the tombstones."""
        if self.nlive == len(self.rows):
            return
        keep = self.live
        self.ties = None
        self.rows = self.rows[keep]
        self.keys = self.keys[keep]
        self.fixed = self.fixed[keep]
        self.raw = {k: v[keep] for k, v in self.raw.items()}
        self.live = np.ones(len(self.rows), dtype=np.bool_)

    def rotate(self, start_row: int) -> None:
        """Reorder to the visiting order that now starts at `start_row`."""
        self.compact()
        self.start_row = start_row
        self.ties = None
        keys = _rotated(self.rows, start_row)
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        self.rows = self.rows[order]
        self.fixed = self.fixed[order]
        self.raw = {k: v[order] for k, v in self.raw.items()}

    # ---- selectHost ---------------------------------------------------------------------------
    def pick(self, fw: Framework, info: PodInfo, rng: np.random.Generator) -> tuple[int, int]:
        """(row, score): select host over the live rows exactly as a full cycle would over its
        feasible set."""
        if self.nlive == 1:  # kube scores no single feasible node
            return int(self.rows[int(np.flatnonzero(self.live)[0])]), 0
        if not self.dense and not any(u[1] for u in self.uniform.values()):
            # every normalizing plugin is uniform over the live rows: one constant for all,
            # and the best of the fixed sums is kept from one pick to the next
            if self.ties is None:
                best, where = best_positions(self.fixed)
                self.best, self.ties = best, where.tolist()
            pos = select_host(self.ties, rng)
            return int(self.rows[pos]), self.best + self.uniform_total
        self.compact()
        totals = self.fixed.copy()
        for p in fw.score:
            if p.name in self.skipped or p.traits.normalize_is_identity:
                continue
            norm = p.normalize(self.states.get(p.name), info, self.raw[p.name].copy())
            totals += norm * fw.weights[p.name]
        pos, best = select_best(totals, rng)
        return int(self.rows[pos]), best
