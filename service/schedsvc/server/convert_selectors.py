"""schedsvc.v1 selectors and affinity -> domain types, validated as kube's API server does
(ValidateNodeSelectorRequirement, ValidateLabelSelector, validatePodAffinityTerm).

Label selectors and whole affinities repeat across pods: they are converted once per distinct
serialized form and kept in the server's PodCaches (server/cache.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from schedsvc import model
from schedsvc.errors import InvalidArgument
from schedsvc.v1 import schedule_pb2 as pb

from .cache import PodCaches
from .validation import (
    DNS1123_LABEL_RE,
    INT_RE,
    check_key,
    field_key,
    label_value_error,
    qualified_name_error,
)

__all__ = ["label_selector", "label_keys", "affinity", "node_selector_terms"]

NODE_SELECTOR_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})
LABEL_SELECTOR_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})


# --- selectors ---------------------------------------------------------------------------------


def _node_selector_requirement(
    r: pb.NodeSelectorRequirement, path: str
) -> model.NodeSelectorRequirement:
    """kube's ValidateNodeSelectorRequirement, plus integer values for Gt/Lt."""
    op = r.operator
    values = tuple(r.values)
    if op not in NODE_SELECTOR_OPERATORS:
        raise InvalidArgument(f"{path}.operator", f"unknown node selector operator {op!r}")
    if op in ("In", "NotIn") and not values:
        raise InvalidArgument(f"{path}.values", f"must be non-empty when operator is {op}")
    if op in ("Exists", "DoesNotExist") and values:
        raise InvalidArgument(f"{path}.values", f"must be empty when operator is {op}")
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise InvalidArgument(f"{path}.values", f"must have exactly one value for {op}")
        if not INT_RE.match(values[0]) or not -(2**63) <= int(values[0]) < 2**63:
            raise InvalidArgument(f"{path}.values[0]", f"{values[0]!r} is not an integer")
    check_key(r.key, f"{path}.key")
    return model.NodeSelectorRequirement(key=r.key, operator=op, values=values)


def _node_field_requirement(
    r: pb.NodeSelectorRequirement, path: str
) -> model.NodeSelectorRequirement:
    """kube's ValidateNodeFieldSelectorRequirement: metadata.name, In/NotIn, one value."""
    if r.operator not in ("In", "NotIn"):
        raise InvalidArgument(f"{path}.operator", f"unknown field selector operator {r.operator!r}")
    if len(r.values) != 1:
        raise InvalidArgument(f"{path}.values", "must have exactly one value")
    if r.key != "metadata.name":
        raise InvalidArgument(f"{path}.key", f"{r.key!r} is not a supported field (metadata.name)")
    return model.NodeSelectorRequirement(key=r.key, operator=r.operator, values=tuple(r.values))


def _node_selector_term(t: pb.NodeSelectorTerm, path: str) -> model.NodeSelectorTerm:
    return model.NodeSelectorTerm(
        match_expressions=tuple(
            _node_selector_requirement(r, f"{path}.match_expressions[{i}]")
            for i, r in enumerate(t.match_expressions)
        ),
        match_fields=tuple(
            _node_field_requirement(r, f"{path}.match_fields[{i}]")
            for i, r in enumerate(t.match_fields)
        ),
    )


def node_selector_terms(
    ts: Iterable[pb.NodeSelectorTerm], path: str
) -> tuple[model.NodeSelectorTerm, ...]:
    """A NodeSelector's terms (a PV's node affinity reads them as a pod's required one)."""
    return tuple(_node_selector_term(t, f"{path}[{i}]") for i, t in enumerate(ts))


def label_selector(s: pb.LabelSelector, path: str, caches: PodCaches) -> model.LabelSelector:
    """kube's ValidateLabelSelector; match_labels sorted, so equal selectors compare equal."""
    key = s.SerializeToString(deterministic=True)
    hit = caches.selectors.get(key)
    if hit is not None:
        return hit
    for k, v in s.match_labels.items():
        err = qualified_name_error(k)
        if err is not None:
            raise InvalidArgument(f"{path}.match_labels{field_key(k)}", f"bad key {k!r}: {err}")
        err = label_value_error(v)
        if err is not None:
            raise InvalidArgument(f"{path}.match_labels{field_key(k)}", f"bad value: {err}")
    exprs = []
    for i, r in enumerate(s.match_expressions):
        rpath = f"{path}.match_expressions[{i}]"
        op = r.operator
        values = tuple(r.values)
        if op not in LABEL_SELECTOR_OPERATORS:
            raise InvalidArgument(f"{rpath}.operator", f"unknown label selector operator {op!r}")
        if op in ("In", "NotIn") and not values:
            raise InvalidArgument(f"{rpath}.values", f"must be non-empty when operator is {op}")
        if op in ("Exists", "DoesNotExist") and values:
            raise InvalidArgument(f"{rpath}.values", f"must be empty when operator is {op}")
        check_key(r.key, f"{rpath}.key")
        for j, v in enumerate(values):
            err = label_value_error(v)
            if err is not None:
                raise InvalidArgument(f"{rpath}.values[{j}]", err)
        exprs.append(model.LabelSelectorRequirement(key=r.key, operator=op, values=values))
    out = model.LabelSelector(
        match_labels=tuple(sorted(s.match_labels.items())), match_expressions=tuple(exprs)
    )
    caches.selectors.put(key, out, len(key))
    return out


def label_keys(keys: Iterable[str], path: str) -> tuple[str, ...]:
    out = tuple(keys)
    for i, k in enumerate(out):
        check_key(k, f"{path}[{i}]")
    return out


# --- affinity ----------------------------------------------------------------------------------


def _node_affinity(na: pb.NodeAffinity, path: str) -> model.NodeAffinity:
    required: tuple[model.NodeSelectorTerm, ...] | None = None
    req_path = f"{path}.required_during_scheduling_ignored_during_execution"
    if na.HasField("required_during_scheduling_ignored_during_execution"):
        # Set but without terms is kube's empty NodeSelector: it matches no node.
        terms = na.required_during_scheduling_ignored_during_execution.node_selector_terms
        required = tuple(
            _node_selector_term(t, f"{req_path}.node_selector_terms[{i}]")
            for i, t in enumerate(terms)
        )
    pref_path = f"{path}.preferred_during_scheduling_ignored_during_execution"
    preferred = []
    for i, p in enumerate(na.preferred_during_scheduling_ignored_during_execution):
        if not 1 <= p.weight <= 100:
            raise InvalidArgument(f"{pref_path}[{i}].weight", f"{p.weight} is not in 1..100")
        preferred.append(
            model.PreferredSchedulingTerm(
                weight=p.weight,
                preference=_node_selector_term(p.preference, f"{pref_path}[{i}].preference"),
            )
        )
    return model.NodeAffinity(required=required, preferred=tuple(preferred))


def _pod_affinity_term(
    t: pb.PodAffinityTerm, path: str, caches: PodCaches
) -> model.PodAffinityTerm:
    """kube's validatePodAffinityTerm."""
    if not t.topology_key:
        raise InvalidArgument(f"{path}.topology_key", "must not be empty")
    check_key(t.topology_key, f"{path}.topology_key")
    selector = (
        label_selector(t.label_selector, f"{path}.label_selector", caches)
        if t.HasField("label_selector")
        else None
    )
    ns_selector = (
        label_selector(t.namespace_selector, f"{path}.namespace_selector", caches)
        if t.HasField("namespace_selector")
        else None
    )
    for i, ns in enumerate(t.namespaces):
        if not DNS1123_LABEL_RE.match(ns) or len(ns) > 63:
            raise InvalidArgument(f"{path}.namespaces[{i}]", f"{ns!r} is not a namespace name")
    match_keys = label_keys(t.match_label_keys, f"{path}.match_label_keys")
    mismatch_keys = label_keys(t.mismatch_label_keys, f"{path}.mismatch_label_keys")
    if selector is None and (match_keys or mismatch_keys):
        which = "match_label_keys" if match_keys else "mismatch_label_keys"
        raise InvalidArgument(f"{path}.{which}", "must be empty when label_selector is not set")
    both = set(match_keys) & set(mismatch_keys)
    if both:
        raise InvalidArgument(
            f"{path}.mismatch_label_keys", f"{sorted(both)} also in match_label_keys"
        )
    return model.PodAffinityTerm(
        topology_key=t.topology_key,
        label_selector=selector,
        namespaces=tuple(t.namespaces),
        namespace_selector=ns_selector,
        match_label_keys=match_keys,
        mismatch_label_keys=mismatch_keys,
    )


def _pod_affinity(pa: pb.PodAffinity, path: str, caches: PodCaches) -> model.PodAffinity:
    req_path = f"{path}.required_during_scheduling_ignored_during_execution"
    pref_path = f"{path}.preferred_during_scheduling_ignored_during_execution"
    preferred = []
    for i, w in enumerate(pa.preferred_during_scheduling_ignored_during_execution):
        if not 1 <= w.weight <= 100:
            raise InvalidArgument(f"{pref_path}[{i}].weight", f"{w.weight} is not in 1..100")
        term = _pod_affinity_term(
            w.pod_affinity_term, f"{pref_path}[{i}].pod_affinity_term", caches
        )
        preferred.append(model.WeightedPodAffinityTerm(weight=w.weight, term=term))
    return model.PodAffinity(
        required=tuple(
            _pod_affinity_term(t, f"{req_path}[{i}]", caches)
            for i, t in enumerate(pa.required_during_scheduling_ignored_during_execution)
        ),
        preferred=tuple(preferred),
    )


def affinity(a: pb.Affinity, prefix: str, caches: PodCaches) -> model.Affinity:
    key = a.SerializeToString()
    hit = caches.affinities.get(key)
    if hit is not None:
        return hit
    path = f"{prefix}.affinity"
    out = model.Affinity(
        node_affinity=(
            _node_affinity(a.node_affinity, f"{path}.node_affinity")
            if a.HasField("node_affinity")
            else None
        ),
        pod_affinity=(
            _pod_affinity(a.pod_affinity, f"{path}.pod_affinity", caches)
            if a.HasField("pod_affinity")
            else None
        ),
        pod_anti_affinity=(
            _pod_affinity(a.pod_anti_affinity, f"{path}.pod_anti_affinity", caches)
            if a.HasField("pod_anti_affinity")
            else None
        ),
    )
    caches.affinities.put(key, out, len(key))
    return out
