"""What DefaultPreemption reads, from Kubernetes JSON: a pod's preemptionPolicy, startTime and
whether it is terminating because of a preemption, and policy/v1 PodDisruptionBudgets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedsvc.v1 import schedule_pb2 as pb

from .kube_json import KubeObjectError, as_int, as_object, as_str, join, object_parts
from .kube_proto import parse_into

__all__ = ["set_preemption_fields", "pdb_from_kube"]

_POLICIES = ("PreemptLowerPriority", "Never")


def terminating_by_preemption(meta: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """kube's podTerminatingByPreemption: a deletionTimestamp and, as the first
    DisruptionTarget condition, status True with reason PreemptionByScheduler."""
    if not meta.get("deletionTimestamp"):
        return False
    conditions = status.get("conditions")
    for c in conditions if isinstance(conditions, list) else ():
        if isinstance(c, Mapping) and c.get("type") == "DisruptionTarget":
            return c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler"
    return False


def set_preemption_fields(
    pod: pb.Pod, meta: Mapping[str, Any], spec: Mapping[str, Any], status: Mapping[str, Any],
    path: str,
) -> None:
    policy = as_str(spec.get("preemptionPolicy"), join(path, "spec.preemptionPolicy"))
    if policy and policy not in _POLICIES:
        raise KubeObjectError(
            join(path, "spec.preemptionPolicy"), f"unknown preemption policy {policy!r}"
        )
    pod.preemption_policy = policy
    started = as_str(status.get("startTime"), join(path, "status.startTime"))
    if started:
        try:
            pod.start_time.FromJsonString(started)
        except ValueError as exc:
            raise KubeObjectError(join(path, "status.startTime"), str(exc)) from None
    pod.terminating_by_preemption = terminating_by_preemption(meta, status)
    pod.terminating = bool(meta.get("deletionTimestamp"))


def pdb_from_kube(obj: Mapping[str, Any], path: str = "") -> pb.PodDisruptionBudget:
    """A policy/v1 PodDisruptionBudget: selector, status.disruptionsAllowed and the names in
    status.disruptedPods (what kube's preemption reads; minAvailable/maxUnavailable are
    already folded into disruptionsAllowed by the disruption controller)."""
    obj = as_object(obj, path)
    api = obj.get("apiVersion", "policy/v1")
    if api != "policy/v1":
        raise KubeObjectError(
            join(path, "apiVersion"), f"only policy/v1 PodDisruptionBudgets are read, not {api!r}"
        )
    meta, spec, status = object_parts(obj, path)
    name = as_str(meta.get("name"), join(path, "metadata.name"))
    if not name:
        raise KubeObjectError(join(path, "metadata.name"), "a PodDisruptionBudget needs a name")
    disrupted = as_object(status.get("disruptedPods"), join(path, "status.disruptedPods"))
    out = pb.PodDisruptionBudget(
        name=name,
        namespace=as_str(meta.get("namespace"), join(path, "metadata.namespace")) or "default",
        disruptions_allowed=as_int(
            status.get("disruptionsAllowed"), join(path, "status.disruptionsAllowed")
        ),
        disrupted_pods=sorted(disrupted),
    )
    if spec.get("selector") is not None:
        parse_into(out, {"selector": spec["selector"]}, join(path, "spec"))
    return out
