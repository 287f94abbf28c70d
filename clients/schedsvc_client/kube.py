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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from google.protobuf import json_format, message_factory
from google.protobuf.message import Message

from schedsvc.quantity import QuantityError, parse_quantity
from schedsvc.v1 import schedule_pb2 as pb

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

_INT32_MAX = 2**31 - 1


class KubeObjectError(ValueError):
    """A Kubernetes object we cannot convert; `path` is the JSON path of the bad field."""

    def __init__(self, path: str, description: str) -> None:
        super().__init__(f"{path}: {description}" if path else description)
        self.path = path
        self.description = description


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _object(obj: Any, path: str) -> Mapping[str, Any]:
    """A JSON object, or {} for an absent (null) one: YAML writes `tolerations:` as null."""
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise KubeObjectError(path, f"expected an object, got {type(obj).__name__}")
    return obj


def _list(obj: Any, path: str) -> list[Any]:
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise KubeObjectError(path, f"expected a list, got {type(obj).__name__}")
    return obj


def _str(obj: Any, path: str) -> str:
    if obj is None:
        return ""
    if not isinstance(obj, str):
        raise KubeObjectError(path, f"expected a string, got {type(obj).__name__}")
    return obj


def _int(obj: Any, path: str, lo: int = -_INT32_MAX - 1, hi: int = _INT32_MAX) -> int:
    if obj is None:
        return 0
    if isinstance(obj, bool) or not isinstance(obj, int):
        raise KubeObjectError(path, f"expected an integer, got {obj!r}")
    if not lo <= obj <= hi:
        raise KubeObjectError(path, f"{obj} is out of range [{lo}, {hi}]")
    return obj


def _str_map(obj: Any, path: str) -> dict[str, str]:
    """labels / nodeSelector: strings only, as kube's map[string]string unmarshalling demands."""
    out: dict[str, str] = {}
    for k, v in _object(obj, path).items():
        if not isinstance(k, str):
            raise KubeObjectError(path, f"key {k!r} is not a string")
        if not isinstance(v, str):
            raise KubeObjectError(_join(path, k), f"expected a string, got {v!r}")
        out[k] = v
    return out


def _quantity_text(value: Any, path: str) -> str:
    """A quantity as text: kube accepts JSON numbers (`cpu: 2`) as well as strings."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise KubeObjectError(path, f"expected a quantity, got {value!r}")
    text = value if isinstance(value, str) else repr(value)
    try:
        if parse_quantity(text) < 0:
            raise KubeObjectError(path, f"negative quantity {text!r}")
    except QuantityError as exc:
        raise KubeObjectError(path, str(exc)) from None
    return text


def _quantities(obj: Any, path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in _object(obj, path).items():
        if not isinstance(k, str) or not k:
            raise KubeObjectError(path, f"bad resource name {k!r}")
        out[k] = _quantity_text(v, _join(path, k))
    return out


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
        sub = _join(path, key)
        sub_type = fd.message_type
        if sub_type is not None and sub_type.GetOptions().map_entry:
            if isinstance(value, Mapping):
                for k, v in value.items():
                    e = _parse_error({key: {k: v}}, cls)
                    if e is not None:
                        return _join(sub, str(k)), e
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
    obj = _object(obj, path)
    meta = _object(obj.get("metadata"), _join(path, "metadata"))
    spec = _object(obj.get("spec"), _join(path, "spec"))
    status = _object(obj.get("status"), _join(path, "status"))
    name = _str(meta.get("name"), _join(path, "metadata.name"))
    if not name:
        raise KubeObjectError(_join(path, "metadata.name"), "a node needs a name")
    alloc_key = "allocatable" if status.get("allocatable") is not None else "capacity"
    unschedulable = spec.get("unschedulable")
    if unschedulable is not None and not isinstance(unschedulable, bool):
        raise KubeObjectError(_join(path, "spec.unschedulable"), "expected a boolean")
    node = pb.Node(
        name=name,
        labels=_str_map(meta.get("labels"), _join(path, "metadata.labels")),
        allocatable=_quantities(status.get(alloc_key), _join(path, f"status.{alloc_key}")),
        unschedulable=bool(unschedulable),
    )
    if spec.get("taints") is not None:
        _parse_into(node, {"taints": spec["taints"]}, _join(path, "spec"))
    if status.get("images") is not None:
        _parse_into(node, {"images": status["images"]}, _join(path, "status"))
    return node


def namespace_from_kube(obj: Mapping[str, Any], path: str = "") -> pb.Namespace:
    """A v1.Namespace: its labels feed pod affinity's namespaceSelector."""
    obj = _object(obj, path)
    meta = _object(obj.get("metadata"), _join(path, "metadata"))
    name = _str(meta.get("name"), _join(path, "metadata.name"))
    if not name:
        raise KubeObjectError(_join(path, "metadata.name"), "a namespace needs a name")
    return pb.Namespace(
        name=name, labels=_str_map(meta.get("labels"), _join(path, "metadata.labels"))
    )


def _port(obj: Any, path: str) -> pb.ContainerPort:
    port = _object(obj, path)
    # Written by hand: kube spells it hostIP, protobuf's JSON name would be hostIp.
    return pb.ContainerPort(
        container_port=_int(port.get("containerPort"), _join(path, "containerPort"), 0, 65535),
        host_port=_int(port.get("hostPort"), _join(path, "hostPort"), 0, 65535),
        protocol=_str(port.get("protocol"), _join(path, "protocol")),
        host_ip=_str(port.get("hostIP"), _join(path, "hostIP")),
    )


def _container(obj: Any, path: str) -> pb.Container:
    c = _object(obj, path)
    resources = _object(c.get("resources"), _join(path, "resources"))
    ports_path = _join(path, "ports")
    return pb.Container(
        name=_str(c.get("name"), _join(path, "name")),
        image=_str(c.get("image"), _join(path, "image")),
        requests=_quantities(resources.get("requests"), _join(path, "resources.requests")),
        ports=[
            _port(p, f"{ports_path}[{i}]") for i, p in enumerate(_list(c.get("ports"), ports_path))
        ],
    )


_PASS_THROUGH = ("affinity", "tolerations", "topologySpreadConstraints")


def pod_from_kube(
    obj: Mapping[str, Any],
    path: str = "",
    default_selector: pb.LabelSelector | None = None,
) -> pb.Pod:
    """A v1.Pod. Without metadata.uid (a hand-written manifest) the uid is "namespace/name"."""
    obj = _object(obj, path)
    meta = _object(obj.get("metadata"), _join(path, "metadata"))
    spec = _object(obj.get("spec"), _join(path, "spec"))
    status = _object(obj.get("status"), _join(path, "status"))
    name = _str(meta.get("name"), _join(path, "metadata.name"))
    namespace = _str(meta.get("namespace"), _join(path, "metadata.namespace")) or "default"
    uid = _str(meta.get("uid"), _join(path, "metadata.uid"))
    if not uid:
        if not name:
            raise KubeObjectError(_join(path, "metadata.name"), "a pod needs a uid or a name")
        uid = f"{namespace}/{name}"
    containers_path = _join(path, "spec.containers")
    init_path = _join(path, "spec.initContainers")
    pod = pb.Pod(
        uid=uid,
        name=name,
        namespace=namespace,
        labels=_str_map(meta.get("labels"), _join(path, "metadata.labels")),
        scheduler_name=_str(spec.get("schedulerName"), _join(path, "spec.schedulerName")),
        priority=_int(spec.get("priority"), _join(path, "spec.priority")),
        containers=[
            _container(c, f"{containers_path}[{i}]")
            for i, c in enumerate(_list(spec.get("containers"), containers_path))
        ],
        init_containers=[
            _container(c, f"{init_path}[{i}]")
            for i, c in enumerate(_list(spec.get("initContainers"), init_path))
        ],
        overhead=_quantities(spec.get("overhead"), _join(path, "spec.overhead")),
        node_selector=_str_map(spec.get("nodeSelector"), _join(path, "spec.nodeSelector")),
        node_name=_str(spec.get("nodeName"), _join(path, "spec.nodeName")),
        nominated_node_name=_str(
            status.get("nominatedNodeName"), _join(path, "status.nominatedNodeName")
        ),
    )
    passed = {k: spec[k] for k in _PASS_THROUGH if spec.get(k) is not None}
    if passed:
        _parse_into(pod, passed, _join(path, "spec"))
    from .kube_preemption import set_preemption_fields  # it imports this module's helpers

    set_preemption_fields(pod, meta, spec, status, path)
    if default_selector is not None:
        pod.default_selector.CopyFrom(default_selector)
    return pod


# --- DefaultSelector ---------------------------------------------------------------------------

_RS = ("apps/v1", "ReplicaSet")
_SS = ("apps/v1", "StatefulSet")
_RC = ("v1", "ReplicationController")


def _namespace_of(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    ns = meta.get("namespace") if isinstance(meta, Mapping) else None
    return ns if isinstance(ns, str) and ns else "default"


def _name_of(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


def _spec_selector(obj: Mapping[str, Any]) -> Any:
    spec = obj.get("spec")
    return spec.get("selector") if isinstance(spec, Mapping) else None


def _controller_of(pod_obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """metav1.GetControllerOfNoCopy: the first owner reference with controller: true."""
    meta = pod_obj.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    for ref in refs if isinstance(refs, list) else ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return ref
    return None


def _string_pairs(sel: Any) -> dict[str, str] | None:
    if not isinstance(sel, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in sel.items()
    ):
        return None
    return dict(sel)


def default_selector_for(
    pod_obj: Mapping[str, Any], objects: Iterable[Mapping[str, Any]]
) -> pb.LabelSelector | None:
    """kube's helper.DefaultSelector, for PodTopologySpread's default constraints.

    As in kube: every Service in the pod's namespace whose (non-empty) selector matches the
    pod's labels contributes its selector; the pod's *controller* (ownerReferences with
    controller: true) contributes its selector if it is a ReplicationController (v1), ReplicaSet
    or StatefulSet (apps/v1) found by name in the pod's namespace. Selecting the pod is not
    enough for a ReplicaSet: kube looks only at the controller. None when nothing contributes
    (kube's empty selector: no default constraint applies). Malformed selectors are skipped, as
    kube skips a selector it cannot parse.
    """
    objects = list(objects)
    namespace = _namespace_of(pod_obj)
    meta = pod_obj.get("metadata")
    raw_labels = meta.get("labels") if isinstance(meta, Mapping) else None
    labels = _string_pairs(raw_labels) or {}

    label_set: dict[str, str] = {}
    for obj in objects:
        if obj.get("kind") != "Service" or _namespace_of(obj) != namespace:
            continue
        sel = _string_pairs(_spec_selector(obj))
        if not sel:  # a nil selector selects nothing; an empty one adds nothing
            continue
        if all(labels.get(k) == v for k, v in sel.items()):
            label_set.update(sel)

    expressions: list[pb.LabelSelectorRequirement] = []
    owner = _controller_of(pod_obj)
    if owner is not None:
        gvk = (owner.get("apiVersion"), owner.get("kind"))
        target = next(
            (
                o
                for o in objects
                if (o.get("apiVersion"), o.get("kind")) == gvk
                and gvk in (_RS, _SS, _RC)
                and _namespace_of(o) == namespace
                and _name_of(o) == owner.get("name")
            ),
            None,
        )
        if target is not None and gvk == _RC:
            label_set.update(_string_pairs(_spec_selector(target)) or {})
        elif target is not None:
            parsed = _label_selector(_spec_selector(target))
            if parsed is not None:
                for k, v in parsed.match_labels.items():
                    if label_set.get(k, v) == v:
                        label_set[k] = v
                    else:  # both must hold (and cannot): keep both, as selector.Add does
                        expressions.append(
                            pb.LabelSelectorRequirement(key=k, operator="In", values=[v])
                        )
                expressions.extend(parsed.match_expressions)
    if not label_set and not expressions:
        return None
    return pb.LabelSelector(match_labels=label_set, match_expressions=expressions)


_SELECTOR_OPS = {"In", "NotIn", "Exists", "DoesNotExist"}


def _label_selector(sel: Any) -> pb.LabelSelector | None:
    """metav1.LabelSelectorAsSelector for a workload's selector; None if nil or unparsable."""
    if not isinstance(sel, Mapping):
        return None
    out = pb.LabelSelector()
    try:
        json_format.ParseDict(dict(sel), out, ignore_unknown_fields=True)
    except json_format.ParseError:
        return None
    for r in out.match_expressions:
        if r.operator not in _SELECTOR_OPS or (r.operator in ("In", "NotIn")) != bool(r.values):
            return None
    return out


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
        items_path = _join(path, "items")
        for i, item in enumerate(_list(doc["items"], items_path)):
            _flatten(item, f"{items_path}[{i}]", item_kind, out)
        return
    if not isinstance(kind, str) or not kind:
        raise KubeObjectError(_join(path, "kind"), "missing kind")
    out.append((kind, doc, path))


def _read(source: str | os.PathLike[str]) -> str:
    if isinstance(source, os.PathLike):
        with open(source, encoding="utf-8") as f:
            return f.read()
    if "\n" not in source and not source.lstrip().startswith(("{", "[")):
        try:
            with open(source, encoding="utf-8") as f:
                return f.read()
        except OSError:
            pass  # one line of YAML, not a file name
    return source


def load_objects(
    source: str | os.PathLike[str],
) -> tuple[list[pb.Node], list[pb.Pod], list[pb.Namespace]]:
    """Nodes, pods and namespaces from a file name, a path or the JSON/YAML text itself.

    Accepts single objects, `kind: List` / NodeList / PodList, and multi-document YAML. Each
    pod's default_selector is computed from the Services, ReplicaSets, StatefulSets and
    ReplicationControllers in the same input. Other kinds are ignored.
    """
    return _convert(_flat(source))


def _flat(source: str | os.PathLike[str]) -> list[tuple[str, Any, str]]:
    docs = _documents(_read(source))
    flat: list[tuple[str, Any, str]] = []
    _flatten(docs if len(docs) > 1 else (docs[0] if docs else None), "", None, flat)
    return flat


def _convert(
    flat: list[tuple[str, Any, str]],
) -> tuple[list[pb.Node], list[pb.Pod], list[pb.Namespace]]:
    selecting = [obj for kind, obj, _ in flat if kind in _SELECTING_KINDS]
    nodes: list[pb.Node] = []
    pods: list[pb.Pod] = []
    namespaces: list[pb.Namespace] = []
    for kind, obj, path in flat:
        if kind == "Node":
            nodes.append(node_from_kube(obj, path))
        elif kind == "Pod":
            selector = default_selector_for(obj, selecting) if selecting else None
            pods.append(pod_from_kube(obj, path, selector))
        elif kind == "Namespace":
            namespaces.append(namespace_from_kube(obj, path))
    return nodes, pods, namespaces


@dataclass(frozen=True)
class KubeCluster:
    """What `load_cluster` read: the snapshot parts of a `kubectl get -o json` dump."""

    nodes: list[pb.Node] = field(default_factory=list)
    pods: list[pb.Pod] = field(default_factory=list)
    namespaces: list[pb.Namespace] = field(default_factory=list)
    pod_disruption_budgets: list[pb.PodDisruptionBudget] = field(default_factory=list)


def load_cluster(source: str | os.PathLike[str]) -> KubeCluster:
    """load_objects plus policy/v1 PodDisruptionBudgets (what DefaultPreemption reads)."""
    from .kube_preemption import pdb_from_kube

    flat = _flat(source)
    nodes, pods, namespaces = _convert(flat)
    pdbs = [pdb_from_kube(obj, path) for kind, obj, path in flat if kind == "PodDisruptionBudget"]
    return KubeCluster(nodes, pods, namespaces, pdbs)
