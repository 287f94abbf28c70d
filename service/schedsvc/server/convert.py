"""schedsvc.v1 messages -> domain types, with the request validation kube's API server would do.

Every error is an InvalidArgument naming the field as the request spells it
(`pods[2].containers[0].requests["cpu"]`), so a client can point at it. Conversion is on the
Schedule hot path, so sub-messages that repeat across pods (containers, affinity, tolerations,
spread constraints) are converted once per distinct serialized form and cached: equal bytes mean
an equal message, and only messages that passed validation are cached, so a hit needs no checks.
Field paths are built only when an error is raised.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from schedsvc import model
from schedsvc.errors import InvalidArgument
from schedsvc.resourcehelper import NON_ZERO_DEFAULTS, pod_requests
from schedsvc.v1 import schedule_pb2 as pb

from .cache import ConversionCache, all_caches
from .convert_preemption import preemption_policy, start_time
from .counts import DEFAULT_MAX_ITEMS, check_counts
from .validation import (
    DNS1123_LABEL_RE,
    INT_RE,
    check_key,
    dns1123_label_error,
    dns1123_subdomain_error,
    field_key,
    ip_error,
    label_value_error,
    labels,
    pod_level_resources,
    qualified_name_error,
    resources,
)

__all__ = [
    "node_from_pb",
    "pod_from_pb",
    "namespace_from_pb",
    "clear_caches",
    "item_limit",
]

NODE_SELECTOR_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})
LABEL_SELECTOR_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})
TAINT_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})
PROTOCOLS = frozenset({"TCP", "UDP", "SCTP"})
WHEN_UNSATISFIABLE = frozenset({"DoNotSchedule", "ScheduleAnyway"})
POLICIES = frozenset({"Honor", "Ignore"})

_EMPTY_INTS: Mapping[str, int] = MappingProxyType({})

# --- caches ------------------------------------------------------------------------------------

# Bytes each conversion cache may hold (server/cache.py: bounded in bytes, and only what a whole
# request validated). Shapes are few in a real cluster; these hold hundreds of them, and all of
# them together stay a small part of a cluster's memory (tests/test_soak.py).
_CACHE_BYTES = 512 * 1024
_CONTAINERS: ConversionCache[bytes, model.Container] = ConversionCache("containers", _CACHE_BYTES)
_AFFINITIES: ConversionCache[bytes, model.Affinity] = ConversionCache("affinities", _CACHE_BYTES)
_TOLERATIONS: ConversionCache[bytes, model.Toleration] = ConversionCache(
    "tolerations", _CACHE_BYTES
)
_SPREADS: ConversionCache[tuple[bytes, ...], tuple[model.TopologySpreadConstraint, ...]] = (
    ConversionCache("spread constraints", _CACHE_BYTES)
)
_SELECTORS: ConversionCache[bytes, model.LabelSelector] = ConversionCache(
    "selectors", _CACHE_BYTES
)
_PODS: ConversionCache[bytes, tuple[Any, ...]] = ConversionCache("pods", 2 * _CACHE_BYTES)


class _ItemLimit:
    """Entries allowed in any repeated or map field of a pod, node or namespace; the server
    sets it from --max-items-per-field at start."""

    max_items = DEFAULT_MAX_ITEMS


item_limit = _ItemLimit()


def clear_caches() -> None:
    """Forget every cached conversion and validity check (tests; memory)."""
    for cache in all_caches():
        cache.clear()


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


def _label_selector(s: pb.LabelSelector, path: str) -> model.LabelSelector:
    """kube's ValidateLabelSelector; match_labels sorted, so equal selectors compare equal."""
    key = s.SerializeToString(deterministic=True)
    hit = _SELECTORS.get(key)
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
    _SELECTORS.put(key, out, len(key))
    return out


def _label_keys(keys: Iterable[str], path: str) -> tuple[str, ...]:
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


def _pod_affinity_term(t: pb.PodAffinityTerm, path: str) -> model.PodAffinityTerm:
    """kube's validatePodAffinityTerm."""
    if not t.topology_key:
        raise InvalidArgument(f"{path}.topology_key", "must not be empty")
    check_key(t.topology_key, f"{path}.topology_key")
    selector = (
        _label_selector(t.label_selector, f"{path}.label_selector")
        if t.HasField("label_selector")
        else None
    )
    ns_selector = (
        _label_selector(t.namespace_selector, f"{path}.namespace_selector")
        if t.HasField("namespace_selector")
        else None
    )
    for i, ns in enumerate(t.namespaces):
        if not DNS1123_LABEL_RE.match(ns) or len(ns) > 63:
            raise InvalidArgument(f"{path}.namespaces[{i}]", f"{ns!r} is not a namespace name")
    match_keys = _label_keys(t.match_label_keys, f"{path}.match_label_keys")
    mismatch_keys = _label_keys(t.mismatch_label_keys, f"{path}.mismatch_label_keys")
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


def _pod_affinity(pa: pb.PodAffinity, path: str) -> model.PodAffinity:
    req_path = f"{path}.required_during_scheduling_ignored_during_execution"
    pref_path = f"{path}.preferred_during_scheduling_ignored_during_execution"
    preferred = []
    for i, w in enumerate(pa.preferred_during_scheduling_ignored_during_execution):
        if not 1 <= w.weight <= 100:
            raise InvalidArgument(f"{pref_path}[{i}].weight", f"{w.weight} is not in 1..100")
        term = _pod_affinity_term(w.pod_affinity_term, f"{pref_path}[{i}].pod_affinity_term")
        preferred.append(model.WeightedPodAffinityTerm(weight=w.weight, term=term))
    return model.PodAffinity(
        required=tuple(
            _pod_affinity_term(t, f"{req_path}[{i}]")
            for i, t in enumerate(pa.required_during_scheduling_ignored_during_execution)
        ),
        preferred=tuple(preferred),
    )


def _affinity(a: pb.Affinity, prefix: str) -> model.Affinity:
    key = a.SerializeToString()
    hit = _AFFINITIES.get(key)
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
            _pod_affinity(a.pod_affinity, f"{path}.pod_affinity")
            if a.HasField("pod_affinity")
            else None
        ),
        pod_anti_affinity=(
            _pod_affinity(a.pod_anti_affinity, f"{path}.pod_anti_affinity")
            if a.HasField("pod_anti_affinity")
            else None
        ),
    )
    _AFFINITIES.put(key, out, len(key))
    return out


# --- tolerations, spreading, containers --------------------------------------------------------


def _toleration(t: pb.Toleration, prefix: str, index: int) -> model.Toleration:
    """kube's validateTolerations for one toleration; "" operator means Equal."""
    key = t.SerializeToString()
    hit = _TOLERATIONS.get(key)
    if hit is not None:
        return hit
    path = f"{prefix}.tolerations[{index}]"
    op = t.operator or "Equal"
    if t.key:
        check_key(t.key, f"{path}.key")
    if op == "Exists":
        if t.value:
            raise InvalidArgument(f"{path}.value", "must be empty when operator is Exists")
    elif op == "Equal":
        if not t.key:
            raise InvalidArgument(
                f"{path}.operator", "must be Exists when key is empty (which matches all keys)"
            )
        err = label_value_error(t.value)
        if err is not None:
            raise InvalidArgument(f"{path}.value", err)
    else:
        raise InvalidArgument(f"{path}.operator", f"unknown toleration operator {t.operator!r}")
    if t.effect and t.effect not in TAINT_EFFECTS:
        raise InvalidArgument(f"{path}.effect", f"unknown taint effect {t.effect!r}")
    seconds = t.toleration_seconds if t.HasField("toleration_seconds") else None
    if seconds is not None and t.effect != "NoExecute":
        raise InvalidArgument(f"{path}.effect", "must be NoExecute when toleration_seconds is set")
    out = model.Toleration(
        key=t.key, operator=op, value=t.value, effect=t.effect, toleration_seconds=seconds
    )
    _TOLERATIONS.put(key, out, len(key))
    return out


def _spread_constraint(c: pb.TopologySpreadConstraint, path: str) -> model.TopologySpreadConstraint:
    """kube's validateTopologySpreadConstraints for one constraint."""
    if c.max_skew < 1:
        raise InvalidArgument(f"{path}.max_skew", f"{c.max_skew} must be at least 1")
    if not c.topology_key:
        raise InvalidArgument(f"{path}.topology_key", "must not be empty")
    check_key(c.topology_key, f"{path}.topology_key")
    if c.when_unsatisfiable not in WHEN_UNSATISFIABLE:
        raise InvalidArgument(
            f"{path}.when_unsatisfiable",
            f"{c.when_unsatisfiable!r} is not DoNotSchedule or ScheduleAnyway",
        )
    min_domains = c.min_domains if c.HasField("min_domains") else None
    if min_domains is not None:
        if min_domains < 1:
            raise InvalidArgument(f"{path}.min_domains", f"{min_domains} must be at least 1")
        if c.when_unsatisfiable != "DoNotSchedule":
            raise InvalidArgument(
                f"{path}.min_domains", "may only be set with when_unsatisfiable DoNotSchedule"
            )
    for name in ("node_affinity_policy", "node_taints_policy"):
        policy = getattr(c, name)
        if policy and policy not in POLICIES:
            raise InvalidArgument(f"{path}.{name}", f"{policy!r} is not Honor or Ignore")
    selector = (
        _label_selector(c.label_selector, f"{path}.label_selector")
        if c.HasField("label_selector")
        else None
    )
    keys = _label_keys(c.match_label_keys, f"{path}.match_label_keys")
    if keys and selector is None:
        raise InvalidArgument(f"{path}.match_label_keys", "must be empty without label_selector")
    return model.TopologySpreadConstraint(
        max_skew=c.max_skew,
        topology_key=c.topology_key,
        when_unsatisfiable=c.when_unsatisfiable,
        label_selector=selector,
        min_domains=min_domains,
        node_affinity_policy=c.node_affinity_policy or "Honor",
        node_taints_policy=c.node_taints_policy or "Ignore",
        match_label_keys=keys,
    )


def _spread_constraints(
    cs: Iterable[pb.TopologySpreadConstraint], prefix: str
) -> tuple[model.TopologySpreadConstraint, ...]:
    key = tuple([c.SerializeToString() for c in cs])
    hit = _SPREADS.get(key)
    if hit is not None:
        return hit
    path = f"{prefix}.topology_spread_constraints"
    out = tuple(_spread_constraint(c, f"{path}[{i}]") for i, c in enumerate(cs))
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(out):
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen:
            raise InvalidArgument(
                f"{path}[{i}].topology_key",
                f"duplicate constraint for {c.topology_key!r} and {c.when_unsatisfiable}",
            )
        seen.add(pair)
    _SPREADS.put(key, out, sum(map(len, key)))
    return out


def _port(p: pb.ContainerPort, path: str) -> model.ContainerPort:
    if not 0 <= p.container_port <= 65535:
        raise InvalidArgument(f"{path}.container_port", f"{p.container_port} is not in 0..65535")
    if not 0 <= p.host_port <= 65535:
        raise InvalidArgument(f"{path}.host_port", f"{p.host_port} is not in 0..65535")
    protocol = p.protocol or "TCP"
    if protocol not in PROTOCOLS:
        raise InvalidArgument(f"{path}.protocol", f"{p.protocol!r} is not TCP, UDP or SCTP")
    if p.host_ip:
        err = ip_error(p.host_ip)
        if err is not None:
            raise InvalidArgument(f"{path}.host_ip", err)
    return model.ContainerPort(
        container_port=p.container_port, host_port=p.host_port, protocol=protocol, host_ip=p.host_ip
    )


def _container(c: pb.Container, prefix: str, index: int) -> model.Container:
    key = c.SerializeToString()
    hit = _CONTAINERS.get(key)
    if hit is not None:
        return hit
    path = f"{prefix}[{index}]"
    out = model.Container(
        name=c.name,
        image=c.image,
        requests=resources(c.requests, f"{path}.requests", container=True),
        ports=tuple(_port(p, f"{path}.ports[{i}]") for i, p in enumerate(c.ports)),
        restart_policy=c.restart_policy,
    )
    _CONTAINERS.put(key, out, len(key))
    return out


def _containers(cs: Iterable[pb.Container], prefix: str, name: str) -> tuple[model.Container, ...]:
    path = f"{prefix}.{name}"
    out = tuple([_container(c, path, i) for i, c in enumerate(cs)])
    for i, c in enumerate(out):  # outside the cache: the same bytes are fine in one list only
        if c.restart_policy:
            _check_restart_policy(c.restart_policy, f"{path}[{i}].restart_policy", name)
    return out


def _check_restart_policy(policy: str, path: str, name: str) -> None:
    """kube's validation with ContainerRestartRules off (its 1.35 default): only init
    containers may set restartPolicy, and only to Always (a sidecar)."""
    if name != "init_containers":
        raise InvalidArgument(path, "only init containers may set restart_policy")
    if policy != model.CONTAINER_RESTART_POLICY_ALWAYS:
        raise InvalidArgument(path, f"{policy!r} is not supported: only \"Always\" (a sidecar)")


# --- top level ---------------------------------------------------------------------------------


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _identity_prefix(uid: bytes, name: bytes) -> bytes:
    """How fields 1 (uid) and 2 (name) open a serialized Pod (wire format, field order)."""
    if len(uid) < 0x80 and len(name) < 0x80:
        if name:
            return b"\n%c%b\x12%c%b" % (len(uid), uid, len(name), name)
        return b"\n%c%b" % (len(uid), uid)
    out = b"\n" + _varint(len(uid)) + uid
    return out + b"\x12" + _varint(len(name)) + name if name else out


# The whole-pod cache stores every field but uid and name, in constructor order, so a hit is one
# positional constructor call (kwargs cost a microsecond more).
_POD_FIELDS = tuple(f.name for f in dataclasses.fields(model.Pod))
if _POD_FIELDS[:2] != ("uid", "name"):  # pragma: no cover - guards a model change
    raise ImportError("convert.py expects model.Pod to open with uid, name")
_pod_rest = operator.attrgetter(*_POD_FIELDS[2:])


def pod_from_pb(msg: pb.Pod, field_prefix: str) -> model.Pod:
    """A validated domain Pod; errors name fields under `field_prefix` (e.g. "pods[2]").

    Pods to schedule mostly differ only in uid and name, so the rest of the serialized message
    is a cache key for the whole converted pod, and the pods it yields share a shape token
    (model.Pod.shape) that lets the engine memoize per-shape work. The serializer writes fields
    in number order, so the rest is what follows the uid/name prefix; if the bytes do not open
    with exactly that prefix we convert without the cache. Bound pods (node_name set) skip this
    cache: they differ in node_name and would only churn it; their sub-messages are still cached.
    """
    uid = msg.uid
    if not uid:
        raise InvalidArgument(f"{field_prefix}.uid", "a pod needs a uid")
    if msg.node_name:
        return _pod(msg, field_prefix)
    name = msg.name
    data = msg.SerializeToString()
    prefix = _identity_prefix(uid.encode(), name.encode())
    if not data.startswith(prefix):  # pragma: no cover - another serializer's field order
        return _pod(msg, field_prefix)
    key = data[len(prefix) :]
    rest = _PODS.get(key)
    if rest is None:
        # a fresh shape token: pods converted from these bytes are equal but for uid and name
        rest = (*_pod_rest(_pod(msg, field_prefix))[:-1], object())
        _PODS.put(key, rest, len(key))
    return model.Pod(uid, name, *rest)


def _checked_sums(pod: model.Pod, prefix: str) -> model.Pod:
    """The pod, once its summed requests (as the scheduler sums them, scoring defaults
    included) are within MAX_QUANTITY, so no sum the engine makes can leave int64."""
    for non_missing in ({}, NON_ZERO_DEFAULTS):
        for res, total in pod_requests(pod, non_missing).items():
            if total > model.MAX_QUANTITY:
                raise InvalidArgument(
                    f"{prefix}.containers",
                    f"the pod's summed {res} requests ({total}) are above the limit "
                    f"{model.MAX_QUANTITY}",
                )
    return pod


def _pod(msg: pb.Pod, prefix: str) -> model.Pod:
    """pod_from_pb without the whole-pod cache (sub-messages are cached)."""
    check_counts(msg, prefix, item_limit.max_items)
    for name in ("node_name", "nominated_node_name"):
        value = getattr(msg, name)
        if value and (err := dns1123_subdomain_error(value)) is not None:
            raise InvalidArgument(f"{prefix}.{name}", f"not a node name: {err}")
    return _checked_sums(_pod_fields(msg, prefix), prefix)


def _pod_fields(msg: pb.Pod, prefix: str) -> model.Pod:
    """The pod with every field validated on its own."""
    namespace = msg.namespace or "default"
    if namespace != "default" and (not DNS1123_LABEL_RE.match(namespace) or len(namespace) > 63):
        raise InvalidArgument(f"{prefix}.namespace", f"{namespace!r} is not a namespace name")
    # Truthiness and HasField are cheap on upb messages; ListFields is not.
    containers = _containers(msg.containers, prefix, "containers") if msg.containers else ()
    init_containers = (
        _containers(msg.init_containers, prefix, "init_containers") if msg.init_containers else ()
    )
    return model.Pod(
        uid=msg.uid,
        name=msg.name,
        namespace=namespace,
        labels=labels(msg.labels, f"{prefix}.labels") if msg.labels else _NO_LABELS,
        scheduler_name=msg.scheduler_name or "default-scheduler",
        priority=msg.priority,
        containers=containers,
        init_containers=init_containers,
        overhead=(
            resources(msg.overhead, f"{prefix}.overhead", container=True)
            if msg.overhead
            else _EMPTY_INTS
        ),
        node_selector=(
            labels(msg.node_selector, f"{prefix}.node_selector")
            if msg.node_selector
            else _NO_LABELS
        ),
        # Supported resources only; not checked against the containers' aggregate as kube's
        # API server does: kube-scheduler takes them as given (recorded pods carry smaller ones).
        requests=(
            pod_level_resources(msg.resources.requests, f"{prefix}.resources.requests")
            if msg.HasField("resources")
            else _EMPTY_INTS
        ),
        affinity=_affinity(msg.affinity, prefix) if msg.HasField("affinity") else None,
        tolerations=(
            tuple([_toleration(t, prefix, i) for i, t in enumerate(msg.tolerations)])
            if msg.tolerations
            else ()
        ),
        topology_spread_constraints=(
            _spread_constraints(msg.topology_spread_constraints, prefix)
            if msg.topology_spread_constraints
            else ()
        ),
        preemption_policy=preemption_policy(msg, prefix),
        start_time=start_time(msg, prefix) if msg.HasField("start_time") else None,
        terminating_by_preemption=msg.terminating_by_preemption,
        node_name=msg.node_name,
        nominated_node_name=msg.nominated_node_name,
        default_selector=(
            _default_selector(msg.default_selector, f"{prefix}.default_selector")
            if msg.HasField("default_selector")
            else None
        ),
    )


_NO_LABELS = model.frozen_map()


def _default_selector(s: pb.LabelSelector, path: str) -> model.LabelSelector | None:
    """Empty is None: as in kube, an empty DefaultSelector means no default constraint applies."""
    out = _label_selector(s, path)
    return None if out.is_empty else out


def node_from_pb(msg: pb.Node, field_prefix: str) -> model.Node:
    """A validated domain Node; errors name fields under `field_prefix` (e.g. "upsert_nodes[0]")."""
    if not msg.name:
        raise InvalidArgument(f"{field_prefix}.name", "a node needs a name")
    if (err := dns1123_subdomain_error(msg.name)) is not None:
        raise InvalidArgument(f"{field_prefix}.name", err)
    check_counts(msg, field_prefix, item_limit.max_items)
    taints = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(msg.taints):
        path = f"{field_prefix}.taints[{i}]"
        check_key(t.key, f"{path}.key")
        err = label_value_error(t.value)
        if err is not None:
            raise InvalidArgument(f"{path}.value", err)
        if t.effect not in TAINT_EFFECTS:
            raise InvalidArgument(f"{path}.effect", f"unknown taint effect {t.effect!r}")
        if (t.key, t.effect) in seen:
            raise InvalidArgument(path, f"duplicate taint {t.key!r} with effect {t.effect}")
        seen.add((t.key, t.effect))
        taints.append(model.Taint(key=t.key, value=t.value, effect=t.effect))
    images = []
    for i, im in enumerate(msg.images):
        if im.size_bytes < 0:
            raise InvalidArgument(f"{field_prefix}.images[{i}].size_bytes", "must not be negative")
        images.append(model.ContainerImage(names=tuple(im.names), size_bytes=im.size_bytes))
    return model.Node(
        name=msg.name,
        labels=labels(msg.labels, f"{field_prefix}.labels"),
        taints=tuple(taints),
        allocatable=resources(msg.allocatable, f"{field_prefix}.allocatable"),
        unschedulable=msg.unschedulable,
        images=tuple(images),
    )


def namespace_from_pb(msg: pb.Namespace, field_prefix: str) -> model.Namespace:
    """A validated domain Namespace (its labels feed pod affinity's namespace_selector)."""
    if not msg.name:
        raise InvalidArgument(f"{field_prefix}.name", "a namespace needs a name")
    if (err := dns1123_label_error(msg.name)) is not None:
        raise InvalidArgument(f"{field_prefix}.name", err)
    check_counts(msg, field_prefix, item_limit.max_items)
    return model.Namespace(name=msg.name, labels=labels(msg.labels, f"{field_prefix}.labels"))
