"""scheduling.k8s.io/v1beta1 PodGroups and Workloads, and a pod's spec.schedulingGroup, from
Kubernetes JSON (`kubectl get podgroups.v1beta1.scheduling.k8s.io -o json`), for gang
scheduling (issue 28).

The fields of the Alpha gates schedsvc does not model (a PodGroup's schedulingConstraints,
resourceClaims, parentCompositePodGroupName, preemptionPolicy; a Workload's
compositePodGroupTemplates) are refused naming the JSON path, or in the lenient mode dropped
and reported (unmodelled.py): scheduling as if they were absent is an answer kube would not
give with their gates on. The server validates the rest as kube's API server does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedsvc.v1 import schedule_pb2 as pb

from .kube_json import (
    KubeObjectError,
    as_int,
    as_list,
    as_object,
    as_str,
    join,
    object_parts,
)
from .unmodelled import FieldPolicy

__all__ = [
    "API_VERSION",
    "POD_GROUP_KINDS",
    "pod_group_from_kube",
    "scheduling_group_into",
    "workload_from_kube",
]

API_VERSION = "scheduling.k8s.io/v1beta1"
POD_GROUP_KINDS = frozenset({"PodGroup", "Workload"})

_WHY = {
    "schedulingConstraints": "TopologyAwareWorkloadScheduling (Alpha) places a group within "
    "one topology domain",
    "resourceClaims": "DRAWorkloadResourceClaims shares ResourceClaims among a group's pods",
    "parentCompositePodGroupName": "CompositePodGroup (Alpha) schedules a hierarchy of groups",
    "preemptionPolicy": "PodGroupPreemptionPolicy (Alpha) gives the group its own policy",
    "compositePodGroupTemplates": "CompositePodGroup (Alpha) templates hierarchies of groups",
}


def _check_api(obj: Mapping[str, Any], path: str, kind: str) -> None:
    api = obj.get("apiVersion", API_VERSION)
    if api != API_VERSION:
        raise KubeObjectError(
            join(path, "apiVersion"),
            f"{kind} of {api!r} is not read: only {API_VERSION} (kube v1.37's gang API; "
            "v1.35's v1alpha1 Workload is not modelled)",
        )


def _unmodelled(
    spec: Mapping[str, Any], path: str, names: tuple[str, ...], policy: FieldPolicy, who: str
) -> None:
    for name in names:
        value = spec.get(name)
        if value is not None and value != [] and value != "":
            policy.unmodelled(f"spec.{name}", _WHY[name], join(path, name), who)


def _policy_into(out: pb.PodGroupSchedulingPolicy, raw: Any, path: str) -> None:
    policy = as_object(raw, path)
    if "basic" in policy:
        as_object(policy["basic"], join(path, "basic"))
        out.basic.SetInParent()
    if "gang" in policy:
        gang = as_object(policy["gang"], join(path, "gang"))
        out.gang.min_count = as_int(gang.get("minCount", 0), join(path, "gang.minCount"))


def _spec_into(out: pb.PodGroupSpec | pb.PodGroupTemplate, spec: Mapping[str, Any],
               path: str) -> None:
    """The fields a PodGroup's spec and a PodGroupTemplate share."""
    _policy_into(out.scheduling_policy, spec.get("schedulingPolicy"),
                 join(path, "schedulingPolicy"))
    if spec.get("disruptionMode") is not None:
        mode = as_object(spec["disruptionMode"], join(path, "disruptionMode"))
        if "single" in mode:
            out.disruption_mode.single.SetInParent()
        if "all" in mode:
            out.disruption_mode.all.SetInParent()
        if not mode:
            out.disruption_mode.SetInParent()  # the server says what an empty union lacks
    out.priority_class_name = as_str(
        spec.get("priorityClassName"), join(path, "priorityClassName")
    )
    if spec.get("priority") is not None:
        out.priority = as_int(spec["priority"], join(path, "priority"))


def _conditions_into(out: pb.PodGroupStatus, status: Mapping[str, Any], path: str) -> None:
    list_path = join(path, "conditions")
    for i, raw in enumerate(as_list(status.get("conditions"), list_path)):
        c, p = as_object(raw, f"{list_path}[{i}]"), f"{list_path}[{i}]"
        out.conditions.add(
            type=as_str(c.get("type"), join(p, "type")),
            status=as_str(c.get("status"), join(p, "status")),
            reason=as_str(c.get("reason"), join(p, "reason")),
            message=as_str(c.get("message"), join(p, "message")),
            observed_generation=as_int(
                c.get("observedGeneration", 0), join(p, "observedGeneration"), 0, 2**63 - 1
            ),
        )


def _meta(meta: Mapping[str, Any], path: str) -> tuple[str, str, str]:
    name = as_str(meta.get("name"), join(path, "metadata.name"))
    namespace = as_str(meta.get("namespace"), join(path, "metadata.namespace")) or "default"
    uid = as_str(meta.get("uid"), join(path, "metadata.uid"))
    return name, namespace, uid


def pod_group_from_kube(
    obj: Mapping[str, Any], path: str = "", *, policy: FieldPolicy | None = None
) -> pb.PodGroup:
    """A scheduling.k8s.io/v1beta1 PodGroup: spec and status.conditions (what kube's pod group
    cycle reads and writes)."""
    obj = as_object(obj, path)
    _check_api(obj, path, "PodGroup")
    meta, spec, status = object_parts(obj, path)
    name, namespace, uid = _meta(meta, path)
    policy = policy or FieldPolicy()
    sp = join(path, "spec")
    _unmodelled(spec, sp, ("schedulingConstraints", "resourceClaims",
                           "parentCompositePodGroupName", "preemptionPolicy"),
                policy, f"PodGroup {namespace}/{name}")
    out = pb.PodGroup(
        name=name, namespace=namespace, uid=uid,
        generation=as_int(meta.get("generation", 0), join(path, "metadata.generation"), 0,
                          2**63 - 1),
    )
    if spec.get("workloadRef") is not None:
        ref = as_object(spec["workloadRef"], join(sp, "workloadRef"))
        out.spec.workload_ref.workload_name = as_str(
            ref.get("workloadName"), join(sp, "workloadRef.workloadName"))
        out.spec.workload_ref.template_name = as_str(
            ref.get("templateName"), join(sp, "workloadRef.templateName"))
    _spec_into(out.spec, spec, sp)
    _conditions_into(out.status, status, join(path, "status"))
    return out


def workload_from_kube(
    obj: Mapping[str, Any], path: str = "", *, policy: FieldPolicy | None = None
) -> pb.Workload:
    """A scheduling.k8s.io/v1beta1 Workload: its controllerRef and pod group templates (kept
    and validated by the server; no scheduling decision reads it, as in kube)."""
    obj = as_object(obj, path)
    _check_api(obj, path, "Workload")
    meta, spec, _ = object_parts(obj, path)
    name, namespace, uid = _meta(meta, path)
    policy = policy or FieldPolicy()
    sp, who = join(path, "spec"), f"Workload {namespace}/{name}"
    _unmodelled(spec, sp, ("compositePodGroupTemplates",), policy, who)
    out = pb.Workload(name=name, namespace=namespace, uid=uid)
    if spec.get("controllerRef") is not None:
        ref, rp = as_object(spec["controllerRef"], join(sp, "controllerRef")), join(
            sp, "controllerRef")
        out.spec.controller_ref.api_group = as_str(ref.get("apiGroup"), join(rp, "apiGroup"))
        out.spec.controller_ref.kind = as_str(ref.get("kind"), join(rp, "kind"))
        out.spec.controller_ref.name = as_str(ref.get("name"), join(rp, "name"))
    tp = join(sp, "podGroupTemplates")
    for i, raw in enumerate(as_list(spec.get("podGroupTemplates"), tp)):
        t, p = as_object(raw, f"{tp}[{i}]"), f"{tp}[{i}]"
        _unmodelled(t, p, ("schedulingConstraints", "resourceClaims", "preemptionPolicy"),
                    policy, who)
        tpl = out.spec.pod_group_templates.add(name=as_str(t.get("name"), join(p, "name")))
        _spec_into(tpl, t, p)
    return out


def scheduling_group_into(pod: pb.Pod, spec: Mapping[str, Any], path: str) -> None:
    """spec.schedulingGroup.podGroupName (the pod's PodGroup, in its namespace)."""
    if spec.get("schedulingGroup") is None:
        return
    group = as_object(spec["schedulingGroup"], join(path, "spec.schedulingGroup"))
    pod.scheduling_group.pod_group_name = as_str(
        group.get("podGroupName"), join(path, "spec.schedulingGroup.podGroupName")
    )
