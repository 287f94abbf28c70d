"""InterPodAffinity: required pod (anti-)affinity as a filter, preferred terms as a score.

kube v1.35 `interpodaffinity` semantics, counted per topology domain instead of per pod:

- PreFilter counts, per (topology key, value): existing pods whose required anti-affinity terms
  match the incoming pod; existing pods matching *all* the incoming pod's required affinity terms;
  existing pods matching each of its required anti-affinity terms. Skip when none of the first
  were found and the pod has no required term.
- Filter, first failure wins: affinity (a node lacking a term's topology key fails; a pod whose
  terms match only itself may go anywhere with the keys while no pod matches anywhere), then the
  pod's anti-affinity, then the existing pods' anti-affinity.
- PreScore sums signed weights per (topology key, value) over the existing pods: the incoming
  pod's preferred terms (+/- weight) and the existing pods' preferred terms (+/- weight) and
  required affinity terms (hardPodAffinityWeight) that match the incoming pod. Score is the sum
  over a node's topology values; NormalizeScore maps [min, max] to [0, 100] in float64.

Existing pods are read through framework.affinity_index.AffinityIndex, never scanned per cycle.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

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
    filter_error,
)
from ..framework.affinity_index import (
    AffinityIndex,
    CountArray,
    NamespaceFilter,
    SelectorKey,
    merge_label_keys,
    pod_has_pod_affinity,
    topology_counts,
)
from ..framework.feature import DEFAULT_FEATURES, Features
from ..framework.podinfo import PodInfo
from ..framework.snapshot import BoolArray, IntArray, Snapshot
from ..model import LabelSelector, Pod, PodAffinityTerm, WeightedPodAffinityTerm

# kube's Filter reading the PreFilter state a profile did not run (getPreFilterState)
MISSING_PRE_FILTER_STATE = 'error reading "PreFilterInterPodAffinity" from cycleState: not found'

__all__ = [
    "NAME",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "new",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
]

NAME = "InterPodAffinity"
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100


@dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    """kube's InterPodAffinityArgs (v1 defaults)."""

    hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    ignore_preferred_terms_of_existing_pods: bool = False

    def __post_init__(self) -> None:
        w = self.hard_pod_affinity_weight
        if isinstance(w, bool) or not isinstance(w, int):
            raise ConfigError(f"pluginConfig[{NAME}].args.hardPodAffinityWeight", "not an integer")
        if not MIN_HARD_POD_AFFINITY_WEIGHT <= w <= MAX_HARD_POD_AFFINITY_WEIGHT:
            raise ConfigError(
                f"pluginConfig[{NAME}].args.hardPodAffinityWeight",
                f"not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}-"
                f"{MAX_HARD_POD_AFFINITY_WEIGHT}]",
            )
        if not isinstance(self.ignore_preferred_terms_of_existing_pods, bool):
            raise ConfigError(
                f"pluginConfig[{NAME}].args.ignorePreferredTermsOfExistingPods", "not a boolean"
            )

    @classmethod
    def parse(cls, args: Mapping[str, Any] | None) -> InterPodAffinityArgs:
        """From a profile's pluginConfig args (kube's defaults for what is absent)."""
        known = {
            "hardPodAffinityWeight": "hard_pod_affinity_weight",
            "ignorePreferredTermsOfExistingPods": "ignore_preferred_terms_of_existing_pods",
        }
        kwargs: dict[str, Any] = {}
        for key, value in (args or {}).items():
            if key not in known:
                raise ConfigError(f"pluginConfig[{NAME}].args.{key}", "unknown field")
            kwargs[known[key]] = value
        return cls(**kwargs)


# ---- the incoming pod's terms ----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Term:
    """An incoming pod's term, namespaceSelector already unrolled (mergeAffinityTermNamespaces).

    `namespaces` None reaches every namespace (an empty namespaceSelector); `selector` None (a
    nil labelSelector) matches no pod.
    """

    namespaces: NamespaceFilter
    selector: LabelSelector | None
    topology_key: str

    def matches(self, pod: Pod) -> bool:
        if self.namespaces is not None and pod.namespace not in self.namespaces:
            return False
        return self.selector is not None and self.selector.matches(pod.labels)


def _incoming_term(pod: Pod, term: PodAffinityTerm, snap: Snapshot) -> _Term:
    nss = term.namespace_selector
    namespaces: NamespaceFilter
    if nss is not None and nss.is_empty:
        namespaces = None  # labels.Everything(): every namespace
    else:
        names = set(term.namespaces)
        if not term.namespaces and nss is None:
            names.add(pod.namespace)
        if nss is not None:
            names.update(n for n, ns in snap.namespaces.items() if nss.matches(ns.labels))
        namespaces = frozenset(names)
    sel = merge_label_keys(term, pod.labels)
    return _Term(
        namespaces=namespaces,
        selector=sel.canonical() if sel is not None else None,
        topology_key=term.topology_key,
    )


def _matching(index: AffinityIndex, terms: Sequence[_Term]) -> CountArray | None:
    """Pods matching every term, per row (None: no pod can match, a nil selector among them)."""
    parts: list[tuple[NamespaceFilter, LabelSelector]] = []
    for t in terms:
        if t.selector is None:
            return None
        parts.append((t.namespaces, t.selector))
    key: SelectorKey = frozenset(parts)
    return index.matching(key)


def _gather(snap: Snapshot, topology_key: str, table: IntArray, n: int) -> IntArray:
    """table[value of the key on each of the first n rows], 0 where a row lacks the key."""
    col = snap.labels.get(topology_key)
    if col is None:
        return np.zeros(n, dtype=np.int64)
    padded = np.append(table, np.int64(0))  # id -1 reads the last entry
    out: IntArray = padded[col.ids[:n]]
    return out


def _has_key(snap: Snapshot, topology_key: str, n: int) -> BoolArray:
    col = snap.labels.get(topology_key)
    if col is None:
        return np.zeros(n, dtype=np.bool_)
    out: BoolArray = col.ids[:n] >= 0
    return out


def _add_table(acc: dict[str, IntArray], key: str, table: IntArray, factor: int = 1) -> None:
    prev = acc.get(key)
    if prev is None:
        acc[key] = factor * table
    else:
        acc[key] = prev + factor * table


# ---- state ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _FilterState:
    """Masks over rows [0, n): why each row fails, in kube's order of checks."""

    affinity_fail: BoolArray
    anti_affinity_fail: BoolArray
    existing_anti_affinity_fail: BoolArray


@dataclass(frozen=True, slots=True)
class _ScoreState:
    """Per topology key: the key's value ids per row (live column) and the summed weight table."""

    tables: tuple[tuple[npt.NDArray[np.int32], IntArray], ...]


class InterPodAffinity:
    name = NAME
    # a signable pod has no terms: PreFilter and PreScore read the existing pods' terms, which
    # assuming such a pod does not add to
    traits = PluginTraits(
        pre_filter_assume_stable=True,
        pre_score_assume_stable=True,
    )

    def __init__(self, args: InterPodAffinityArgs | None = None) -> None:
        self.args = args or InterPodAffinityArgs()

    # ---- filter -------------------------------------------------------------------------
    def pre_filter(self, pod: PodInfo, snap: Snapshot) -> PreFilterResult | Skip:
        p = pod.pod
        index = AffinityIndex.for_snapshot(snap)
        ns_labels = snap.namespace_labels(p.namespace)
        n = snap.n_rows
        a = p.affinity
        req_aff: list[_Term] = []
        req_anti: list[_Term] = []
        if a is not None and a.pod_affinity is not None:
            req_aff = [_incoming_term(p, t, snap) for t in a.pod_affinity.required]
        if a is not None and a.pod_anti_affinity is not None:
            req_anti = [_incoming_term(p, t, snap) for t in a.pod_anti_affinity.required]

        # (a) existing pods' required anti-affinity terms that match the incoming pod
        existing: dict[str, IntArray] = {}
        for term, holders in index.required_anti.counts.items():
            if term.matches(p, ns_labels):
                table = topology_counts(snap, term.topology_key, holders)
                if table is not None and table.any():
                    _add_table(existing, term.topology_key, table)
        if not existing and not req_aff and not req_anti:
            return SKIP
        existing_fail = np.zeros(n, dtype=np.bool_)
        for key, table in existing.items():
            existing_fail |= _gather(snap, key, table, n) > 0

        # (b) pods matching all the incoming pod's required affinity terms
        affinity_fail = np.zeros(n, dtype=np.bool_)
        if req_aff:
            matching = _matching(index, req_aff)
            has_keys = np.ones(n, dtype=np.bool_)
            pods_exist = np.ones(n, dtype=np.bool_)
            any_count = False
            for t in req_aff:
                has_keys &= _has_key(snap, t.topology_key, n)
                table = (
                    topology_counts(snap, t.topology_key, matching)
                    if matching is not None
                    else None
                )
                if table is None:
                    pods_exist[:] = False
                    continue
                any_count = any_count or bool(table.any())
                pods_exist &= _gather(snap, t.topology_key, table, n) > 0
            # the first pod of a group whose terms select itself may go anywhere with the keys
            first_of_group = not any_count and all(t.matches(p) for t in req_aff)
            affinity_fail = ~has_keys if first_of_group else ~(has_keys & pods_exist)

        # (c) pods matching each of the incoming pod's required anti-affinity terms
        anti_fail = np.zeros(n, dtype=np.bool_)
        anti_counts: dict[str, IntArray] = {}
        for t in req_anti:
            matching = _matching(index, [t])
            if matching is None:
                continue
            table = topology_counts(snap, t.topology_key, matching)
            if table is not None and table.any():
                _add_table(anti_counts, t.topology_key, table)
        for key, table in anti_counts.items():
            anti_fail |= _gather(snap, key, table, n) > 0

        return PreFilterResult(
            state=_FilterState(
                affinity_fail=affinity_fail,
                anti_affinity_fail=anti_fail,
                existing_anti_affinity_fail=existing_fail,
            )
        )

    def filter(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult:
        if state is None:  # PreFilter disabled in the profile: kube's Filter errs
            return filter_error(len(rows), MISSING_PRE_FILTER_STATE)
        s: _FilterState = state
        aff = s.affinity_fail[rows]
        anti = s.anti_affinity_fail[rows] & ~aff
        existing = s.existing_anti_affinity_fail[rows] & ~aff & ~anti
        return FilterResult(
            feasible=~(aff | anti | existing),
            reasons=[
                (ERR_REASON_AFFINITY_RULES_NOT_MATCH, aff),
                (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH, anti),
                (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH, existing),
            ],
            code=Code.UNSCHEDULABLE,
            reason_codes={ERR_REASON_AFFINITY_RULES_NOT_MATCH: Code.UNRESOLVABLE},
        )

    # ---- score --------------------------------------------------------------------------
    def pre_score(self, pod: PodInfo, snap: Snapshot, rows: Rows) -> Any | Skip:
        if len(rows) == 0:
            return SKIP
        p = pod.pod
        a = p.affinity
        pref_aff: tuple[WeightedPodAffinityTerm, ...] = ()
        pref_anti: tuple[WeightedPodAffinityTerm, ...] = ()
        if a is not None and a.pod_affinity is not None:
            pref_aff = a.pod_affinity.preferred
        if a is not None and a.pod_anti_affinity is not None:
            pref_anti = a.pod_anti_affinity.preferred
        has_constraints = bool(pref_aff or pref_anti)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP

        index = AffinityIndex.for_snapshot(snap)
        ns_labels = snap.namespace_labels(p.namespace)
        acc: dict[str, IntArray] = {}
        contributed = False

        def add(key: str, per_row: CountArray, weight: int) -> None:
            nonlocal contributed
            table = topology_counts(snap, key, per_row)
            if table is not None and table.any():
                contributed = True
                _add_table(acc, key, table, weight)

        # the incoming pod's preferred terms, against every existing pod
        for sign, weighted in ((1, pref_aff), (-1, pref_anti)):
            for w in weighted:
                t = _incoming_term(p, w.term, snap)
                matching = _matching(index, [t])
                if matching is not None:
                    add(t.topology_key, matching, sign * w.weight)
        # existing pods' terms, against the incoming pod
        hard = self.args.hard_pod_affinity_weight
        if hard > 0:
            for term, holders in index.required_affinity.counts.items():
                if term.matches(p, ns_labels):
                    add(term.topology_key, holders, hard)
        for (term, weight), holders in index.preferred.counts.items():
            if term.matches(p, ns_labels):
                add(term.topology_key, holders, weight)

        if not contributed:
            return SKIP
        tables = []
        for key, table in acc.items():
            col = snap.labels[key]
            tables.append((col.ids, np.append(table, np.int64(0))))
        return _ScoreState(tables=tuple(tables))

    def score(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> IntArray:
        s: _ScoreState = state
        out = np.zeros(len(rows), dtype=np.int64)
        for ids, table in s.tables:
            out += table[ids[rows]]
        return out

    def normalize(self, state: Any, pod: PodInfo, scores: IntArray) -> IntArray:
        s: _ScoreState = state
        if scores.size == 0 or not s.tables:
            return scores
        lo = int(scores.min())
        diff = int(scores.max()) - lo
        if diff <= 0:
            return np.zeros_like(scores)
        # float64(MaxNodeScore) * (float64(score-min) / float64(maxMinDiff)), then int64()
        f = float(MAX_NODE_SCORE) * ((scores - lo).astype(np.float64) / float(diff))
        out: IntArray = f.astype(np.int64)
        return out

    # ---- batching -----------------------------------------------------------------------
    def sign(self, pod: PodInfo) -> bytes | None:
        """None for a pod with pod (anti-)affinity; else its namespace and labels.

        A pod without terms of its own is seen by this plugin only through the existing pods'
        terms, which read its namespace (and that namespace's labels) and its labels. Placing
        such a pod adds no term anywhere, so the next pod with the same bytes gets the same
        filter and scores from this plugin.
        """
        p = pod.pod
        if pod_has_pod_affinity(p):
            return None
        return json.dumps([p.namespace, sorted(p.labels.items())], separators=(",", ":")).encode()


def new(
    args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
) -> InterPodAffinity:
    return InterPodAffinity(InterPodAffinityArgs.parse(args))
