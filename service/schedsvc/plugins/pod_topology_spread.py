"""PodTopologySpread: spread matching pods evenly over topology domains (kube v1.35).

Filter (DoNotSchedule constraints): a node passes a constraint when
`pods matching in its domain + selfMatch - global minimum <= maxSkew`, where domains and counts
come from the nodes that carry every constraint's topology key and pass the constraint's
node-inclusion policies. Score (ScheduleAnyway constraints): per node, the sum over constraints
of `count * log(domains + 2) + (maxSkew - 1)`, rounded, then normalized so that fewer matching
pods score higher. Pods without constraints of their own get the default constraints, applied
through `pod.default_selector` (kube's DefaultSelector).

Counts per row come from the incremental SelectorCounts index; per-domain totals are one
bincount over the topology key's label column, and filter/score are gathers over value ids.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..engine.podinfo import PodInfo
from ..engine.selector_counts import SelectorCounts
from ..engine.snapshot import BoolArray, IntArray, LabelColumn, Snapshot
from ..errors import ConfigError
from ..framework import (
    MAX_NODE_SCORE,
    SKIP,
    Code,
    FilterResult,
    PluginTraits,
    PreFilterResult,
    Rows,
    Skip,
)
from ..model import LabelSelector, Pod, TopologySpreadConstraint
from .selectors import is_qualified_name, required_node_affinity

__all__ = [
    "NAME",
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpreadArgs",
    "PodTopologySpread",
    "new",
]

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"

# plugin.go systemDefaultConstraints, in kube's order.
SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(
        max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
    TopologySpreadConstraint(
        max_skew=5, topology_key=LABEL_TOPOLOGY_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
)

_MAX_INT32 = 2**31 - 1
_DO_NOT_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")


# ---- args -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    """pluginConfig args: `defaultConstraints` and `defaultingType` (System or List)."""

    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING

    def __post_init__(self) -> None:
        base = f"pluginConfig[{NAME}].args"
        if self.defaulting_type not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            raise ConfigError(
                f"{base}.defaultingType",
                f'unsupported value "{self.defaulting_type}": supported values: "System", "List"',
            )
        if self.defaulting_type == SYSTEM_DEFAULTING and self.default_constraints:
            raise ConfigError(
                f"{base}.defaultingType", "must be List when .defaultConstraints are not empty"
            )
        seen: set[tuple[str, str]] = set()
        for i, c in enumerate(self.default_constraints):
            p = f"{base}.defaultConstraints[{i}]"
            if c.max_skew <= 0:
                raise ConfigError(f"{p}.maxSkew", "not in valid range (0, inf)")
            if not c.topology_key:
                raise ConfigError(f"{p}.topologyKey", "can not be empty")
            if not is_qualified_name(c.topology_key):
                raise ConfigError(f"{p}.topologyKey", "must be a valid label name")
            if c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
                raise ConfigError(
                    f"{p}.whenUnsatisfiable",
                    'supported values: "DoNotSchedule", "ScheduleAnyway"',
                )
            if c.label_selector is not None:
                raise ConfigError(
                    f"{p}.labelSelector",
                    "constraint must not define a selector, as they deduced for each pod",
                )
            if c.min_domains is not None and c.min_domains <= 0:
                raise ConfigError(f"{p}.minDomains", "must be greater than 0")
            for fname, v in (
                ("nodeAffinityPolicy", c.node_affinity_policy),
                ("nodeTaintsPolicy", c.node_taints_policy),
            ):
                if v not in (HONOR, IGNORE):
                    raise ConfigError(f"{p}.{fname}", 'supported values: "Honor", "Ignore"')
            pair = (c.topology_key, c.when_unsatisfiable)
            if pair in seen:
                raise ConfigError(
                    p, f"duplicate value {{{c.topology_key}, {c.when_unsatisfiable}}}"
                )
            seen.add(pair)


def _parse_constraint(raw: Any, path: str) -> TopologySpreadConstraint:
    if not isinstance(raw, Mapping):
        raise ConfigError(path, "must be a mapping")
    known = {
        "maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
        "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys",
    }
    for k in raw:
        if k not in known:
            raise ConfigError(f"{path}.{k}", "unknown field")

    def integer(name: str, default: int | None) -> int | None:
        v = raw.get(name, default)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise ConfigError(f"{path}.{name}", "must be an integer")
        return v

    def string(name: str, default: str) -> str:
        v = raw.get(name, default)
        if not isinstance(v, str):
            raise ConfigError(f"{path}.{name}", "must be a string")
        return v

    keys = raw.get("matchLabelKeys", [])
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ConfigError(f"{path}.matchLabelKeys", "must be a list of strings")
    max_skew = integer("maxSkew", 0)
    assert max_skew is not None
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=string("topologyKey", ""),
        when_unsatisfiable=string("whenUnsatisfiable", ""),
        # any selector is refused by validation; keep a marker so it reports the field
        label_selector=LabelSelector() if raw.get("labelSelector") is not None else None,
        min_domains=integer("minDomains", None),
        node_affinity_policy=string("nodeAffinityPolicy", HONOR),
        node_taints_policy=string("nodeTaintsPolicy", IGNORE),
        match_label_keys=tuple(keys),
    )


def parse_args(args: Mapping[str, Any] | None) -> PodTopologySpreadArgs:
    base = f"pluginConfig[{NAME}].args"
    if not args:
        return PodTopologySpreadArgs()
    for k in args:
        if k not in ("defaultConstraints", "defaultingType", "apiVersion", "kind"):
            raise ConfigError(f"{base}.{k}", "unknown field")
    kind = args.get("kind")
    if kind is not None and kind != "PodTopologySpreadArgs":
        raise ConfigError(f"{base}.kind", f'expected "PodTopologySpreadArgs", got "{kind}"')
    raw_list = args.get("defaultConstraints") or []
    if not isinstance(raw_list, list):
        raise ConfigError(f"{base}.defaultConstraints", "must be a list")
    dtype = args.get("defaultingType") or SYSTEM_DEFAULTING
    if not isinstance(dtype, str):
        raise ConfigError(f"{base}.defaultingType", "must be a string")
    constraints = tuple(
        _parse_constraint(c, f"{base}.defaultConstraints[{i}]") for i, c in enumerate(raw_list)
    )
    return PodTopologySpreadArgs(default_constraints=constraints, defaulting_type=dtype)


# ---- constraints as the plugin uses them -------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Constraint:
    """common.go topologySpreadConstraint: the selector merged, defaults resolved."""

    max_skew: int
    topology_key: str
    selector: LabelSelector | None  # None is kube's labels.Nothing(): matches no pod
    min_domains: int
    honor_affinity: bool
    honor_taints: bool

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.selector is not None and self.selector.matches(labels)


def _merge_match_label_keys(
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


def _convert(
    c: TopologySpreadConstraint, selector: LabelSelector | None
) -> _Constraint:
    return _Constraint(
        max_skew=c.max_skew,
        topology_key=c.topology_key,
        selector=selector,
        min_domains=c.min_domains if c.min_domains is not None else 1,
        honor_affinity=c.node_affinity_policy == HONOR,
        honor_taints=c.node_taints_policy == HONOR,
    )


# ---- node masks over every row of the snapshot ------------------------------------------------
def _required_node_affinity_mask(pod: Pod, snap: Snapshot) -> BoolArray:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match for every row (parse errors: no match)."""
    return required_node_affinity(pod).mask(snap, np.arange(snap.capacity, dtype=np.intp))


def _untolerated_mask(pod: Pod, snap: Snapshot) -> BoolArray:
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


class _NodeMasks:
    """Per-pod node masks over all rows, computed only when a constraint needs them."""

    def __init__(self, pod: Pod, snap: Snapshot) -> None:
        self._pod = pod
        self._snap = snap
        self._affinity: BoolArray | None = None
        self._tolerated: BoolArray | None = None

    def inclusion(self, c: _Constraint) -> BoolArray:
        """matchNodeInclusionPolicies for every row."""
        out = np.ones(self._snap.capacity, dtype=np.bool_)
        if c.honor_affinity:
            if self._affinity is None:
                self._affinity = _required_node_affinity_mask(self._pod, self._snap)
            out &= self._affinity
        if c.honor_taints:
            if self._tolerated is None:
                self._tolerated = ~_untolerated_mask(self._pod, self._snap)
            out &= self._tolerated
        return out


def _has_all_keys(constraints: Sequence[_Constraint], snap: Snapshot) -> BoolArray:
    """nodeLabelsMatchSpreadConstraints for every row."""
    out = np.ones(snap.capacity, dtype=np.bool_)
    for c in constraints:
        col = snap.labels.get(c.topology_key)
        if col is None:
            return np.zeros(snap.capacity, dtype=np.bool_)
        out &= col.ids >= 0
    return out


def _go_round(x: npt.NDArray[np.float64]) -> IntArray:
    """math.Round (half away from zero) for non-negative values, without float slop."""
    fl = np.floor(x)
    out: IntArray = (fl + (x - fl >= 0.5)).astype(np.int64)
    return out


# ---- plugin state ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _FilterConstraint:
    ids: npt.NDArray[np.int32] | None  # topology value id per row; None: no node has the key
    within_skew: BoolArray  # per value id: matchNum + selfMatch - minMatch <= maxSkew


@dataclass(frozen=True, slots=True)
class _FilterState:
    constraints: tuple[_FilterConstraint, ...]


@dataclass(frozen=True, slots=True)
class _ScoreConstraint:
    ids: npt.NDArray[np.int32] | None  # None: no node has the key (never contributes)
    counts: npt.NDArray[np.int64]  # hostname: per row; otherwise per mapped value id
    per_row: bool
    empty_id: int  # where a row without the key is counted (kube reads it as value "")
    weight: float
    skew_term: float  # float64(maxSkew - 1)


@dataclass(frozen=True, slots=True)
class _ScoreState:
    constraints: tuple[_ScoreConstraint, ...]
    ignored: BoolArray  # aligned with the feasible rows handed to pre_score
    ignored_rows: BoolArray  # over all rows


def _value_ids(col: LabelColumn | None, capacity: int) -> tuple[npt.NDArray[np.int32], int, int]:
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


# ---- the plugin --------------------------------------------------------------------------------
class PodTopologySpread:
    name = NAME
    traits = PluginTraits(
        pre_filter_assume_stable=True,
        pre_score_assume_stable=True,
    )
    # a signable pod has no DoNotSchedule constraint, so its PreFilter is a Skip; nor, unless
    # batching.softSpread signs it, a ScheduleAnyway one, so its PreScore is a Skip too (with
    # softSpread every cached node is rescored in full, which reuses no PreScore)

    def __init__(self, args: PodTopologySpreadArgs) -> None:
        self.args = args
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        self.default_constraints = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else args.default_constraints
        )

    def constraints(self, pod: Pod, action: str) -> list[_Constraint]:
        """getConstraints / initPreScoreState: the pod's own, else the defaults that apply."""
        if pod.topology_spread_constraints:
            return [
                _convert(
                    c, _merge_match_label_keys(c.label_selector, c.match_label_keys, pod.labels)
                )
                for c in pod.topology_spread_constraints
                if c.when_unsatisfiable == action
            ]
        defaults = [c for c in self.default_constraints if c.when_unsatisfiable == action]
        sel = pod.default_selector
        if not defaults or sel is None or sel.is_empty:
            return []
        return [_convert(c, sel) for c in defaults]

    def _counts(
        self, index: SelectorCounts | None, snap: Snapshot, ns: str, c: _Constraint
    ) -> npt.NDArray[np.int32]:
        # kube's countPodsMatchSelector counts nothing for an empty selector ({}), although
        # the pod's own match (selfMatch) still uses Matches, which an empty selector passes
        if c.selector is None or c.selector.is_empty or index is None:
            return np.zeros(snap.capacity, dtype=np.int32)
        return index.counts(ns, c.selector)

    # ---- filter ------------------------------------------------------------------------------
    def pre_filter(self, pod: PodInfo, snap: Snapshot) -> PreFilterResult | Skip:
        p = pod.pod
        constraints = self.constraints(p, DO_NOT_SCHEDULE)
        if not constraints:
            return SKIP
        index = SelectorCounts.for_snapshot(snap)
        masks = _NodeMasks(p, snap)
        base = snap.alive & _has_all_keys(constraints, snap)
        out: list[_FilterConstraint] = []
        for c in constraints:
            col = snap.labels.get(c.topology_key)
            if col is None:
                # every node misses the key: Filter rejects them all before any skew check
                out.append(_FilterConstraint(ids=None, within_skew=np.zeros(0, np.bool_)))
                continue
            eligible = base & masks.inclusion(c)
            ids = col.ids[eligible]
            counts = self._counts(index, snap, p.namespace, c)[eligible]
            size = len(col.vocab)
            totals = np.bincount(ids, weights=counts, minlength=size).astype(np.int64)
            present = np.bincount(ids, minlength=size) > 0
            domains = int(present.sum())
            min_match = int(totals[present].min()) if domains else _MAX_INT32
            if domains < c.min_domains:
                min_match = 0
            self_match = 1 if c.matches(p.labels) else 0
            within = totals + self_match - min_match <= c.max_skew
            out.append(_FilterConstraint(ids=col.ids, within_skew=within))
        return PreFilterResult(state=_FilterState(constraints=tuple(out)))

    def filter(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult:
        n = len(rows)
        if not isinstance(state, _FilterState) or not state.constraints:
            return FilterResult(feasible=np.ones(n, dtype=np.bool_))
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

    # ---- score -------------------------------------------------------------------------------
    def pre_score(self, pod: PodInfo, snap: Snapshot, rows: Rows) -> Any | Skip:
        p = pod.pod
        if snap.num_nodes == 0:
            return SKIP
        constraints = self.constraints(p, SCHEDULE_ANYWAY)
        if not constraints:
            return SKIP
        # Only non-system-default spreading needs every topology key on a node, so nodes
        # without a zone label still get hostname spreading.
        require_all = bool(p.topology_spread_constraints) or not self.system_defaulted
        index = SelectorCounts.for_snapshot(snap)
        masks = _NodeMasks(p, snap)
        if require_all:
            has_all = _has_all_keys(constraints, snap)
        else:
            has_all = np.ones(snap.capacity, dtype=np.bool_)
        ignored_rows = ~has_all
        ignored = ignored_rows[rows]
        scored_rows = rows[~ignored]
        out: list[_ScoreConstraint] = []
        for c in constraints:
            col = snap.labels.get(c.topology_key)
            counts = self._counts(index, snap, p.namespace, c)
            skew_term = float(c.max_skew - 1)
            if c.topology_key == LABEL_HOSTNAME:
                out.append(
                    _ScoreConstraint(
                        ids=col.ids if col is not None else None,
                        counts=counts.astype(np.int64),
                        per_row=True,
                        empty_id=0,
                        weight=math.log(len(scored_rows) + 2),
                        skew_term=skew_term,
                    )
                )
                continue
            ids, empty_id, size = _value_ids(col, snap.capacity)
            # domains: the values of the feasible, not ignored nodes
            domain = np.zeros(size, dtype=np.bool_)
            domain[ids[scored_rows]] = True
            eligible = snap.alive & has_all & masks.inclusion(c)
            eligible &= domain[ids]
            totals = np.bincount(ids[eligible], weights=counts[eligible], minlength=size)
            out.append(
                _ScoreConstraint(
                    ids=col.ids if col is not None else None,
                    counts=totals.astype(np.int64),
                    per_row=False,
                    empty_id=empty_id,
                    weight=math.log(int(domain.sum()) + 2),
                    skew_term=skew_term,
                )
            )
        return _ScoreState(constraints=tuple(out), ignored=ignored, ignored_rows=ignored_rows)

    def score(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> IntArray:
        assert isinstance(state, _ScoreState)
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
        out = _go_round(total)
        out[state.ignored_rows[rows]] = 0
        return out

    def normalize(self, state: Any, pod: PodInfo, scores: IntArray) -> IntArray:
        """kube's NormalizeScore: fewer matching pods score higher; ignored nodes score 0.

        `scores` are in the order of the rows handed to pre_score.
        """
        if not isinstance(state, _ScoreState) or scores.size == 0:
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

    # ---- batching ----------------------------------------------------------------------------
    def sign(self, pod: PodInfo) -> bytes | None:
        """Unsignable when spreading applies to the pod (its own or default constraints)."""
        p = pod.pod
        if p.topology_spread_constraints:
            return None
        sel = p.default_selector
        if self.default_constraints and sel is not None and not sel.is_empty:
            return None
        return b""

    def sign_rescored(self, pod: PodInfo) -> bytes | None:
        """A signature for batching that rescores every cached node before each hint (our
        extension, `batching.softSpread`): soft constraints only change scores, and a full
        rescore over the cached feasible nodes recomputes them exactly. Hard constraints
        change feasibility across nodes, so they stay unsignable. The score reads the pod's
        namespace, labels (self-match) and resolved constraints; node affinity and tolerations
        (for the Honor policies) are signed by their own plugins."""
        p = pod.pod
        if self.constraints(p, DO_NOT_SCHEDULE):
            return None
        soft = self.constraints(p, SCHEDULE_ANYWAY)
        if not soft:
            return self.sign(pod)
        return repr((p.namespace, sorted(p.labels.items()), soft)).encode()


def new(args: Mapping[str, Any] | None) -> PodTopologySpread:
    return PodTopologySpread(parse_args(args))
