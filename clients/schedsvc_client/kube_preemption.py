"""What DefaultPreemption reads, from Kubernetes JSON: a pod's preemptionPolicy, startTime and
whether it is terminating because of a preemption, and policy/v1 PodDisruptionBudgets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedsvc.v1 import schedule_pb2 as pb

from .kube import KubeObjectError, _int, _join, _object, _parse_into, _str

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
    policy = _str(spec.get("preemptionPolicy"), _join(path, "spec.preemptionPolicy"))
    if policy and policy not in _POLICIES:
        raise KubeObjectError(
            _join(path, "spec.preemptionPolicy"), f"unknown preemption policy {policy!r}"
        )
    pod.preemption_policy = policy
    started = _str(status.get("startTime"), _join(path, "status.startTime"))
    if started:
        try:
            pod.start_time.FromJsonString(started)
        except ValueError as exc:
            raise KubeObjectError(_join(path, "status.startTime"), str(exc)) from None
    pod.terminating_by_preemption = terminating_by_preemption(meta, status)


def pdb_from_kube(obj: Mapping[str, Any], path: str = "") -> pb.PodDisruptionBudget:
    """A policy/v1 PodDisruptionBudget: selector, status.disruptionsAllowed and the names in
    status.disruptedPods (what kube's preemption reads; minAvailable/maxUnavailable are
    already folded into disruptionsAllowed by the disruption controller)."""
    obj = _object(obj, path)
    api = obj.get("apiVersion", "policy/v1")
    if api != "policy/v1":
        raise KubeObjectError(
            _join(path, "apiVersion"), f"only policy/v1 PodDisruptionBudgets are read, not {api!r}"
        )
    meta = _object(obj.get("metadata"), _join(path, "metadata"))
    spec = _object(obj.get("spec"), _join(path, "spec"))
    status = _object(obj.get("status"), _join(path, "status"))
    name = _str(meta.get("name"), _join(path, "metadata.name"))
    if not name:
        raise KubeObjectError(_join(path, "metadata.name"), "a PodDisruptionBudget needs a name")
    disrupted = _object(status.get("disruptedPods"), _join(path, "status.disruptedPods"))
    out = pb.PodDisruptionBudget(
        name=name,
        namespace=_str(meta.get("namespace"), _join(path, "metadata.namespace")) or "default",
        disruptions_allowed=_int(
            status.get("disruptionsAllowed"), _join(path, "status.disruptionsAllowed")
        ),
        disrupted_pods=sorted(disrupted),
    )
    if spec.get("selector") is not None:
        _parse_into(out, {"selector": spec["selector"]}, _join(path, "spec"))
    return out
