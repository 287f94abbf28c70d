"""PodTopologySpread's PreScore, Score and NormalizeScore (kube's scoring.go), for
ScheduleAnyway constraints: per node, the sum over constraints of
`count * log(domains + 2) + (maxSkew - 1)`, rounded, then normalized so that fewer matching pods
score higher. Counts per row come from the SelectorCounts index; per-domain totals are one
bincount over the topology key's label column, and Score is a gather over value ids."""

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
from .args import LABEL_HOSTNAME
from .common import Constraint, NodeMasks, go_round, has_all_keys, match_counts, value_ids

__all__ = [
    "ScoreConstraint", "ScoreState", "pre_score", "score", "normalize", "ignored_rows_of",
    "eligible_rows",
]


@dataclass(frozen=True, slots=True)
class ScoreConstraint:
    ids: npt.NDArray[np.int32] | None  # None: no node has the key (never contributes)
    counts: npt.NDArray[np.integer[Any]]  # hostname: per row; otherwise per mapped value id
    per_row: bool
    empty_id: int  # where a row without the key is counted (kube reads it as value "")
    weight: float
    skew_term: float  # float64(maxSkew - 1)


@dataclass(frozen=True, slots=True)
class ScoreState:
    constraints: tuple[ScoreConstraint, ...]
    ignored: BoolArray  # aligned with the feasible rows handed to pre_score
    ignored_rows: BoolArray  # over all rows


def pre_score(
    pod: PodInfo, snap: Snapshot, rows: Rows, constraints: Sequence[Constraint],
    require_all: bool,
) -> ScoreState:
    """initPreScoreState over the feasible `rows`: domains are their topology values, and
    `require_all` (not system defaulting) ignores nodes missing any constraint's key."""
    p = pod.pod
    index = SelectorCounts.for_snapshot(snap)
    masks = NodeMasks(p, snap)
    ignored_rows = ignored_rows_of(snap, constraints, require_all)
    ignored = ignored_rows[rows]
    scored_rows = rows[~ignored]
    out: list[ScoreConstraint] = []
    for c in constraints:
        col = snap.labels.get(c.topology_key)
        counts = match_counts(index, snap, p.namespace, c)
        skew_term = float(c.max_skew - 1)
        if c.topology_key == LABEL_HOSTNAME:
            out.append(
                ScoreConstraint(
                    ids=col.ids if col is not None else None,
                    counts=counts.astype(np.int64),
                    per_row=True,
                    empty_id=0,
                    weight=math.log(len(scored_rows) + 2),
                    skew_term=skew_term,
                )
            )
            continue
        ids, empty_id, size = value_ids(col, snap.capacity)
        # domains: the values of the feasible, not ignored nodes
        domain = np.zeros(size, dtype=np.bool_)
        domain[ids[scored_rows]] = True
        eligible = eligible_rows(snap, ignored_rows, masks, c) & domain[ids]
        totals = np.bincount(ids[eligible], weights=counts[eligible], minlength=size)
        out.append(
            ScoreConstraint(
                ids=col.ids if col is not None else None,
                counts=totals.astype(np.int64),
                per_row=False,
                empty_id=empty_id,
                weight=math.log(int(domain.sum()) + 2),
                skew_term=skew_term,
            )
        )
    return ScoreState(constraints=tuple(out), ignored=ignored, ignored_rows=ignored_rows)


def ignored_rows_of(
    snap: Snapshot, constraints: Sequence[Constraint], require_all: bool
) -> BoolArray:
    """Rows PreScore ignores: without every key, when all are required."""
    if require_all:
        out: BoolArray = ~has_all_keys(constraints, snap)
        return out
    return np.zeros(snap.capacity, dtype=np.bool_)


def eligible_rows(
    snap: Snapshot, ignored_rows: BoolArray, masks: NodeMasks, c: Constraint
) -> BoolArray:
    """Rows whose matching pods count towards their domain's total (before the domain cut)."""
    out: BoolArray = snap.alive & ~ignored_rows & masks.inclusion(c)
    return out


def score(state: ScoreState, rows: Rows) -> IntArray:
    total = np.zeros(len(rows), dtype=np.float64)
    for c in state.constraints:
        if c.ids is None:
            continue
        ids = c.ids[rows]
        present = ids >= 0
        if c.per_row:
            cnt = c.counts[rows]
        else:
            cnt = c.counts[np.where(present, ids, c.empty_id)]
        contrib = cnt.astype(np.float64) * c.weight + c.skew_term
        total = np.where(present, total + contrib, total)
    out = go_round(total)
    out[state.ignored_rows[rows]] = 0
    return out


def normalize(state: ScoreState, scores: IntArray) -> IntArray:
    """Fewer matching pods score higher; ignored nodes score 0. `scores` are in the order of
    the rows handed to pre_score."""
    if scores.size == 0:
        return scores
    ignored = state.ignored
    if ignored.shape != scores.shape:
        ignored = np.zeros(scores.shape, dtype=np.bool_)
    valid = scores[~ignored]
    out = np.zeros_like(scores)
    if valid.size == 0:
        return out
    lo, hi = int(valid.min()), int(valid.max())
    if hi == 0:
        out[~ignored] = MAX_NODE_SCORE
        return out
    out[~ignored] = MAX_NODE_SCORE * (hi + lo - valid) // hi
    return out
