"""PodTopologySpread's scores for batching, per window of feasible nodes (WindowScorePlugin).

kube's initPreScoreState depends on the nodes a cycle scores: the hostname weight on their
number, a domain's weight on how many domains they span, and which nodes are ignored. The
counts do not: a node's matching pods, and a domain's total over every eligible node of it.
So the state keeps the counts for every row (domain totals built once, then moved by the
count deltas of the rows whose pods changed: a placement moves its node and its domain only),
and each window's weights are computed from the window, then Score and NormalizeScore run as
in a cycle over exactly those rows: per constraint `cnt * weight + (maxSkew - 1)` where the
node has the key, summed in constraint order, rounded per node (scoring.score's arithmetic,
with a domain's term computed once per domain and gathered).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ...framework import MAX_NODE_SCORE, Rows
from ...framework.podinfo import PodInfo
from ...framework.selector_counts import SelectorCounts
from ...framework.snapshot import BoolArray, IntArray, Snapshot
from ...model import LabelSelector
from .args import LABEL_HOSTNAME
from .common import Constraint, NodeMasks, match_counts, round_score_sum, value_ids
from .scoring import ScoreState, eligible_rows, ignored_rows_of, normalize

__all__ = ["WindowConstraint", "WindowState", "window_state", "window_sync", "window_scores"]


@dataclass(slots=True)
class WindowConstraint:
    per_row: bool  # hostname: the node's own count
    # absent folded onto empty_id (kube reads value ""); intp, as numpy indexes with int32
    # arrays several times slower (each window gathers and scatters by these)
    value_ids: npt.NDArray[np.intp]
    size: int
    skew_term: float
    key: int  # which entry of WindowState.selectors counts this constraint's pods (-1: none)
    # rows with the key (Score adds the constraint's term there only); None: every node has it
    present: BoolArray | None
    eligible: BoolArray  # rows counted into their domain's total
    totals: IntArray  # per value id (not per_row)


@dataclass(slots=True)
class WindowState:
    namespace: str
    # constraints in the pod's order; those whose key no node has are left out (Score skips
    # them, and a weight changes nothing it does not multiply)
    constraints: tuple[WindowConstraint, ...]
    ignored_rows: BoolArray
    any_ignored: bool
    selectors: list[LabelSelector]  # canonical, for SelectorCounts.counts_canonical
    seen: list[npt.NDArray[np.int32]]  # per selector: the counts the totals were built from
    index: SelectorCounts


def window_state(
    pod: PodInfo, snap: Snapshot, rows: Rows, constraints: Sequence[Constraint],
    require_all: bool,
) -> WindowState:
    """Counts over every row of `rows` (all nodes): their domains are every domain."""
    p = pod.pod
    index = SelectorCounts.for_snapshot(snap)
    masks = NodeMasks(p, snap)
    ignored_rows = ignored_rows_of(snap, constraints, require_all)
    selectors: list[LabelSelector] = []
    seen: list[npt.NDArray[np.int32]] = []
    out: list[WindowConstraint] = []
    for c in constraints:
        col = snap.labels.get(c.topology_key)
        if col is None:
            continue
        counts = match_counts(index, snap, p.namespace, c)
        key = -1
        if c.selector is not None and not c.selector.is_empty:  # else match_counts: zeros
            sel = c.selector.canonical()
            if sel in selectors:
                key = selectors.index(sel)
            else:
                key = len(selectors)
                selectors.append(sel)
                seen.append(counts.copy())
        vids, _, size = value_ids(col, snap.capacity)
        per_row = c.topology_key == LABEL_HOSTNAME
        eligible = eligible_rows(snap, ignored_rows, masks, c)
        if per_row:
            totals: IntArray = np.zeros(0, dtype=np.int64)
        else:
            totals = np.bincount(
                vids[eligible], weights=counts[eligible], minlength=size
            ).astype(np.int64)
        present = col.ids >= 0
        out.append(WindowConstraint(
            per_row=per_row, value_ids=vids.astype(np.intp), size=size,
            skew_term=float(c.max_skew - 1), key=key,
            present=None if bool(present[rows].all()) else present, eligible=eligible,
            totals=totals,
        ))
    return WindowState(
        p.namespace, tuple(out), ignored_rows, bool(ignored_rows[rows].any()), selectors, seen,
        index,
    )


def window_sync(state: WindowState, rows: Rows) -> None:
    """Move the domain totals by the count changes of `rows` since the last sync."""
    if len(rows) == 1:  # the last placement: scalar arithmetic
        r = int(rows[0])
        for key, sel in enumerate(state.selectors):
            live = state.index.peek(state.namespace, sel)
            if live is None:
                live = state.index.counts_canonical(state.namespace, sel)
            seen = state.seen[key]
            now = int(live[r])
            d = now - int(seen[r])
            if d == 0:
                continue
            seen[r] = now
            for c in state.constraints:
                if not c.per_row and c.key == key and c.eligible[r]:
                    c.totals[c.value_ids[r]] += d
        return
    for key, sel in enumerate(state.selectors):
        live = state.index.counts_canonical(state.namespace, sel)
        seen = state.seen[key]
        delta = live[rows].astype(np.int64) - seen[rows]
        if not delta.any():
            continue
        seen[rows] = live[rows]
        for c in state.constraints:
            if c.per_row or c.key != key:
                continue
            ok = c.eligible[rows] & (delta != 0)
            # per domain, the sum of its rows' deltas (np.add.at is many times slower)
            moved = np.bincount(c.value_ids[rows[ok]], weights=delta[ok], minlength=c.size)
            c.totals += moved.astype(np.int64)


def window_scores(state: WindowState, rows: Rows) -> tuple[IntArray, IntArray]:
    """PreScore's weights over `rows`, then Score and NormalizeScore over them."""
    ignored: BoolArray | None = None
    scored = rows
    if state.any_ignored:
        ignored = state.ignored_rows[rows]
        if ignored.any():
            scored = rows[~ignored]
        else:
            ignored = None
    raw = _by_row(state, rows, scored)
    if ignored is not None:
        raw[ignored] = 0
        st = ScoreState((), ignored=ignored, ignored_rows=state.ignored_rows)
        return raw, normalize(st, raw.copy())
    lo, hi = int(raw.min()), int(raw.max())
    if hi == 0:
        return raw, np.full(len(rows), MAX_NODE_SCORE, dtype=np.int64)
    norm: IntArray = MAX_NODE_SCORE * (hi + lo - raw) // hi
    return raw, norm


def _by_row(state: WindowState, rows: Rows, scored: Rows) -> IntArray:
    """Score per row: kube's running sum from 0 over the constraints, skipping a node without
    the key (adding 0.0 there changes no sum), rounded. The weights are PreScore's
    topologyNormalizingWeight over the scored rows: their number for hostname, else the
    number of their domains."""
    total: npt.NDArray[np.floating[Any]] | None = None
    for c in state.constraints:
        if c.per_row:
            weight = math.log(len(scored) + 2)
            contrib = _counts(state, c)[rows] * weight + c.skew_term
        else:
            ids = c.value_ids[rows]
            domain = np.zeros(c.size, dtype=np.bool_)
            domain[ids if scored is rows else c.value_ids[scored]] = True
            weight = math.log(int(np.count_nonzero(domain)) + 2)
            contrib = (c.totals * weight + c.skew_term)[ids]
        if c.present is not None:
            contrib = np.where(c.present[rows], contrib, 0.0)
        # (0.0 + a) + b is a + b
        total = contrib if total is None else total + contrib
    if total is None:
        return np.zeros(len(rows), dtype=np.int64)
    return round_score_sum(total)


def _counts(state: WindowState, c: WindowConstraint) -> npt.NDArray[np.int32]:
    """The live per-row counts of the constraint's selector (zeros: an empty selector)."""
    if c.key < 0:
        return np.zeros(len(state.ignored_rows), dtype=np.int32)
    return state.index.counts_canonical(state.namespace, state.selectors[c.key])
