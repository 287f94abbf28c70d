"""What other objects add to a pod: its DefaultSelector (Services and controllers) and priority.

kube's PodTopologySpread applies its default constraints through the selectors of the Services
and the controller that select a pod; the Priority admission plugin sets spec.priority from the
pod's PriorityClass (or the cluster's globalDefault one). A dump of a cluster carries those
objects beside the pods, so the reader resolves both from the same input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format

from schedsvc.v1 import schedule_pb2 as pb

__all__ = ["PriorityClasses", "default_selector_for"]

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


# The two classes every cluster has (scheduling.k8s.io SystemPriorityClasses).
_SYSTEM_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}


@dataclass(frozen=True, slots=True)
class PriorityClasses:
    """PriorityClass values by name, as the Priority admission plugin resolves spec.priority."""

    values: Mapping[str, int] = field(default_factory=lambda: dict(_SYSTEM_CLASSES))
    global_default: int | None = None  # the value of the class marked globalDefault

    @classmethod
    def from_objects(cls, objects: Iterable[Mapping[str, Any]]) -> PriorityClasses:
        """scheduling.k8s.io PriorityClasses among `objects` (malformed ones are skipped)."""
        values = dict(_SYSTEM_CLASSES)
        default: int | None = None
        for obj in objects:
            if obj.get("kind") != "PriorityClass":
                continue
            name, value = _name_of(obj), obj.get("value")
            if not name or isinstance(value, bool) or not isinstance(value, int):
                continue
            values[name] = value
            if obj.get("globalDefault") is True:
                default = value if default is None else min(default, value)
        return cls(values, default)

    def resolve(self, class_name: str) -> int | None:
        """The pod's priority: its class's value, the global default without a class, or None
        for a class the input does not define (the API server would have refused the pod)."""
        if not class_name:
            return self.global_default if self.global_default is not None else 0
        return self.values.get(class_name)
