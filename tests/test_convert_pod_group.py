"""scheduling.k8s.io/v1beta1 PodGroups and Workloads, and Pod.scheduling_group, converted and
validated as kube v1.37.2's API server validates them (server/convert_pod_group.py).

Each refused case names the rule in kube's source it comes from: the `+k8s:` tags of
k8s.io/api@v0.37.2 scheduling/v1beta1/types.go (union, required, minimum, maximum, maxItems,
format, ifDisabled=forbidden), pkg/apis/scheduling/validation/validation.go
(validateWorkloadPriority), and core's validateSchedulingGroup; the messages are apimachinery's
(validate.Union "must specify one of: `basic`, `gang`", content.MinError, ...).
"""

from __future__ import annotations

from typing import Any

import pytest

from schedsvc.errors import InvalidArgument
from schedsvc.model_pod_group import DisruptionMode, PodGroup, PodGroupCondition
from schedsvc.server.convert import Converter
from schedsvc.server.convert_pod_group import (
    pod_group_from_pb,
    pod_group_name,
    pod_group_ref,
    workload_from_pb,
)
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_pod, pod
from tests.builders.pod_groups import pb_basic_group, pb_gang, pb_template, pb_workload
from tests.builders.to_pb import pod_to_pb

P = "upsert_pod_groups[3]"
W = "upsert_workloads[1]"


def _group(**spec: Any) -> pb.PodGroup:
    return pb_gang("g", 2, **spec)


def _no_policy() -> pb.PodGroup:
    g = pb_gang("g", 2)
    g.spec.ClearField("scheduling_policy")
    return g


def _both_policies() -> pb.PodGroup:
    g = pb_gang("g", 2)
    g.spec.scheduling_policy.basic.SetInParent()
    return g


def _condition(**c: Any) -> pb.PodGroup:
    g = pb_gang("g", 2)
    fields = {"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled"}
    g.status.conditions.add(**{**fields, **c})
    return g


FORBIDDEN = "not supported: the field of feature gate"

POD_GROUP_CASES = [
    ("no name", pb_gang("", 2), f"{P}.name", "a PodGroup needs a name"),
    ("name not a DNS subdomain", pb_gang("G_1", 2), f"{P}.name", "DNS-1123 subdomain"),
    ("namespace not a DNS label", pb_gang("g", 2, namespace="a.b"), f"{P}.namespace",
     "not a namespace name"),
    ("negative generation", pb.PodGroup(name="g", generation=-1), f"{P}.generation",
     "must be greater than or equal to 0"),
    ("schedulingPolicy is a required union", _no_policy(), f"{P}.spec.scheduling_policy",
     "must specify one of: `basic`, `gang`"),
    ("basic and gang together", _both_policies(), f"{P}.spec.scheduling_policy",
     "must specify exactly one of: `basic`, `gang`"),
    ("gang.minCount is required", pb_gang("g", 0), f"{P}.spec.scheduling_policy.gang.min_count",
     "Required value"),
    ("gang.minCount minimum 1", pb_gang("g", -3), f"{P}.spec.scheduling_policy.gang.min_count",
     "must be greater than or equal to 1"),
    ("disruptionMode set empty", _group(disruption_mode=pb.DisruptionMode()),
     f"{P}.spec.disruption_mode", "must specify one of: `single`, `all`"),
    ("disruptionMode single and all",
     _group(disruption_mode=pb.DisruptionMode(single=pb.SingleDisruptionMode(),
                                              all=pb.AllDisruptionMode())),
     f"{P}.spec.disruption_mode", "must specify exactly one of: `single`, `all`"),
    ("priority above HighestUserDefinablePriority", _group(priority=1_000_000_001),
     f"{P}.spec.priority", "must be less than or equal to 1000000000"),
    ("priorityClassName not a long name", _group(priority_class_name="High"),
     f"{P}.spec.priority_class_name", "DNS-1123 subdomain"),
    ("workloadRef.workloadName required",
     _group(workload_ref=pb.WorkloadReference(template_name="t")),
     f"{P}.spec.workload_ref.workload_name", "Required value"),
    ("workloadRef.templateName a short name",
     _group(workload_ref=pb.WorkloadReference(workload_name="w", template_name="a.b")),
     f"{P}.spec.workload_ref.template_name", "DNS-1123 label"),
    ("schedulingConstraints: TopologyAwareWorkloadScheduling",
     _group(scheduling_constraints=pb.PodGroupSchedulingConstraints(
         topology=[pb.TopologyConstraint(key="zone")])),
     f"{P}.spec.scheduling_constraints", FORBIDDEN + " TopologyAwareWorkloadScheduling"),
    ("resourceClaims: DRAWorkloadResourceClaims",
     _group(resource_claims=[pb.PodGroupResourceClaim(name="c", resource_claim_name="x")]),
     f"{P}.spec.resource_claims", FORBIDDEN + " DRAWorkloadResourceClaims"),
    ("preemptionPolicy: PodGroupPreemptionPolicy", _group(preemption_policy="Never"),
     f"{P}.spec.preemption_policy", FORBIDDEN + " PodGroupPreemptionPolicy"),
    ("parentCompositePodGroupName: CompositePodGroup",
     _group(parent_composite_pod_group_name="p"),
     f"{P}.spec.parent_composite_pod_group_name", FORBIDDEN + " CompositePodGroup"),
    ("condition status", _condition(status="Maybe"), f"{P}.status.conditions[0].status",
     'supported values: "False", "True", "Unknown"'),
    ("condition reason required", _condition(reason=""), f"{P}.status.conditions[0].reason",
     "Required value"),
    ("condition status required", _condition(status=""), f"{P}.status.conditions[0].status",
     "Required value"),
    ("condition reason at most 1024 bytes", _condition(reason="R" * 1025),
     f"{P}.status.conditions[0].reason", "may not be more than 1024 bytes"),
    ("condition observedGeneration", _condition(observed_generation=-1),
     f"{P}.status.conditions[0].observed_generation", "must be greater than or equal to zero"),
    ("condition reason format", _condition(reason="not ok"),
     f"{P}.status.conditions[0].reason", "must start with alphabetic character"),
    ("condition type a qualified name", _condition(type="a b"),
     f"{P}.status.conditions[0].type", ""),
]


@pytest.mark.parametrize(("msg", "field", "words"), [c[1:] for c in POD_GROUP_CASES],
                         ids=[c[0] for c in POD_GROUP_CASES])
def test_a_pod_group_kube_would_refuse_is_invalid_argument_naming_the_field(
    msg: pb.PodGroup, field: str, words: str
) -> None:
    with pytest.raises(InvalidArgument) as exc:
        pod_group_from_pb(msg, P, 100)
    assert exc.value.field == field
    assert words in exc.value.description


def test_duplicate_condition_types_are_refused_as_a_map_keyed_by_type() -> None:
    g = _condition()
    g.status.conditions.add(type="PodGroupInitiallyScheduled", status="False", reason="X")
    with pytest.raises(InvalidArgument) as exc:
        pod_group_from_pb(g, P, 100)
    assert exc.value.field == f"{P}.status.conditions[1].type"


def test_a_gang_converts_field_by_field() -> None:
    msg = pb_gang(
        "workers", 4, namespace="ml", priority=1000, priority_class_name="batch-high",
        disruption_mode=pb.DisruptionMode(all=pb.AllDisruptionMode()),
        workload_ref=pb.WorkloadReference(workload_name="trainer", template_name="workers"),
    )
    msg.generation = 2
    msg.status.conditions.add(
        type="PodGroupInitiallyScheduled", status="False", reason="Unschedulable",
        message="m", observed_generation=2,
    )
    assert pod_group_from_pb(msg, P, 100) == PodGroup(
        name="workers", namespace="ml", uid="uid-workers", generation=2, min_count=4,
        disruption_mode=DisruptionMode.ALL, priority_class_name="batch-high", priority=1000,
        workload_name="trainer", template_name="workers",
        conditions=(PodGroupCondition("PodGroupInitiallyScheduled", "False", "Unschedulable",
                                      "m", 2),),
    )


def test_a_basic_group_has_no_min_count_and_reads_unset_fields_as_kube_does() -> None:
    g = pod_group_from_pb(pb_basic_group("b", namespace=""), P, 100)
    assert (g.namespace, g.min_count, g.placement_min_count) == ("default", None, 1)
    # unset disruptionMode is Single to the scheduler; unset priority is 0 (PodGroupPriority)
    assert g.disruption_mode is DisruptionMode.SINGLE
    assert (g.priority, g.effective_priority) == (None, 0)
    # priority 0 set explicitly is kept as set
    assert pod_group_from_pb(_group(priority=0), P, 100).priority == 0


def test_a_pod_group_over_the_item_limit_is_refused_before_conversion() -> None:
    g = pb_gang("g", 2)
    for i in range(3):
        g.status.conditions.add(type=f"T{i}", status="True", reason="R")
    with pytest.raises(InvalidArgument) as exc:
        pod_group_from_pb(g, P, 2)
    assert exc.value.field == f"{P}.status.conditions"


# ---- Workloads -------------------------------------------------------------------------------

def _nine() -> pb.Workload:
    return pb_workload("w", *(pb_template(f"t{i}", 1) for i in range(9)))


WORKLOAD_CASES = [
    ("no templates: the union podGroupTemplates | compositePodGroupTemplates",
     pb_workload("w"), f"{W}.spec", "must specify one of: `podGroupTemplates`"),
    ("at most 8 templates", _nine(), f"{W}.spec.pod_group_templates",
     "must have at most 8 items"),
    ("template names unique (listType=map)", pb_workload("w", pb_template("a"), pb_template("a")),
     f"{W}.spec.pod_group_templates[1].name", "Duplicate value"),
    ("template name required", pb_workload("w", pb_template("")),
     f"{W}.spec.pod_group_templates[0].name", "Required value"),
    ("template name a short name", pb_workload("w", pb_template("a.b")),
     f"{W}.spec.pod_group_templates[0].name", "DNS-1123 label"),
    ("template gang minimum", pb_workload("w", pb_template("a", -1)),
     f"{W}.spec.pod_group_templates[0].scheduling_policy.gang.min_count",
     "must be greater than or equal to 1"),
    ("validateWorkloadPriority: priorities differ",
     pb_workload("w", pb_template("a", priority=1), pb_template("b", priority=2)),
     f"{W}.spec", "detected multiple priority configurations"),
    ("validateWorkloadPriority: one set, one unset",
     pb_workload("w", pb_template("a", priority=0), pb_template("b")),
     f"{W}.spec", "detected multiple priority configurations"),
    ("validateWorkloadPriority: class names differ",
     pb_workload("w", pb_template("a", priority_class_name="x"),
                 pb_template("b", priority_class_name="y")),
     f"{W}.spec", "detected multiple priority configurations"),
    ("template preemptionPolicy", pb_workload("w", pb_template("a", preemption_policy="Never")),
     f"{W}.spec.pod_group_templates[0].preemption_policy", FORBIDDEN),
    ("controllerRef.kind required",
     pb.Workload(
         name="w", spec=pb.WorkloadSpec(controller_ref=pb.TypedLocalObjectReference(name="j"),
                                        pod_group_templates=[pb_template("a")])),
     f"{W}.spec.controller_ref.kind", "Required value"),
    ("controllerRef.name a path segment",
     pb.Workload(name="w", spec=pb.WorkloadSpec(
         controller_ref=pb.TypedLocalObjectReference(kind="Job", name="a/b"),
         pod_group_templates=[pb_template("a")])),
     f"{W}.spec.controller_ref.name", "may not contain '/'"),
]


@pytest.mark.parametrize(("msg", "field", "words"), [c[1:] for c in WORKLOAD_CASES],
                         ids=[c[0] for c in WORKLOAD_CASES])
def test_a_workload_kube_would_refuse_is_invalid_argument_naming_the_field(
    msg: pb.Workload, field: str, words: str
) -> None:
    with pytest.raises(InvalidArgument) as exc:
        workload_from_pb(msg, W, 100)
    assert exc.value.field == field
    assert words in exc.value.description


def test_a_workload_converts_with_its_templates() -> None:
    msg = pb_workload(
        "trainer", pb_template("driver", priority=5), pb_template("workers", 4, priority=5),
    )
    msg.spec.controller_ref.CopyFrom(
        pb.TypedLocalObjectReference(api_group="batch", kind="Job", name="trainer"))
    wl = workload_from_pb(msg, W, 100)
    assert (wl.key, wl.controller_api_group, wl.controller_kind, wl.controller_name) == (
        "default/trainer", "batch", "Job", "trainer")
    assert [(t.name, t.min_count, t.priority) for t in wl.templates] == [
        ("driver", None, 5), ("workers", 4, 5)]


# ---- the pod's scheduling group, removals ----------------------------------------------------

def test_a_pods_scheduling_group_is_a_dns_subdomain_as_core_validates_it() -> None:
    assert pod_group_name(pb_pod("p"), "pods[0]") == ""
    ok = pb_pod("p", scheduling_group=pb.PodSchedulingGroup(pod_group_name="gang-1.a"))
    assert pod_group_name(ok, "pods[0]") == "gang-1.a"
    for bad, words in (("", "must specify one of: `podGroupName`"),
                       ("Gang", "DNS-1123 subdomain")):
        msg = pb_pod("p", scheduling_group=pb.PodSchedulingGroup(pod_group_name=bad))
        with pytest.raises(InvalidArgument) as exc:
            pod_group_name(msg, "pods[0]")
        assert exc.value.field == "pods[0].scheduling_group.pod_group_name"
        assert words in exc.value.description


@pytest.mark.parametrize(("key", "ok"), [
    ("ml/gang-1", True), ("gang-1", False), ("/g", False), ("ml/", False),
    ("ML/g", False), ("ml/G", False), ("a" * 64 + "/g", False),
])
def test_a_removal_is_namespace_slash_name(key: str, ok: bool) -> None:
    if ok:
        assert pod_group_ref(key, "remove_pod_groups[0]") == key
        return
    with pytest.raises(InvalidArgument) as exc:
        pod_group_ref(key, "remove_pod_groups[0]")
    assert exc.value.field == "remove_pod_groups[0]"


def test_a_pod_of_a_group_round_trips_through_its_message() -> None:
    p = pod("p", pod_group="gang-1")
    msg = pod_to_pb(p)
    assert msg.scheduling_group.pod_group_name == "gang-1"
    assert Converter().pod_from_pb(msg, "p") == p
