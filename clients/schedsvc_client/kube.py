"""Kubernetes objects (as `kubectl get -o json|yaml` prints them) -> schedsvc.v1 messages.

Our proto keeps Kubernetes' field names in snake_case, so the affinity, tolerations,
topologySpreadConstraints, taints and images parts parse with protobuf's JSON mapping unchanged;
only metadata, containers and quantities are flattened here. Errors name the JSON path of the
bad field (`items[3].spec.containers[0].resources.requests.cpu`), so a user can find it in a
large dump. Quantities are checked here too, so the error points into the user's file rather than
at a field of the gRPC request.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from google.protobuf import json_format, message_factory
from google.protobuf.message import Message

from schedsvc.v1 import schedule_pb2 as pb

from .kube_context import PriorityClasses, default_selector_for
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
from .kube_resources import (
    container_requests,
    container_statuses,
    pod_level_requests,
    resize_infeasible,
    resized_requests,
)
from .unmodelled import FieldPolicy, LoadReport, UnmodelledFieldWarning, audit_pending_pod

__all__ = [
    "KubeObjectError",
    "node_from_kube",
    "pod_from_kube",
    "namespace_from_kube",
    "default_selector_for",
    "load_objects",
    "KubeCluster",
    "load_cluster",
]

# --- pass-through parts, parsed by protobuf's JSON mapping -------------------------------------

_PARSE_PREFIX = re.compile(r"^(Failed to parse \w+ field: )+")


def _parse_error(data: Mapping[str, Any], cls: type[Message]) -> str | None:
    try:
        json_format.ParseDict(dict(data), cls(), ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        return _PARSE_PREFIX.sub("", str(exc)).rstrip(".") or str(exc)
    return None


def _class(desc: Any) -> type[Message]:
    cls: type[Message] = message_factory.GetMessageClass(desc)
    return cls


def _locate(data: Any, cls: type[Message], path: str, why: str) -> tuple[str, str]:
    """Narrow a ParseError down to the innermost bad field. Error path only: it reparses."""
    if not isinstance(data, Mapping):
        return path, f"expected an object, got {type(data).__name__}"
    desc = cls.DESCRIPTOR
    for key, value in data.items():
        fd = desc.fields_by_camelcase_name.get(key) or desc.fields_by_name.get(key)
        if fd is None:
            continue
        err = _parse_error({key: value}, cls)
        if err is None:
            continue
        sub = join(path, key)
        sub_type = fd.message_type
        if sub_type is not None and sub_type.GetOptions().map_entry:
            if isinstance(value, Mapping):
                for k, v in value.items():
                    e = _parse_error({key: {k: v}}, cls)
                    if e is not None:
                        return join(sub, str(k)), e
        elif fd.is_repeated:
            if isinstance(value, list):
                for i, item in enumerate(value):
                    e = _parse_error({key: [item]}, cls)
                    if e is not None:
                        if sub_type is not None and isinstance(item, Mapping):
                            return _locate(item, _class(sub_type), f"{sub}[{i}]", e)
                        return f"{sub}[{i}]", e
        elif sub_type is not None and isinstance(value, Mapping):
            return _locate(value, _class(sub_type), sub, err)
        return sub, err
    return path, why


def _parse_into(message: Message, data: Mapping[str, Any], path: str) -> None:
    """ParseDict `data` into `message`; on failure, a KubeObjectError at the bad field."""
    try:
        json_format.ParseDict(dict(data), message, ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        where, why = _locate(data, type(message), path, str(exc))
        raise KubeObjectError(where, why) from None


# --- objects -----------------------------------------------------------------------------------


def node_from_kube(obj: Mapping[str, Any], path: str = "") -> pb.Node:
    """A v1.Node. Allocatable falls back to capacity, as the API server defaults it."""
    obj = as_object(obj, path)
    meta, spec, status = object_parts(obj, path)
    name = as_str(meta.get("name"), join(path, "metadata.name"))
    if not name:
        raise KubeObjectError(join(path, "metadata.name"), "a node needs a name")
    alloc_key = "allocatable" if status.get("allocatable") is not None else "capacity"
    unschedulable = spec.get("unschedulable")
    if unschedulable is not None and not isinstance(unschedulable, bool):
        raise KubeObjectError(join(path, "spec.unschedulable"), "expected a boolean")
    node = pb.Node(
        name=name,
        labels=str_map(meta.get("labels"), join(path, "metadata.labels")),
        allocatable=quantities(status.get(alloc_key), join(path, f"status.{alloc_key}")),
        unschedulable=bool(unschedulable),
    )
    if spec.get("taints") is not None:
        _parse_into(node, {"taints": spec["taints"]}, join(path, "spec"))
    if status.get("images") is not None:
        _parse_into(node, {"images": status["images"]}, join(path, "status"))
    return node


def namespace_from_kube(obj: Mapping[str, Any], path: str = "") -> pb.Namespace:
    """A v1.Namespace: its labels feed pod affinity's namespaceSelector."""
    obj = as_object(obj, path)
    meta = as_object(obj.get("metadata"), join(path, "metadata"))
    name = as_str(meta.get("name"), join(path, "metadata.name"))
    if not name:
        raise KubeObjectError(join(path, "metadata.name"), "a namespace needs a name")
    return pb.Namespace(
        name=name, labels=str_map(meta.get("labels"), join(path, "metadata.labels"))
    )


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
    name = as_str(meta.get("name"), join(path, "metadata.name"))
    namespace = as_str(meta.get("namespace"), join(path, "metadata.namespace")) or "default"
    uid = as_str(meta.get("uid"), join(path, "metadata.uid"))
    if not uid:
        if not name:
            raise KubeObjectError(join(path, "metadata.name"), "a pod needs a uid or a name")
        uid = f"{namespace}/{name}"
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
    passed = {k: spec[k] for k in _PASS_THROUGH if spec.get(k) is not None}
    if passed:
        _parse_into(pod, passed, join(path, "spec"))
    from .kube_preemption import set_preemption_fields  # it imports this module's helpers

    set_preemption_fields(pod, meta, spec, status, path)
    if default_selector is not None:
        pod.default_selector.CopyFrom(default_selector)
    return pod


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


# --- files -------------------------------------------------------------------------------------

_SELECTING_KINDS = {"Service", "ReplicaSet", "StatefulSet", "ReplicationController"}


def _documents(text: str) -> list[Any]:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return [json.loads(text)]
        except json.JSONDecodeError:
            pass  # YAML flow style also starts with { or [
    try:
        return [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise KubeObjectError("", f"neither JSON nor YAML: {exc}") from None


def _flatten(doc: Any, path: str, kind_hint: str | None, out: list[tuple[str, Any, str]]) -> None:
    """Unwrap lists (`kind: List`, NodeList, PodList, plain arrays) into (kind, object, path)."""
    if doc is None:
        return
    if isinstance(doc, list):
        for i, item in enumerate(doc):
            _flatten(item, f"{path}[{i}]", kind_hint, out)
        return
    if not isinstance(doc, Mapping):
        raise KubeObjectError(path, f"expected a Kubernetes object, got {type(doc).__name__}")
    kind = doc.get("kind", kind_hint)
    if "items" in doc and (kind is None or (isinstance(kind, str) and kind.endswith("List"))):
        # Raw API lists (NodeList) omit each item's kind; `kubectl get` Lists keep it.
        item_kind = kind[: -len("List")] if kind and kind != "List" else None
        items_path = join(path, "items")
        for i, item in enumerate(as_list(doc["items"], items_path)):
            _flatten(item, f"{items_path}[{i}]", item_kind, out)
        return
    if not isinstance(kind, str) or not kind:
        raise KubeObjectError(join(path, "kind"), "missing kind")
    out.append((kind, doc, path))


def _read(source: str | os.PathLike[str]) -> tuple[str, str | None]:
    """The text, and the file name it came from (None for text given as such)."""
    if isinstance(source, os.PathLike):
        with open(source, encoding="utf-8") as f:
            return f.read(), os.fspath(source)
    if "\n" not in source and not source.lstrip().startswith(("{", "[")):
        try:
            with open(source, encoding="utf-8") as f:
                return f.read(), source
        except OSError:
            pass  # one line of YAML, not a file name
    return source, None


Source = str | os.PathLike[str]


def load_objects(
    source: Source | Sequence[Source],
    *,
    ignore_unmodelled: bool = False,
    report: LoadReport | None = None,
    reschedule_all: bool = False,
) -> tuple[list[pb.Node], list[pb.Pod], list[pb.Namespace]]:
    """Nodes, pods and namespaces from a file name, a path or the JSON/YAML text itself, or a
    list of those read as one input.

    Accepts single objects, `kind: List` / NodeList / PodList, and multi-document YAML. Each
    pod's default_selector is computed from the Services, ReplicaSets, StatefulSets and
    ReplicationControllers anywhere in the input, and a pod without spec.priority takes its
    PriorityClass's value from it. With several sources, an error's path starts with the
    source's file name (`pods.json:items[3]...`) or its index (`[1].items[3]...`). Succeeded
    and Failed pods are left out, as kube-scheduler leaves them out. A pod to schedule (no
    spec.nodeName) that uses a field kube acts on and we do not model is refused
    (KubeObjectError naming the field), unless `ignore_unmodelled`: then the field is dropped
    and counted in `report` (a warning if there is none). `reschedule_all` reads every pod as
    a new one to schedule: spec.nodeName and status dropped.
    """
    return _convert(_flat(source), ignore_unmodelled, report, reschedule_all)


def _flat(source: Source | Sequence[Source]) -> list[tuple[str, Any, str]]:
    """Every object of the input as (kind, object, JSON path)."""
    several = not isinstance(source, str | os.PathLike)
    sources: Sequence[Source] = [source] if isinstance(source, str | os.PathLike) else source
    flat: list[tuple[str, Any, str]] = []
    for i, one in enumerate(sources):
        text, file_name = _read(one)
        docs = _documents(text)
        doc = docs if len(docs) > 1 else (docs[0] if docs else None)
        _flatten(doc, (f"{file_name}:" if file_name else f"[{i}]") if several else "", None, flat)
    return flat


def _convert(
    flat: list[tuple[str, Any, str]], ignore_unmodelled: bool, report: LoadReport | None,
    reschedule_all: bool,
) -> tuple[list[pb.Node], list[pb.Pod], list[pb.Namespace]]:
    selecting = [obj for kind, obj, _ in flat if kind in _SELECTING_KINDS]
    classes = PriorityClasses.from_objects(obj for kind, obj, _ in flat if kind == "PriorityClass")
    own = report if report is not None else LoadReport()
    nodes: list[pb.Node] = []
    pods: list[pb.Pod] = []
    namespaces: list[pb.Namespace] = []
    for kind, obj, path in flat:
        if kind == "Node":
            nodes.append(node_from_kube(obj, path))
        elif kind == "Pod":
            if is_terminal(obj):
                own.terminal_pods += 1
                continue
            if reschedule_all:
                obj = _as_new_pod(obj, path)
            selector = default_selector_for(obj, selecting) if selecting else None
            pods.append(pod_from_kube(obj, path, selector, ignore_unmodelled=ignore_unmodelled,
                                      report=own, priority_classes=classes))
        elif kind == "Namespace":
            namespaces.append(namespace_from_kube(obj, path))
        elif kind not in _SELECTING_KINDS and kind not in ("PriorityClass", "PodDisruptionBudget"):
            own.unused_kinds[kind] += 1
    if report is None and own.ignored:
        warnings.warn(own.render(), UnmodelledFieldWarning, stacklevel=3)
    return nodes, pods, namespaces


def _as_new_pod(obj: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The pod as it was created: no node, no status (statuses describe the old placement)."""
    spec = dict(as_object(obj.get("spec"), join(path, "spec")))
    spec.pop("nodeName", None)
    return {**obj, "spec": spec, "status": {}}


@dataclass(frozen=True)
class KubeCluster:
    """What `load_cluster` read: the snapshot parts of a `kubectl get -o json` dump."""

    nodes: list[pb.Node] = field(default_factory=list)
    pods: list[pb.Pod] = field(default_factory=list)
    namespaces: list[pb.Namespace] = field(default_factory=list)
    pod_disruption_budgets: list[pb.PodDisruptionBudget] = field(default_factory=list)


def load_cluster(
    source: Source | Sequence[Source],
    *,
    ignore_unmodelled: bool = False,
    report: LoadReport | None = None,
    reschedule_all: bool = False,
) -> KubeCluster:
    """load_objects plus policy/v1 PodDisruptionBudgets (what DefaultPreemption reads)."""
    from .kube_preemption import pdb_from_kube

    flat = _flat(source)
    nodes, pods, namespaces = _convert(flat, ignore_unmodelled, report, reschedule_all)
    pdbs = [pdb_from_kube(obj, path) for kind, obj, path in flat if kind == "PodDisruptionBudget"]
    return KubeCluster(nodes, pods, namespaces, pdbs)
