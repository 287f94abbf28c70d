"""What filtering and scoring share (kube's common.go): constraints as the plugin uses them,
node-inclusion masks over every row, and per-row counts of matching pods."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ...framework.selector_counts import SelectorCounts
from ...framework.snapshot import BoolArray, IntArray, LabelColumn, Snapshot
from ...model import LabelSelector, Pod, TopologySpreadConstraint
from ..selectors import required_node_affinity
from .args import HONOR

__all__ = [
    "Constraint",
    "merge_match_label_keys",
    "convert",
    "constraints_for",
    "match_counts",
    "NodeMasks",
    "has_all_keys",
    "go_round",
    "round_score_sum",
    "value_ids",
]

_DO_NOT_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True, slots=True)
class Constraint:
    """common.go topologySpreadConstraint: the selector merged, defaults resolved."""

    max_skew: int
    topology_key: str
    selector: LabelSelector | None  # None is kube's labels.Nothing(): matches no pod
    min_domains: int
    honor_affinity: bool
    honor_taints: bool

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.selector is not None and self.selector.matches(labels)


def merge_match_label_keys(
    selector: LabelSelector | None, keys: Sequence[str], labels: Mapping[str, str]
) -> LabelSelector | None:
    """mergeLabelSetWithSelector: the pod's values of `keys` ANDed with the selector.

    A nil selector has no requirements to carry over, so the merge is the label set alone.
    """
    extra = tuple((k, labels[k]) for k in keys if k in labels)
    if not extra:
        return selector
    if selector is None:
        return LabelSelector(match_labels=extra)
    return LabelSelector(
        match_labels=extra + selector.match_labels,
        match_expressions=selector.match_expressions,
    )


def convert(
    c: TopologySpreadConstraint, selector: LabelSelector | None
) -> Constraint:
    return Constraint(
        max_skew=c.max_skew,
        topology_key=c.topology_key,
        selector=selector,
        min_domains=c.min_domains if c.min_domains is not None else 1,
        honor_affinity=c.node_affinity_policy == HONOR,
        honor_taints=c.node_taints_policy == HONOR,
    )


# ---- node masks over every row of the snapshot ------------------------------------------------
def required_node_affinity_mask(pod: Pod, snap: Snapshot) -> BoolArray:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match for every row (parse errors: no match)."""
    return required_node_affinity(pod).mask(snap, np.arange(snap.capacity, dtype=np.intp))


def untolerated_mask(pod: Pod, snap: Snapshot) -> BoolArray:
    """Rows with a NoSchedule/NoExecute taint the pod does not tolerate."""
    bad = [
        tid
        for tid, taint in enumerate(snap.taint_list)
        if taint.effect in _DO_NOT_SCHEDULE_EFFECTS
        and not any(t.tolerates(taint) for t in pod.tolerations)
    ]
    if not bad:
        return np.zeros(snap.capacity, dtype=np.bool_)
    out: BoolArray = np.any(snap.taint_matrix[:, bad], axis=1)
    return out


class NodeMasks:
    """Per-pod node masks over all rows, computed only when a constraint needs them."""

    def __init__(self, pod: Pod, snap: Snapshot) -> None:
        self._pod = pod
        self._snap = snap
        self._affinity: BoolArray | None = None
        self._tolerated: BoolArray | None = None

    def inclusion(self, c: Constraint) -> BoolArray:
        """matchNodeInclusionPolicies for every row."""
        out = np.ones(self._snap.capacity, dtype=np.bool_)
        if c.honor_affinity:
            if self._affinity is None:
                self._affinity = required_node_affinity_mask(self._pod, self._snap)
            out &= self._affinity
        if c.honor_taints:
            if self._tolerated is None:
                self._tolerated = ~untolerated_mask(self._pod, self._snap)
            out &= self._tolerated
        return out


def has_all_keys(constraints: Sequence[Constraint], snap: Snapshot) -> BoolArray:
    """nodeLabelsMatchSpreadConstraints for every row."""
    out = np.ones(snap.capacity, dtype=np.bool_)
    for c in constraints:
        col = snap.labels.get(c.topology_key)
        if col is None:
            return np.zeros(snap.capacity, dtype=np.bool_)
        out &= col.ids >= 0
    return out


def go_round(x: npt.NDArray[np.floating[Any]]) -> IntArray:
    """math.Round (half away from zero) for non-negative values, without float slop."""
    fl = np.floor(x)
    out: IntArray = (fl + (x - fl >= 0.5)).astype(np.int64)
    return out


def round_score_sum(x: npt.NDArray[np.floating[Any]]) -> IntArray:
    """go_round of a score sum: terms `cnt * weight + (maxSkew - 1)` with integer cnt and
    maxSkew, and weight = log(n + 2) >= log(3) for n >= 1 scored nodes or domains. A sum is then
    an integer or above log(3) > 0.5, where x + 0.5 rounds only within [floor(x+0.5), next) and
    truncation is floor: math.Round in two operations, not five (the one double where
    floor(x + 0.5) is off, 0.5 - 2**-54, is below log(3) and no integer)."""
    out: IntArray = (x + 0.5).astype(np.int64)
    return out



def constraints_for(
    pod: Pod, action: str, defaults: Sequence[TopologySpreadConstraint]
) -> list[Constraint]:
    """getConstraints / initPreScoreState: the pod's own, else the defaults that apply."""
    if pod.topology_spread_constraints:
        return [
            convert(c, merge_match_label_keys(c.label_selector, c.match_label_keys, pod.labels))
            for c in pod.topology_spread_constraints
            if c.when_unsatisfiable == action
        ]
    applying = [c for c in defaults if c.when_unsatisfiable == action]
    sel = pod.default_selector
    if not applying or sel is None or sel.is_empty:
        return []
    return [convert(c, sel) for c in applying]


def match_counts(
    index: SelectorCounts | None, snap: Snapshot, ns: str, c: Constraint
) -> npt.NDArray[np.int32]:
    """Pods matching the constraint's selector per row (kube's countPodsMatchSelector)."""
    # an empty selector ({}) counts nothing, although the pod's own match (selfMatch) still
    # uses Matches, which an empty selector passes
    if c.selector is None or c.selector.is_empty or index is None:
        return np.zeros(snap.capacity, dtype=np.int32)
    return index.counts(ns, c.selector)


def value_ids(col: LabelColumn | None, capacity: int) -> tuple[npt.NDArray[np.int32], int, int]:
    """Value ids per row with absent rows folded onto value "" (kube's map lookup of a missing
    label), the id used for them, and the table size."""
    if col is None:
        return np.zeros(capacity, dtype=np.int32), 0, 1
    size = len(col.vocab)
    empty_id = col.index.get("")
    if empty_id is None:
        empty_id, size = size, size + 1
    ids = np.where(col.ids >= 0, col.ids, np.int32(empty_id)).astype(np.int32)
    return ids, empty_id, size
