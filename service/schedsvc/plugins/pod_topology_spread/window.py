"""PodTopologySpread's scores for batching, per window of feasible nodes (WindowScorePlugin).

kube's initPreScoreState depends on the nodes a cycle scores: the hostname weight on their
number, a domain's weight on how many domains they span, and which nodes are ignored. The
counts do not: a node's matching pods, and a domain's total over every eligible node of it.
So the state keeps the counts for every row (domain totals built once, then moved by the
count deltas of the rows whose pods changed: a placement moves its node and its domain only),
and each window's weights are computed from the window, then Score and NormalizeScore run as
in a cycle over exactly those rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ...framework import Rows
from ...framework.podinfo import PodInfo
from ...framework.selector_counts import SelectorCounts
from ...framework.snapshot import BoolArray, IntArray, Snapshot
from ...model import LabelSelector
from .args import LABEL_HOSTNAME
from .common import Constraint, NodeMasks, match_counts, value_ids
from .scoring import (
    ScoreConstraint,
    ScoreState,
    eligible_rows,
    ignored_rows_of,
    normalize,
    score,
)

__all__ = ["WindowConstraint", "WindowState", "window_state", "window_sync", "window_scores"]


@dataclass(slots=True)
class WindowConstraint:
    ids: npt.NDArray[np.int32] | None  # the key's value ids per row; None: no node has it
    per_row: bool  # hostname: the node's own count
    value_ids: npt.NDArray[np.int32]  # absent folded onto empty_id (domains of a window)
    empty_id: int
    size: int
    skew_term: float
    key: int  # which entry of WindowState.selectors counts this constraint's pods (-1: none)
    eligible: BoolArray  # rows counted into their domain's total
    totals: IntArray  # per value id (not per_row)


@dataclass(slots=True)
class WindowState:
    namespace: str
    constraints: tuple[WindowConstraint, ...]
    ignored_rows: BoolArray
    selectors: list[LabelSelector]
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
        counts = match_counts(index, snap, p.namespace, c)
        key = -1
        if c.selector is not None and not c.selector.is_empty:  # else match_counts: zeros
            if c.selector in selectors:
                key = selectors.index(c.selector)
            else:
                key = len(selectors)
                selectors.append(c.selector)
                seen.append(counts.copy())
        vids, empty_id, size = value_ids(col, snap.capacity)
        per_row = c.topology_key == LABEL_HOSTNAME
        eligible = eligible_rows(snap, ignored_rows, masks, c)
        if per_row:
            totals: IntArray = np.zeros(0, dtype=np.int64)
        else:
            totals = np.bincount(
                vids[eligible], weights=counts[eligible], minlength=size
            ).astype(np.int64)
        out.append(WindowConstraint(
            ids=col.ids if col is not None else None, per_row=per_row, value_ids=vids,
            empty_id=empty_id, size=size, skew_term=float(c.max_skew - 1), key=key,
            eligible=eligible, totals=totals,
        ))
    return WindowState(p.namespace, tuple(out), ignored_rows, selectors, seen, index)


def window_sync(state: WindowState, rows: Rows) -> None:
    """Move the domain totals by the count changes of `rows` since the last sync."""
    for key, sel in enumerate(state.selectors):
        live = state.index.counts(state.namespace, sel)
        seen = state.seen[key]
        delta = live[rows].astype(np.int64) - seen[rows]
        if not delta.any():
            continue
        seen[rows] = live[rows]
        for c in state.constraints:
            if c.per_row or c.key != key:
                continue
            ok = c.eligible[rows] & (delta != 0)
            np.add.at(c.totals, c.value_ids[rows[ok]], delta[ok])


def window_scores(state: WindowState, rows: Rows) -> tuple[IntArray, IntArray]:
    """PreScore's weights over `rows`, then Score and NormalizeScore over them."""
    ignored = state.ignored_rows[rows]
    scored = rows[~ignored] if ignored.any() else rows
    out: list[ScoreConstraint] = []
    for c in state.constraints:
        if c.per_row:
            weight = math.log(len(scored) + 2)
            counts: npt.NDArray[np.integer[Any]] = (
                np.zeros(len(state.ignored_rows), dtype=np.int64) if c.key < 0
                else state.index.counts(state.namespace, state.selectors[c.key])
            )
        else:
            domain = np.zeros(c.size, dtype=np.bool_)
            domain[c.value_ids[scored]] = True
            weight = math.log(int(np.count_nonzero(domain)) + 2)
            counts = c.totals
        out.append(ScoreConstraint(c.ids, counts, c.per_row, c.empty_id, weight, c.skew_term))
    st = ScoreState(tuple(out), ignored=ignored, ignored_rows=state.ignored_rows)
    raw = score(st, rows)
    return raw, normalize(st, raw.copy())
