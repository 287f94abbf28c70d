"""NodeAffinity: pod.spec.nodeSelector, required and preferred node affinity, addedAffinity.

kube's nodeaffinity plugin. Filter: the scheduler-enforced `addedAffinity` first, then the pod's
nodeSelector AND its required terms (terms ORed, requirements ANDed). PreFilter narrows the
nodes when every required term names nodes through `matchFields metadata.name In`. Score: the
sum of the weights of the matching preferred terms (the pod's and addedAffinity's), normalized
by kube's default helper. Everything reads only node names and labels: static.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..framework import (
    SKIP,
    Code,
    FilterResult,
    PluginTraits,
    PreFilterResult,
    Rows,
    Skip,
    default_normalize_score,
)
from ..framework.feature import DEFAULT_FEATURES, Features
from ..framework.podinfo import PodInfo
from ..framework.snapshot import IntArray, Snapshot
from ..model import (
    NodeAffinity as NodeAffinitySpec,
)
from ..model import (
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from .selectors import (
    OBJECT_NAME_FIELD,
    NodeSelector,
    RequiredNodeAffinity,
    WeightedTerm,
    compile_node_selector,
    compile_preferred_terms,
    required_node_affinity,
    weighted_terms_score,
)

__all__ = [
    "NAME",
    "ERR_REASON_POD",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_CONFLICT",
    "NodeAffinityArgs",
    "NodeAffinity",
    "parse_node_affinity",
    "new",
]

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"


# ---- args ----------------------------------------------------------------------------------
def _expect(cond: bool, path: str, what: str) -> None:
    if not cond:
        raise ConfigError(path, what)


def _check_keys(obj: Mapping[str, Any], allowed: set[str], path: str) -> None:
    for k in obj:
        if k not in allowed:
            raise ConfigError(f"{path}.{k}", "unknown field")


def _parse_requirements(raw: Any, path: str) -> tuple[NodeSelectorRequirement, ...]:
    if raw is None:
        return ()
    _expect(isinstance(raw, list), path, "must be a list")
    out: list[NodeSelectorRequirement] = []
    for i, r in enumerate(raw):
        p = f"{path}[{i}]"
        _expect(isinstance(r, Mapping), p, "must be an object")
        _check_keys(r, {"key", "operator", "values"}, p)
        key, op, values = r.get("key", ""), r.get("operator", ""), r.get("values") or []
        _expect(isinstance(key, str), f"{p}.key", "must be a string")
        _expect(isinstance(op, str), f"{p}.operator", "must be a string")
        _expect(
            isinstance(values, list) and all(isinstance(v, str) for v in values),
            f"{p}.values",
            "must be a list of strings",
        )
        out.append(NodeSelectorRequirement(key=key, operator=op, values=tuple(values)))
    return tuple(out)


def _parse_term(raw: Any, path: str) -> NodeSelectorTerm:
    if raw is None:
        return NodeSelectorTerm()
    _expect(isinstance(raw, Mapping), path, "must be an object")
    _check_keys(raw, {"matchExpressions", "matchFields"}, path)
    return NodeSelectorTerm(
        match_expressions=_parse_requirements(
            raw.get("matchExpressions"), f"{path}.matchExpressions"
        ),
        match_fields=_parse_requirements(raw.get("matchFields"), f"{path}.matchFields"),
    )


def parse_node_affinity(raw: Any, path: str) -> NodeAffinitySpec:
    """A v1.NodeAffinity in its YAML/JSON shape (camelCase), strictly: unknown keys fail."""
    _expect(isinstance(raw, Mapping), path, "must be an object")
    req_key = "requiredDuringSchedulingIgnoredDuringExecution"
    pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
    _check_keys(raw, {req_key, pref_key}, path)
    required: tuple[NodeSelectorTerm, ...] | None = None
    req = raw.get(req_key)
    if req is not None:
        p = f"{path}.{req_key}"
        _expect(isinstance(req, Mapping), p, "must be an object")
        _check_keys(req, {"nodeSelectorTerms"}, p)
        terms = req.get("nodeSelectorTerms") or []
        _expect(isinstance(terms, list), f"{p}.nodeSelectorTerms", "must be a list")
        required = tuple(
            _parse_term(t, f"{p}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms)
        )
    preferred: list[PreferredSchedulingTerm] = []
    pref = raw.get(pref_key)
    if pref is not None:
        p = f"{path}.{pref_key}"
        _expect(isinstance(pref, list), p, "must be a list")
        for i, t in enumerate(pref):
            pi = f"{p}[{i}]"
            _expect(isinstance(t, Mapping), pi, "must be an object")
            _check_keys(t, {"weight", "preference"}, pi)
            weight = t.get("weight", 0)
            _expect(
                isinstance(weight, int) and not isinstance(weight, bool) and -(2**31) <= weight
                < 2**31,
                f"{pi}.weight",
                "must be an int32",
            )
            preferred.append(
                PreferredSchedulingTerm(
                    weight=weight, preference=_parse_term(t.get("preference"), f"{pi}.preference")
                )
            )
    return NodeAffinitySpec(required=required, preferred=tuple(preferred))


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    """kube's NodeAffinityArgs: `addedAffinity` applies to every pod of the profile."""

    added_affinity: NodeAffinitySpec | None = None

    def __post_init__(self) -> None:
        """ValidateNodeAffinityArgs: both parts must parse as kube's NodeSelector would."""
        a = self.added_affinity
        if a is None:
            return
        base = "pluginConfig[NodeAffinity].args.addedAffinity"
        if a.required is not None:
            errs = compile_node_selector(a.required).errors
            if errs:
                raise ConfigError(
                    f"{base}.requiredDuringSchedulingIgnoredDuringExecution", "; ".join(errs)
                )
        _, perrs = compile_preferred_terms(a.preferred)
        if perrs:
            raise ConfigError(
                f"{base}.preferredDuringSchedulingIgnoredDuringExecution", "; ".join(perrs)
            )

    @classmethod
    def parse(cls, args: Mapping[str, Any] | None) -> NodeAffinityArgs:
        base = f"pluginConfig[{NAME}].args"
        if not args:
            return cls()
        _check_keys(args, {"addedAffinity", "apiVersion", "kind"}, base)
        raw = args.get("addedAffinity")
        if raw is None:
            return cls()
        return cls(added_affinity=parse_node_affinity(raw, f"{base}.addedAffinity"))


# ---- plugin --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _FilterState:
    required: RequiredNodeAffinity


@dataclass(frozen=True, slots=True)
class _ScoreState:
    terms: tuple[WeightedTerm, ...]


def _pod_node_affinity(pod: PodInfo) -> NodeAffinitySpec | None:
    aff = pod.pod.affinity
    return aff.node_affinity if aff is not None else None


def _term_obj(t: NodeSelectorTerm) -> list[Any]:
    return [
        [[r.key, r.operator, list(r.values)] for r in t.match_expressions],
        [[r.key, r.operator, list(r.values)] for r in t.match_fields],
    ]


def _pref_obj(terms: Sequence[PreferredSchedulingTerm]) -> list[Any]:
    return [[t.weight, _term_obj(t.preference)] for t in terms]


class NodeAffinity:
    name = NAME
    traits = PluginTraits(
        filter_is_static=True,
        score_is_static=True,
        pre_filter_assume_stable=True,  # reads only the pod
        normalize_uniform=True,  # DefaultNormalizeScore
    )

    def __init__(self, args: NodeAffinityArgs | None = None) -> None:
        self.args = args or NodeAffinityArgs()
        added = self.args.added_affinity
        self._added_required: NodeSelector | None = None
        self._added_preferred: tuple[WeightedTerm, ...] | None = None
        if added is not None:
            if added.required is not None:
                self._added_required = compile_node_selector(added.required)
            if added.preferred:
                self._added_preferred, _ = compile_preferred_terms(added.preferred)

    # -- filter --
    def pre_filter(self, pod: PodInfo, snap: Snapshot) -> PreFilterResult | Skip:
        na = _pod_node_affinity(pod)
        terms = na.required if na is not None else None
        if terms is None and self._added_required is None and not pod.pod.node_selector:
            return SKIP
        state = _FilterState(required=required_node_affinity(pod.pod))
        if not terms:
            return PreFilterResult(state=state)
        # Every term must name nodes (matchFields metadata.name In, intersected within a
        # term); the union over the terms is then the only nodes worth filtering.
        node_names: set[str] | None = None
        for t in terms:
            term_names: set[str] | None = None
            for r in t.match_fields:
                if r.key == OBJECT_NAME_FIELD and r.operator == "In":
                    s = set(r.values)
                    term_names = s if term_names is None else term_names & s
            if term_names is None:
                return PreFilterResult(state=state)
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return PreFilterResult(
                state=state, reject=(ERR_REASON_CONFLICT,), reject_code=Code.UNRESOLVABLE
            )
        if node_names:
            return PreFilterResult(state=state, node_names=frozenset(node_names))
        return PreFilterResult(state=state)

    def filter(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult:
        if not isinstance(state, _FilterState):
            state = _FilterState(required=required_node_affinity(pod.pod))
        reasons = []
        if self._added_required is not None:
            enforced = self._added_required.mask(snap, rows)
            reasons.append((ERR_REASON_ENFORCED, ~enforced))
        else:
            enforced = np.ones(len(rows), dtype=np.bool_)
        matched = state.required.mask(snap, rows)
        reasons.append((ERR_REASON_POD, enforced & ~matched))
        return FilterResult(feasible=enforced & matched, reasons=reasons, code=Code.UNRESOLVABLE)

    # -- score --
    def pre_score(self, pod: PodInfo, snap: Snapshot, rows: Rows) -> _ScoreState | Skip:
        na = _pod_node_affinity(pod)
        preferred = na.preferred if na is not None else ()
        if not preferred and self._added_preferred is None:
            return SKIP
        # kube fails PreScore on a preferred term it cannot parse; we let it score nothing.
        terms, _ = compile_preferred_terms(preferred)
        return _ScoreState(terms=(self._added_preferred or ()) + terms)

    def score(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> IntArray:
        if not isinstance(state, _ScoreState):
            st = self.pre_score(pod, snap, rows)
            if isinstance(st, Skip):
                return np.zeros(len(rows), dtype=np.int64)
            state = st
        return weighted_terms_score(state.terms, snap, rows)

    def normalize(self, state: Any, pod: PodInfo, scores: IntArray) -> IntArray:
        return default_normalize_score(scores, reverse=False)

    # -- batching --
    def sign(self, pod: PodInfo) -> bytes | None:
        na = _pod_node_affinity(pod)
        required = None
        preferred: list[Any] = []
        if na is not None:
            if na.required is not None:
                required = [_term_obj(t) for t in na.required]
            preferred = _pref_obj(na.preferred)
        obj = [sorted(pod.pod.node_selector.items()), required, preferred]
        return json.dumps(obj, separators=(",", ":")).encode()


def new(
    args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
) -> NodeAffinity:
    return NodeAffinity(NodeAffinityArgs.parse(args))
