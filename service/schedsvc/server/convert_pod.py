"""schedsvc.v1 Pod -> domain Pod, validated as kube's API server does (tolerations, topology
spread constraints, containers and their ports, the summed requests).

Sub-messages that repeat across pods (containers, tolerations, spread constraints, and through
convert_selectors.py selectors and affinities) are converted once per distinct serialized form
and kept in the server's PodCaches: equal bytes mean an equal message, and only messages that
passed validation are cached, so a hit needs no checks. Field paths are built only when an
error is raised. The whole-pod cache is Converter.pod_from_pb (convert.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from schedsvc import model
from schedsvc.errors import InvalidArgument
from schedsvc.resourcehelper import NON_ZERO_DEFAULTS, pod_requests
from schedsvc.v1 import schedule_pb2 as pb

from .cache import PodCaches
from .convert_disruption import pod_disruption
from .convert_pod_group import pod_group_name
from .convert_preemption import preemption_policy, start_time
from .convert_selectors import affinity, label_keys, label_selector
from .convert_volume import pod_volumes
from .counts import check_counts
from .validation import (
    DNS1123_LABEL_RE,
    check_key,
    dns1123_subdomain_error,
    ip_error,
    label_value_error,
    labels,
    pod_level_resources,
    resources,
)

__all__ = ["pod_without_cache", "TAINT_EFFECTS"]

TAINT_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})
PROTOCOLS = frozenset({"TCP", "UDP", "SCTP"})
WHEN_UNSATISFIABLE = frozenset({"DoNotSchedule", "ScheduleAnyway"})
POLICIES = frozenset({"Honor", "Ignore"})

_EMPTY_INTS: Mapping[str, int] = MappingProxyType({})


# --- tolerations, spreading, containers --------------------------------------------------------


def _toleration(
    t: pb.Toleration, prefix: str, index: int, caches: PodCaches
) -> model.Toleration:
    """kube's validateTolerations for one toleration; "" operator means Equal."""
    key = t.SerializeToString()
    hit = caches.tolerations.get(key)
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
    caches.tolerations.put(key, out, len(key))
    return out


def _spread_constraint(
    c: pb.TopologySpreadConstraint, path: str, caches: PodCaches
) -> model.TopologySpreadConstraint:
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
        label_selector(c.label_selector, f"{path}.label_selector", caches)
        if c.HasField("label_selector")
        else None
    )
    keys = label_keys(c.match_label_keys, f"{path}.match_label_keys")
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
    cs: Iterable[pb.TopologySpreadConstraint], prefix: str, caches: PodCaches
) -> tuple[model.TopologySpreadConstraint, ...]:
    key = tuple([c.SerializeToString() for c in cs])
    hit = caches.spreads.get(key)
    if hit is not None:
        return hit
    path = f"{prefix}.topology_spread_constraints"
    out = tuple(_spread_constraint(c, f"{path}[{i}]", caches) for i, c in enumerate(cs))
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(out):
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen:
            raise InvalidArgument(
                f"{path}[{i}].topology_key",
                f"duplicate constraint for {c.topology_key!r} and {c.when_unsatisfiable}",
            )
        seen.add(pair)
    caches.spreads.put(key, out, sum(map(len, key)))
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


def _container(c: pb.Container, prefix: str, index: int, caches: PodCaches) -> model.Container:
    key = c.SerializeToString()
    hit = caches.containers.get(key)
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
    caches.containers.put(key, out, len(key))
    return out


def _containers(
    cs: Iterable[pb.Container], prefix: str, name: str, caches: PodCaches
) -> tuple[model.Container, ...]:
    path = f"{prefix}.{name}"
    out = tuple([_container(c, path, i, caches) for i, c in enumerate(cs)])
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


# --- the pod -------------------------------------------------------------------------------


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


def pod_without_cache(msg: pb.Pod, prefix: str, caches: PodCaches, max_items: int) -> model.Pod:
    """Converter.pod_from_pb without the whole-pod cache (sub-messages are cached)."""
    check_counts(msg, prefix, max_items)
    for name in ("node_name", "nominated_node_name"):
        value = getattr(msg, name)
        if value and (err := dns1123_subdomain_error(value)) is not None:
            raise InvalidArgument(f"{prefix}.{name}", f"not a node name: {err}")
    return _checked_sums(_pod_fields(msg, prefix, caches), prefix)


def _namespace(msg: pb.Pod, prefix: str) -> str:
    namespace = msg.namespace or "default"
    if namespace != "default" and (not DNS1123_LABEL_RE.match(namespace) or len(namespace) > 63):
        raise InvalidArgument(f"{prefix}.namespace", f"{namespace!r} is not a namespace name")
    return namespace


def _pod_fields(msg: pb.Pod, prefix: str, caches: PodCaches) -> model.Pod:
    """The pod with every field validated on its own."""
    namespace = _namespace(msg, prefix)
    # Truthiness and HasField are cheap on upb messages; ListFields is not.
    containers = _containers(msg.containers, prefix, "containers", caches) if msg.containers else ()
    init_containers = (
        _containers(msg.init_containers, prefix, "init_containers", caches)
        if msg.init_containers
        else ()
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
        overhead=(resources(msg.overhead, f"{prefix}.overhead", container=True)
                  if msg.overhead else _EMPTY_INTS),
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
        affinity=affinity(msg.affinity, prefix, caches) if msg.HasField("affinity") else None,
        tolerations=(
            tuple([_toleration(t, prefix, i, caches) for i, t in enumerate(msg.tolerations)])
            if msg.tolerations
            else ()
        ),
        topology_spread_constraints=(
            _spread_constraints(msg.topology_spread_constraints, prefix, caches)
            if msg.topology_spread_constraints
            else ()
        ),
        preemption_policy=preemption_policy(msg, prefix),
        start_time=start_time(msg, prefix) if msg.HasField("start_time") else None,
        terminating_by_preemption=msg.terminating_by_preemption,
        terminating=msg.terminating or msg.terminating_by_preemption,
        node_name=msg.node_name,
        nominated_node_name=msg.nominated_node_name,
        default_selector=(
            _default_selector(msg.default_selector, f"{prefix}.default_selector", caches)
            if msg.HasField("default_selector")
            else None
        ),
        volumes=pod_volumes(msg.volumes, prefix, caches) if msg.volumes else (),
        disruption=pod_disruption(msg, prefix),
        pod_group=pod_group_name(msg, prefix) if msg.HasField("scheduling_group") else "",
    )


_NO_LABELS = model.frozen_map()


def _default_selector(
    s: pb.LabelSelector, path: str, caches: PodCaches
) -> model.LabelSelector | None:
    """Empty is None: as in kube, an empty DefaultSelector means no default constraint applies."""
    out = label_selector(s, path, caches)
    return None if out.is_empty else out
