"""schedsvc.v1 PodGroup, Workload and Pod.scheduling_group -> model_pod_group, validated as
kube v1.37.2's API server validates scheduling.k8s.io/v1beta1 (pkg/apis/scheduling/validation,
the `+k8s:` declarative tags of k8s.io/api scheduling/v1beta1/types.go, and core's
validateSchedulingGroup), with kube's messages under our snake_case field paths.

Fields of the Alpha gates this service does not model (TopologyAwareWorkloadScheduling,
DRAWorkloadResourceClaims, PodGroupPreemptionPolicy, CompositePodGroup) are refused naming the
field: scheduling as if they were absent would be a silent wrong answer once a client turned
their gates on in its cluster.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from schedsvc.errors import InvalidArgument
from schedsvc.model_pod_group import (
    DisruptionMode,
    PodGroup,
    PodGroupCondition,
    PodGroupTemplate,
    Workload,
    pod_group_key,
)
from schedsvc.v1 import schedule_pb2 as pb

from .counts import check_counts
from .validation import check_key, dns1123_label_error, dns1123_subdomain_error

__all__ = [
    "HIGHEST_USER_DEFINABLE_PRIORITY",
    "MAX_POD_GROUP_TEMPLATES",
    "pod_group_from_pb",
    "pod_group_name",
    "pod_group_ref",
    "workload_from_pb",
]

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000  # +k8s:maximum on priority
MAX_POD_GROUP_TEMPLATES = 8  # WorkloadMaxPodGroupTemplates
_CONDITION_STATUSES = frozenset({"True", "False", "Unknown"})
# metav1.Condition's reason (apimachinery's ValidateCondition)
_REASON_RE = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
_MAX_REASON = 1024
_MAX_MESSAGE = 32 * 1024

# the refused fields: why each is
_NOT_MODELLED = {
    "scheduling_constraints": "TopologyAwareWorkloadScheduling (Alpha, off in kube v1.37.2)",
    "resource_claims": "DRAWorkloadResourceClaims (a DRA gate; this service models no DRA)",
    "preemption_policy": "PodGroupPreemptionPolicy (Alpha, off in kube v1.37.2)",
    "parent_composite_pod_group_name": "CompositePodGroup (Alpha, off in kube v1.37.2)",
}


def _refuse(path: str, fname: str) -> None:
    raise InvalidArgument(
        f"{path}.{fname}",
        f"not supported: the field of feature gate {_NOT_MODELLED[fname]}, which schedsvc "
        "does not model; kube's API server forbids it while the gate is off",
    )


def _name(value: str, path: str, short: bool) -> None:
    """+k8s:format=k8s-short-name (a DNS-1123 label) or k8s-long-name (a subdomain)."""
    err = dns1123_label_error(value) if short else dns1123_subdomain_error(value)
    if err is not None:
        raise InvalidArgument(path, err)


def _required_name(value: str, path: str, short: bool) -> None:
    if not value:
        raise InvalidArgument(path, "Required value")
    _name(value, path, short)


def _path_segment(value: str, path: str) -> None:
    """+k8s:required, +k8s:format=k8s-path-segment-name (kube's IsValidPathSegmentName)."""
    if not value:
        raise InvalidArgument(path, "Required value")
    if value in (".", ".."):
        raise InvalidArgument(path, f"may not be '{value}'")
    for bad in ("/", "%"):
        if bad in value:
            raise InvalidArgument(path, f"may not contain '{bad}'")


def _meta(name: str, namespace: str, path: str, what: str) -> str:
    """ValidateObjectMeta: the name a DNS-1123 subdomain, the namespace a label; the namespace
    ("" is "default") is returned."""
    if not name:
        raise InvalidArgument(f"{path}.name", f"a {what} needs a name")
    _name(name, f"{path}.name", short=False)
    namespace = namespace or "default"
    if (err := dns1123_label_error(namespace)) is not None:
        raise InvalidArgument(f"{path}.namespace", f"not a namespace name: {err}")
    return namespace


def _min_count(policy: pb.PodGroupSchedulingPolicy, path: str) -> int | None:
    """The required union basic | gang; gang.min_count required and >= 1. None for basic."""
    if not policy.HasField("basic") and not policy.HasField("gang"):
        raise InvalidArgument(path, "must specify one of: `basic`, `gang`")
    if policy.HasField("basic") and policy.HasField("gang"):
        raise InvalidArgument(path, "must specify exactly one of: `basic`, `gang`")
    if policy.HasField("basic"):
        return None
    n = policy.gang.min_count
    if n == 0:
        raise InvalidArgument(f"{path}.gang.min_count", "Required value")
    if n < 1:
        raise InvalidArgument(f"{path}.gang.min_count", "must be greater than or equal to 1")
    return n


def _disruption_mode(msg: pb.DisruptionMode, path: str) -> DisruptionMode:
    """Set, a union of exactly one of single | all (kube defaults nothing: unset is Single to
    the scheduler, as an unset pointer is)."""
    single, all_ = msg.HasField("single"), msg.HasField("all")
    if single and all_:
        raise InvalidArgument(path, "must specify exactly one of: `single`, `all`")
    if not single and not all_:
        raise InvalidArgument(path, "must specify one of: `single`, `all`")
    return DisruptionMode.ALL if all_ else DisruptionMode.SINGLE


def _priority(msg: pb.PodGroupSpec | pb.PodGroupTemplate, path: str) -> int | None:
    if not msg.HasField("priority"):
        return None
    if msg.priority > HIGHEST_USER_DEFINABLE_PRIORITY:
        raise InvalidArgument(
            f"{path}.priority", f"must be less than or equal to {HIGHEST_USER_DEFINABLE_PRIORITY}"
        )
    return msg.priority


def _spec_fields(
    spec: pb.PodGroupSpec | pb.PodGroupTemplate, path: str
) -> tuple[int | None, DisruptionMode, str, int | None]:
    """What a PodGroup's spec and a PodGroupTemplate share: (min_count, disruption mode,
    priority class name, priority); the unmodelled gates' fields refused."""
    if spec.HasField("scheduling_constraints"):
        _refuse(path, "scheduling_constraints")
    if spec.resource_claims:
        _refuse(path, "resource_claims")
    if spec.preemption_policy:
        _refuse(path, "preemption_policy")
    min_count = _min_count(spec.scheduling_policy, f"{path}.scheduling_policy")
    mode = (
        _disruption_mode(spec.disruption_mode, f"{path}.disruption_mode")
        if spec.HasField("disruption_mode")
        else DisruptionMode.SINGLE
    )
    if spec.priority_class_name:
        _name(spec.priority_class_name, f"{path}.priority_class_name", short=False)
    return min_count, mode, spec.priority_class_name, _priority(spec, path)


def _conditions(
    conds: Sequence[pb.PodGroupCondition], path: str
) -> tuple[PodGroupCondition, ...]:
    """status.conditions as apimachinery's ValidateCondition checks them (but
    lastTransitionTime, which the contract does not carry), a map keyed by type."""
    out: list[PodGroupCondition] = []
    seen: set[str] = set()
    for i, c in enumerate(conds):
        p = f"{path}[{i}]"
        if not c.type:
            raise InvalidArgument(f"{p}.type", "Required value")
        check_key(c.type, f"{p}.type")
        if c.type in seen:
            raise InvalidArgument(f"{p}.type", f"Duplicate value: {c.type!r}")
        seen.add(c.type)
        if not c.status:
            raise InvalidArgument(f"{p}.status", "Required value")
        if c.status not in _CONDITION_STATUSES:
            raise InvalidArgument(
                f"{p}.status", 'Unsupported value: supported values: "False", "True", "Unknown"'
            )
        if not c.reason:
            raise InvalidArgument(f"{p}.reason", "Required value")
        if not _REASON_RE.match(c.reason):
            raise InvalidArgument(
                f"{p}.reason",
                "a condition reason must start with alphabetic character, optionally followed "
                "by a string of alphanumeric characters or '_,:', and must end with an "
                "alphanumeric character or '_'",
            )
        if len(c.reason) > _MAX_REASON:
            raise InvalidArgument(f"{p}.reason", f"Too long: may not be more than {_MAX_REASON} "
                                  "bytes")
        if len(c.message) > _MAX_MESSAGE:
            raise InvalidArgument(f"{p}.message", f"Too long: may not be more than "
                                  f"{_MAX_MESSAGE} bytes")
        if c.observed_generation < 0:
            raise InvalidArgument(
                f"{p}.observed_generation", "must be greater than or equal to zero"
            )
        out.append(PodGroupCondition(c.type, c.status, c.reason, c.message, c.observed_generation))
    return tuple(out)


def pod_group_from_pb(msg: pb.PodGroup, path: str, max_items: int) -> PodGroup:
    """A validated PodGroup; errors name fields under `path` (e.g. "upsert_pod_groups[3]")."""
    namespace = _meta(msg.name, msg.namespace, path, "PodGroup")
    check_counts(msg, path, max_items)
    if msg.generation < 0:
        raise InvalidArgument(f"{path}.generation", "must be greater than or equal to 0")
    spec, sp = msg.spec, f"{path}.spec"
    if spec.parent_composite_pod_group_name:
        _refuse(sp, "parent_composite_pod_group_name")
    workload_name = template_name = ""
    if spec.HasField("workload_ref"):
        ref = spec.workload_ref
        _required_name(ref.workload_name, f"{sp}.workload_ref.workload_name", short=False)
        _required_name(ref.template_name, f"{sp}.workload_ref.template_name", short=True)
        workload_name, template_name = ref.workload_name, ref.template_name
    min_count, mode, class_name, priority = _spec_fields(spec, sp)
    return PodGroup(
        name=msg.name,
        namespace=namespace,
        uid=msg.uid,
        generation=msg.generation,
        min_count=min_count,
        disruption_mode=mode,
        priority_class_name=class_name,
        priority=priority,
        workload_name=workload_name,
        template_name=template_name,
        conditions=_conditions(msg.status.conditions, f"{path}.status.conditions"),
    )


def _template(msg: pb.PodGroupTemplate, path: str) -> PodGroupTemplate:
    _required_name(msg.name, f"{path}.name", short=True)
    min_count, mode, class_name, priority = _spec_fields(msg, path)
    return PodGroupTemplate(
        name=msg.name, min_count=min_count, disruption_mode=mode,
        priority_class_name=class_name, priority=priority,
    )


def _same_priority(templates: Sequence[PodGroupTemplate], path: str) -> None:
    """validateWorkloadPriority: every template with the first's priorityClassName and
    priority (set or unset alike)."""
    first = templates[0]
    for t in templates[1:]:
        if (t.priority_class_name, t.priority) != (first.priority_class_name, first.priority):
            raise InvalidArgument(path, "detected multiple priority configurations")


def workload_from_pb(msg: pb.Workload, path: str, max_items: int) -> Workload:
    """A validated Workload (kept; no scheduling decision reads it, as in kube)."""
    namespace = _meta(msg.name, msg.namespace, path, "Workload")
    check_counts(msg, path, max_items)
    spec, sp = msg.spec, f"{path}.spec"
    api_group = kind = name = ""
    if spec.HasField("controller_ref"):
        ref, rp = spec.controller_ref, f"{sp}.controller_ref"
        if ref.api_group:
            _name(ref.api_group, f"{rp}.api_group", short=False)
        _path_segment(ref.kind, f"{rp}.kind")
        _path_segment(ref.name, f"{rp}.name")
        api_group, kind, name = ref.api_group, ref.kind, ref.name
    tp = f"{sp}.pod_group_templates"
    if not spec.pod_group_templates:
        # the union's other member, compositePodGroupTemplates, is CompositePodGroup's
        raise InvalidArgument(sp, "must specify one of: `podGroupTemplates`, "
                              "`compositePodGroupTemplates`")
    if len(spec.pod_group_templates) > MAX_POD_GROUP_TEMPLATES:
        raise InvalidArgument(
            tp, f"Too many: {len(spec.pod_group_templates)}: must have at most "
            f"{MAX_POD_GROUP_TEMPLATES} items",
        )
    templates: list[PodGroupTemplate] = []
    names: set[str] = set()
    for i, t in enumerate(spec.pod_group_templates):
        tpl = _template(t, f"{tp}[{i}]")
        if tpl.name in names:
            raise InvalidArgument(f"{tp}[{i}].name", f"Duplicate value: {tpl.name!r}")
        names.add(tpl.name)
        templates.append(tpl)
    _same_priority(templates, sp)
    return Workload(
        name=msg.name, namespace=namespace, uid=msg.uid, controller_api_group=api_group,
        controller_kind=kind, controller_name=name, templates=tuple(templates),
    )


def pod_group_name(msg: pb.Pod, prefix: str) -> str:
    """spec.schedulingGroup.podGroupName ("" when the pod has no scheduling group), checked as
    core's validateSchedulingGroup checks it (a DNS-1123 subdomain)."""
    if not msg.HasField("scheduling_group"):
        return ""
    name = msg.scheduling_group.pod_group_name
    path = f"{prefix}.scheduling_group.pod_group_name"
    if not name:
        raise InvalidArgument(path, "must specify one of: `podGroupName`")
    _name(name, path, short=False)
    return name


def pod_group_ref(key: str, path: str) -> str:
    """A remove_pod_groups / remove_workloads entry: "namespace/name" of an object that could
    exist (the namespace a DNS-1123 label, the name a subdomain)."""
    if len(key) > 63 + 1 + 253:
        raise InvalidArgument(path, 'too long to be "namespace/name"')
    ns, sep, name = key.partition("/")
    if not sep or not ns or not name:
        raise InvalidArgument(path, f'{key!r} is not "namespace/name"')
    if (err := dns1123_label_error(ns)) is not None:
        raise InvalidArgument(path, f"namespace {err}")
    if (err := dns1123_subdomain_error(name)) is not None:
        raise InvalidArgument(path, f"name {err}")
    return pod_group_key(ns, name)
