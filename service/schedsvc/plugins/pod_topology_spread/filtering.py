"""PodTopologySpread's PreFilter and Filter (kube's filtering.go), for DoNotSchedule
constraints: a node passes when `matching pods in its domain + selfMatch - global minimum <=
maxSkew`, domains and counts taken from the nodes that carry every constraint's topology key and
pass the constraint's node-inclusion policies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ...framework import Code, FilterResult, PreFilterResult, Rows
from ...framework.podinfo import PodInfo
from ...framework.selector_counts import SelectorCounts
from ...framework.snapshot import BoolArray, Snapshot
from .args import ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH, MAX_INT32
from .common import Constraint, NodeMasks, has_all_keys, match_counts

__all__ = ["FilterConstraint", "FilterState", "pre_filter", "filter_rows"]


@dataclass(frozen=True, slots=True)
class FilterConstraint:
    ids: npt.NDArray[np.int32] | None  # topology value id per row; None: no node has the key
    within_skew: BoolArray  # per value id: matchNum + selfMatch - minMatch <= maxSkew


@dataclass(frozen=True, slots=True)
class FilterState:
    constraints: tuple[FilterConstraint, ...]


def pre_filter(pod: PodInfo, snap: Snapshot, constraints: Sequence[Constraint]) -> PreFilterResult:
    """Per constraint, which topology values are within skew (calPreFilterState)."""
    p = pod.pod
    index = SelectorCounts.for_snapshot(snap)
    masks = NodeMasks(p, snap)
    base = snap.alive & has_all_keys(constraints, snap)
    out: list[FilterConstraint] = []
    for c in constraints:
        col = snap.labels.get(c.topology_key)
        if col is None:
            # every node misses the key: Filter rejects them all before any skew check
            out.append(FilterConstraint(ids=None, within_skew=np.zeros(0, np.bool_)))
            continue
        eligible = base & masks.inclusion(c)
        ids = col.ids[eligible]
        counts = match_counts(index, snap, p.namespace, c)[eligible]
        size = len(col.vocab)
        totals = np.bincount(ids, weights=counts, minlength=size).astype(np.int64)
        present = np.bincount(ids, minlength=size) > 0
        domains = int(present.sum())
        min_match = int(totals[present].min()) if domains else MAX_INT32
        if domains < c.min_domains:
            min_match = 0
        self_match = 1 if c.matches(p.labels) else 0
        within = totals + self_match - min_match <= c.max_skew
        out.append(FilterConstraint(ids=col.ids, within_skew=within))
    return PreFilterResult(state=FilterState(constraints=tuple(out)))


def filter_rows(state: FilterState, rows: Rows) -> FilterResult:
    """Filter over a block: a missing topology key is unresolvable, too much skew is not."""
    n = len(rows)
    decided = np.zeros(n, dtype=np.bool_)
    missing = np.zeros(n, dtype=np.bool_)
    skewed = np.zeros(n, dtype=np.bool_)
    for c in state.constraints:
        if c.ids is None:
            missing |= ~decided
            decided[:] = True
            break
        ids = c.ids[rows]
        absent = ids < 0
        miss = ~decided & absent
        bad = ~decided & ~absent & ~c.within_skew[np.where(absent, 0, ids)]
        missing |= miss
        skewed |= bad
        decided |= miss | bad
    return FilterResult(
        feasible=~decided,
        reasons=[
            (ERR_REASON_NODE_LABEL_NOT_MATCH, missing),
            (ERR_REASON_CONSTRAINTS_NOT_MATCH, skewed),
        ],
        code=Code.UNSCHEDULABLE,
        reason_codes={ERR_REASON_NODE_LABEL_NOT_MATCH: Code.UNRESOLVABLE},
    )
