"""A v1.Pod from Kubernetes JSON: identity, containers and their requests as kube counts them
(an in-place resize included), priority, the pass-through scheduling parts, the fields
preemption reads and those a simulated drain reads (kube_disruption.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedsvc.v1 import schedule_pb2 as pb

from .kube_context import PriorityClasses
from .kube_disruption import set_disruption
from .kube_json import (
    KubeObjectError,
    as_int,
    as_list,
    as_object,
    as_str,
    join,
    object_parts,
    quantities,
    str_map,
)
from .kube_pod_groups import scheduling_group_into
from .kube_preemption import set_preemption_fields
from .kube_proto import parse_into
from .kube_resources import (
    container_requests,
    container_statuses,
    pod_level_requests,
    resize_infeasible,
    resized_requests,
)
from .kube_volumes import volumes_from_kube
from .unmodelled import FieldPolicy, LoadReport, audit_pending_pod

__all__ = ["TERMINAL_PHASES", "is_terminal", "pod_from_kube"]


def _port(obj: Any, path: str, host_network: bool) -> pb.ContainerPort:
    port = as_object(obj, path)
    container_port = as_int(port.get("containerPort"), join(path, "containerPort"), 0, 65535)
    host_port = as_int(port.get("hostPort"), join(path, "hostPort"), 0, 65535)
    if host_network and host_port == 0:  # SetDefaults_Pod: hostNetwork ports are host ports
        host_port = container_port
    # Written by hand: kube spells it hostIP, protobuf's JSON name would be hostIp.
    return pb.ContainerPort(
        container_port=container_port,
        host_port=host_port,
        protocol=as_str(port.get("protocol"), join(path, "protocol")),
        host_ip=as_str(port.get("hostIP"), join(path, "hostIP")),
    )


def _container(obj: Any, path: str, init: bool, host_network: bool) -> pb.Container:
    c = as_object(obj, path)
    ports_path = join(path, "ports")
    policy = as_str(c.get("restartPolicy"), join(path, "restartPolicy"))
    if policy and (not init or policy != "Always"):
        # kube 1.35's validation, ContainerRestartRules being off by default
        raise KubeObjectError(
            join(path, "restartPolicy"),
            "only init containers may set it, and only to Always (a sidecar)",
        )
    ports = as_list(c.get("ports"), ports_path)
    return pb.Container(
        name=as_str(c.get("name"), join(path, "name")),
        image=as_str(c.get("image"), join(path, "image")),
        requests=container_requests(c, path),
        ports=[_port(p, f"{ports_path}[{i}]", host_network) for i, p in enumerate(ports)],
        restart_policy=policy,
    )


_PASS_THROUGH = ("affinity", "tolerations", "topologySpreadConstraints")
TERMINAL_PHASES = ("Succeeded", "Failed")


def is_terminal(obj: Mapping[str, Any]) -> bool:
    """A Succeeded or Failed pod: kube-scheduler's pod informer filters it out, so it holds
    nothing on its node and is never scheduled."""
    status = obj.get("status")
    return isinstance(status, Mapping) and status.get("phase") in TERMINAL_PHASES


def pod_from_kube(
    obj: Mapping[str, Any],
    path: str = "",
    default_selector: pb.LabelSelector | None = None,
    *,
    ignore_unmodelled: bool = False,
    report: LoadReport | None = None,
    priority_classes: PriorityClasses | None = None,
) -> pb.Pod:
    """A v1.Pod. Without metadata.uid (a hand-written manifest) the uid is "namespace/name".

    A pod without spec.nodeName is one to schedule: a field kube acts on that we do not model
    (unmodelled.py) is refused with a KubeObjectError, or with `ignore_unmodelled` dropped and
    counted in `report`. Requests are read as kube counts them: API-server defaults applied,
    and for a pod on a node, an in-place resize in progress (kube_resources.py).
    """
    obj = as_object(obj, path)
    meta, spec, status = object_parts(obj, path)
    name, namespace, uid = _identity(meta, path)
    node_name = as_str(spec.get("nodeName"), join(path, "spec.nodeName"))
    policy = FieldPolicy(ignore_unmodelled, report)
    if not node_name:
        audit_pending_pod(obj, path, policy, uid)
    host_network = spec.get("hostNetwork") is True
    containers = _containers(spec, path, "containers", host_network)
    init_containers = _containers(spec, path, "initContainers", host_network)
    if node_name:
        _apply_resize(containers, init_containers, status, join(path, "status"))
    pod = pb.Pod(
        uid=uid,
        name=name,
        namespace=namespace,
        labels=str_map(meta.get("labels"), join(path, "metadata.labels")),
        scheduler_name=as_str(spec.get("schedulerName"), join(path, "spec.schedulerName")),
        priority=_priority(spec, path, node_name, policy, priority_classes, uid),
        containers=containers,
        init_containers=init_containers,
        overhead=quantities(spec.get("overhead"), join(path, "spec.overhead")),
        node_selector=str_map(spec.get("nodeSelector"), join(path, "spec.nodeSelector")),
        node_name=node_name,
        nominated_node_name=as_str(
            status.get("nominatedNodeName"), join(path, "status.nominatedNodeName")
        ),
    )
    if spec.get("resources") is not None:
        pod.resources.requests.update(
            pod_level_requests(spec, path, containers, init_containers)
        )
    pod.volumes.extend(volumes_from_kube(spec, path))
    passed = {k: spec[k] for k in _PASS_THROUGH if spec.get(k) is not None}
    if passed:
        parse_into(pod, passed, join(path, "spec"))
    set_preemption_fields(pod, meta, spec, status, path)
    set_disruption(pod, meta, path)
    scheduling_group_into(pod, spec, path)
    if default_selector is not None:
        pod.default_selector.CopyFrom(default_selector)
    return pod


def _identity(meta: Mapping[str, Any], path: str) -> tuple[str, str, str]:
    """name, namespace ("default" when unset) and uid ("namespace/name" when unset)."""
    name = as_str(meta.get("name"), join(path, "metadata.name"))
    namespace = as_str(meta.get("namespace"), join(path, "metadata.namespace")) or "default"
    uid = as_str(meta.get("uid"), join(path, "metadata.uid"))
    if not uid:
        if not name:
            raise KubeObjectError(join(path, "metadata.name"), "a pod needs a uid or a name")
        uid = f"{namespace}/{name}"
    return name, namespace, uid


def _containers(
    spec: Mapping[str, Any], path: str, key: str, host_network: bool
) -> list[pb.Container]:
    list_path = join(path, f"spec.{key}")
    return [
        _container(c, f"{list_path}[{i}]", key == "initContainers", host_network)
        for i, c in enumerate(as_list(spec.get(key), list_path))
    ]


def _apply_resize(
    containers: list[pb.Container],
    init_containers: list[pb.Container],
    status: Mapping[str, Any],
    status_path: str,
) -> None:
    """A pod on a node counts its containers' resize status as kube does (app containers and
    sidecars; a plain init container's status is not consulted)."""
    statuses = container_statuses(status, status_path)
    if not statuses:
        return
    infeasible = resize_infeasible(status, status_path)
    for c in (*containers, *(c for c in init_containers if c.restart_policy == "Always")):
        requests = resized_requests(dict(c.requests), statuses.get(c.name), infeasible)
        if requests != c.requests:
            c.ClearField("requests")
            c.requests.update(requests)


def _priority(
    spec: Mapping[str, Any],
    path: str,
    node_name: str,
    policy: FieldPolicy,
    classes: PriorityClasses | None,
    pod: str,
) -> int:
    """spec.priority, or what the Priority admission plugin would set from the class."""
    if spec.get("priority") is not None:
        return as_int(spec.get("priority"), join(path, "spec.priority"))
    class_path = join(path, "spec.priorityClassName")
    class_name = as_str(spec.get("priorityClassName"), class_path)
    value = (classes or PriorityClasses()).resolve(class_name)
    if value is not None:
        return value
    if not node_name:  # a pod on a node: its priority matters only to preemption, not run here
        policy.unmodelled(
            "spec.priorityClassName",
            f"the PriorityClass {class_name!r} is not in the input and spec.priority is unset; "
            "priority decides which nominated pods count for this pod",
            class_path,
            pod,
        )
    return 0
