"""proto -> domain conversion of pods: every validation rule names the field as the request spells
it, and a container requests exactly what kube accepts of a container. Nodes and namespaces are
in test_convert_node.py, what a valid pod converts to in test_convert_pod.py.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from schedsvc.errors import InvalidArgument
from schedsvc.v1 import schedule_pb2 as pb
from tests.convert_cases import (
    CONVERTER,
    a_pod,
    anti_affinity_term,
    field_affinity,
    node_req,
    required_node_affinity,
    selector_expr,
    spread,
)

NA = "pods[2].affinity.node_affinity"
REQ = f"{NA}.required_during_scheduling_ignored_during_execution.node_selector_terms[0]"
ANTI = "pods[2].affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution[0]"

POD_CASES: list[tuple[str, Callable[[], pb.Pod], str]] = [
    ("a pod without uid", lambda: pb.Pod(name="p"), "pods[2].uid"),
    (
        "a request that is not a quantity",
        lambda: a_pod(containers=[pb.Container(requests={"cpu": "lots"})]),
        'pods[2].containers[1].requests["cpu"]',
    ),
    (
        "a negative request",
        lambda: a_pod(containers=[pb.Container(requests={"memory": "-1Gi"})]),
        'pods[2].containers[1].requests["memory"]',
    ),
    (
        "an init container with a bad quantity",
        lambda: a_pod(init_containers=[pb.Container(requests={"cpu": "1x"})]),
        'pods[2].init_containers[0].requests["cpu"]',
    ),
    (
        "an empty resource name",
        lambda: a_pod(containers=[pb.Container(requests={"": "1"})]),
        'pods[2].containers[1].requests[""]',
    ),
    ("bad overhead", lambda: a_pod(overhead={"cpu": "-5m"}), 'pods[2].overhead["cpu"]'),
    ("an empty label key", lambda: a_pod(labels={"": "x"}), 'pods[2].labels[""]'),
    ("a label value with spaces", lambda: a_pod(labels={"k": "a b"}), 'pods[2].labels["k"]'),
    (
        "a bad node selector key",
        lambda: a_pod(node_selector={"a b": "x"}),
        'pods[2].node_selector["a b"]',
    ),
    ("a bad namespace", lambda: a_pod(namespace="Not_A_Namespace"), "pods[2].namespace"),
    (
        "a host port out of range",
        lambda: a_pod(containers=[pb.Container(ports=[pb.ContainerPort(host_port=70000)])]),
        "pods[2].containers[1].ports[0].host_port",
    ),
    (
        "a negative container port",
        lambda: a_pod(containers=[pb.Container(ports=[pb.ContainerPort(container_port=-1)])]),
        "pods[2].containers[1].ports[0].container_port",
    ),
    (
        "an unknown protocol",
        lambda: a_pod(containers=[pb.Container(ports=[pb.ContainerPort(protocol="HTTP")])]),
        "pods[2].containers[1].ports[0].protocol",
    ),
    (
        "a host ip that is not an address",
        lambda: a_pod(containers=[pb.Container(ports=[pb.ContainerPort(host_ip="nowhere")])]),
        "pods[2].containers[1].ports[0].host_ip",
    ),
    (
        "an unknown node selector operator",
        lambda: a_pod(affinity=required_node_affinity(node_req("Near", "a"))),
        f"{REQ}.match_expressions[0].operator",
    ),
    (
        "In without values",
        lambda: a_pod(affinity=required_node_affinity(node_req("In"))),
        f"{REQ}.match_expressions[0].values",
    ),
    (
        "Exists with values",
        lambda: a_pod(affinity=required_node_affinity(node_req("Exists", "a"))),
        f"{REQ}.match_expressions[0].values",
    ),
    (
        "Gt with two values",
        lambda: a_pod(affinity=required_node_affinity(node_req("Gt", "1", "2"))),
        f"{REQ}.match_expressions[0].values",
    ),
    (
        "Lt with a value that is not an integer",
        lambda: a_pod(affinity=required_node_affinity(node_req("Lt", "1.5"))),
        f"{REQ}.match_expressions[0].values[0]",
    ),
    (
        "a node selector requirement with an empty key",
        lambda: a_pod(affinity=required_node_affinity(node_req("Exists", key=""))),
        f"{REQ}.match_expressions[0].key",
    ),
    (
        "a field selector on something other than metadata.name",
        lambda: a_pod(affinity=field_affinity(node_req("In", "n1", key="spec.x"))),
        f"{REQ}.match_fields[0].key",
    ),
    (
        "a field selector with Exists",
        lambda: a_pod(affinity=field_affinity(node_req("Exists", key="metadata.name"))),
        f"{REQ}.match_fields[0].operator",
    ),
    (
        "a preferred node affinity weight of 0",
        lambda: a_pod(
            affinity=pb.Affinity(
                node_affinity=pb.NodeAffinity(
                    preferred_during_scheduling_ignored_during_execution=[
                        pb.PreferredSchedulingTerm(weight=0)
                    ]
                )
            )
        ),
        f"{NA}.preferred_during_scheduling_ignored_during_execution[0].weight",
    ),
    (
        "a preferred pod affinity weight of 101",
        lambda: a_pod(
            affinity=pb.Affinity(
                pod_affinity=pb.PodAffinity(
                    preferred_during_scheduling_ignored_during_execution=[
                        pb.WeightedPodAffinityTerm(
                            weight=101, pod_affinity_term=pb.PodAffinityTerm(topology_key="zone")
                        )
                    ]
                )
            )
        ),
        "pods[2].affinity.pod_affinity.preferred_during_scheduling_ignored_during_execution[0]"
        ".weight",
    ),
    (
        "a pod affinity term without topology key",
        lambda: a_pod(affinity=anti_affinity_term(label_selector=pb.LabelSelector())),
        f"{ANTI}.topology_key",
    ),
    (
        "an unknown label selector operator",
        lambda: a_pod(
            affinity=anti_affinity_term(
                topology_key="zone", label_selector=selector_expr("Gt", "1")
            )
        ),
        f"{ANTI}.label_selector.match_expressions[0].operator",
    ),
    (
        "a label selector In without values",
        lambda: a_pod(
            affinity=anti_affinity_term(topology_key="zone", label_selector=selector_expr("In"))
        ),
        f"{ANTI}.label_selector.match_expressions[0].values",
    ),
    (
        "a label selector DoesNotExist with values",
        lambda: a_pod(
            affinity=anti_affinity_term(
                topology_key="zone", label_selector=selector_expr("DoesNotExist", "x")
            )
        ),
        f"{ANTI}.label_selector.match_expressions[0].values",
    ),
    (
        "an empty match_labels key",
        lambda: a_pod(
            affinity=anti_affinity_term(
                topology_key="zone", label_selector=pb.LabelSelector(match_labels={"": "x"})
            )
        ),
        f'{ANTI}.label_selector.match_labels[""]',
    ),
    (
        "a bad namespace selector",
        lambda: a_pod(
            affinity=anti_affinity_term(topology_key="zone", namespace_selector=selector_expr("X"))
        ),
        f"{ANTI}.namespace_selector.match_expressions[0].operator",
    ),
    (
        "an empty namespace name",
        lambda: a_pod(affinity=anti_affinity_term(topology_key="zone", namespaces=[""])),
        f"{ANTI}.namespaces[0]",
    ),
    (
        "match_label_keys without a label selector",
        lambda: a_pod(affinity=anti_affinity_term(topology_key="zone", match_label_keys=["app"])),
        f"{ANTI}.match_label_keys",
    ),
    (
        "an unknown toleration operator",
        lambda: a_pod(tolerations=[pb.Toleration(key="k", operator="Gt", value="1")]),
        "pods[2].tolerations[0].operator",
    ),
    (
        "Exists with a value",
        lambda: a_pod(tolerations=[pb.Toleration(key="k", operator="Exists", value="v")]),
        "pods[2].tolerations[0].value",
    ),
    (
        "Equal with an empty key",
        lambda: a_pod(tolerations=[pb.Toleration(value="v")]),
        "pods[2].tolerations[0].operator",
    ),
    (
        "an unknown toleration effect",
        lambda: a_pod(tolerations=[pb.Toleration(key="k", effect="NoWay")]),
        "pods[2].tolerations[0].effect",
    ),
    (
        "toleration seconds without NoExecute",
        lambda: a_pod(
            tolerations=[pb.Toleration(key="k", effect="NoSchedule", toleration_seconds=5)]
        ),
        "pods[2].tolerations[0].effect",
    ),
    (
        "a negative max_skew",
        lambda: a_pod(topology_spread_constraints=[spread(max_skew=-1)]),
        "pods[2].topology_spread_constraints[0].max_skew",
    ),
    (
        "an empty topology key",
        lambda: a_pod(
            topology_spread_constraints=[
                pb.TopologySpreadConstraint(max_skew=1, when_unsatisfiable="DoNotSchedule")
            ]
        ),
        "pods[2].topology_spread_constraints[0].topology_key",
    ),
    (
        "an unknown when_unsatisfiable",
        lambda: a_pod(
            topology_spread_constraints=[pb.TopologySpreadConstraint(max_skew=1, topology_key="z")]
        ),
        "pods[2].topology_spread_constraints[0].when_unsatisfiable",
    ),
    (
        "min_domains 0",
        lambda: a_pod(topology_spread_constraints=[spread(min_domains=0)]),
        "pods[2].topology_spread_constraints[0].min_domains",
    ),
    (
        "min_domains with ScheduleAnyway",
        lambda: a_pod(
            topology_spread_constraints=[
                pb.TopologySpreadConstraint(
                    max_skew=1, topology_key="z", when_unsatisfiable="ScheduleAnyway", min_domains=2
                )
            ]
        ),
        "pods[2].topology_spread_constraints[0].min_domains",
    ),
    (
        "an unknown node affinity policy",
        lambda: a_pod(topology_spread_constraints=[spread(node_affinity_policy="Always")]),
        "pods[2].topology_spread_constraints[0].node_affinity_policy",
    ),
    (
        "an unknown node taints policy",
        lambda: a_pod(topology_spread_constraints=[spread(node_taints_policy="honor")]),
        "pods[2].topology_spread_constraints[0].node_taints_policy",
    ),
    (
        "a bad spread label selector",
        lambda: a_pod(topology_spread_constraints=[spread(label_selector=selector_expr("In"))]),
        "pods[2].topology_spread_constraints[0].label_selector.match_expressions[0].values",
    ),
    (
        "two constraints on the same key and action",
        lambda: a_pod(topology_spread_constraints=[spread(), spread(max_skew=2)]),
        "pods[2].topology_spread_constraints[1].topology_key",
    ),
    (
        "spread match_label_keys without a label selector",
        lambda: a_pod(topology_spread_constraints=[spread(match_label_keys=["app"])]),
        "pods[2].topology_spread_constraints[0].match_label_keys",
    ),
    (
        "restart_policy on an app container",
        lambda: a_pod(containers=[pb.Container(name="c", restart_policy="Always")]),
        "pods[2].containers[1].restart_policy",  # a_pod has one container already
    ),
    (
        "an init container restart_policy other than Always",
        lambda: a_pod(init_containers=[pb.Container(name="i"),
                                       pb.Container(name="j", restart_policy="OnFailure")]),
        "pods[2].init_containers[1].restart_policy",
    ),
    (
        "a pod-level resource kube does not support",
        lambda: a_pod(resources=pb.ResourceRequirements(requests={"example.com/gpu": "1"})),
        'pods[2].resources.requests["example.com/gpu"]',
    ),
    (
        "a bad pod-level quantity",
        lambda: a_pod(resources=pb.ResourceRequirements(requests={"cpu": "lots"})),
        'pods[2].resources.requests["cpu"]',
    ),
    (
        "a bad default selector",
        lambda: a_pod(default_selector=selector_expr("Exists", "x")),
        "pods[2].default_selector.match_expressions[0].values",
    ),
    (
        "safe-to-evict other than true, false or absent",
        lambda: a_pod(disruption=pb.PodDisruption(safe_to_evict="True")),
        "pods[2].disruption.safe_to_evict",
    ),
    (
        "a controller kind that is no API kind",
        lambda: a_pod(disruption=pb.PodDisruption(controller_kind="apps/v1 ReplicaSet")),
        "pods[2].disruption.controller_kind",
    ),
    (
        "a safe-to-evict local volume that is no volume name",
        lambda: a_pod(disruption=pb.PodDisruption(safe_to_evict_local_volumes=["ok", "a b"])),
        "pods[2].disruption.safe_to_evict_local_volumes[1]",
    ),
]


@pytest.mark.parametrize(
    ("make", "field"), [c[1:] for c in POD_CASES], ids=[c[0] for c in POD_CASES]
)
def test_pod_validation_names_the_field(make: Callable[[], pb.Pod], field: str) -> None:
    msg = make()
    with pytest.raises(InvalidArgument) as exc:
        CONVERTER.pod_from_pb(msg, "pods[2]")
    assert exc.value.field == field
    if msg.uid:  # a bound pod skips the whole-pod cache: same verdict
        msg.node_name = "n1"
        with pytest.raises(InvalidArgument) as exc:
            CONVERTER.pod_from_pb(msg, "pods[2]")
        assert exc.value.field == field


@pytest.mark.parametrize("name", ["pods", "kubernetes.io/gpu", "requests.cpu", "storage"])
def test_a_container_may_not_request_what_is_not_a_container_resource(name: str) -> None:
    msg = pb.Pod(uid="u", containers=[pb.Container(name="c", requests={name: "1"})])
    with pytest.raises(InvalidArgument) as e:
        CONVERTER.pod_from_pb(msg, "pods[0]")
    assert e.value.field == f'pods[0].containers[0].requests["{name}"]'


@pytest.mark.parametrize("name", ["cpu", "memory", "ephemeral-storage", "hugepages-2Mi",
                                  "example.com/gpu"])
def test_container_resources_kube_accepts_are_accepted(name: str) -> None:
    msg = pb.Pod(uid="u", containers=[pb.Container(name="c", requests={name: "1"})])
    assert name in CONVERTER.pod_from_pb(msg, "pods[0]").containers[0].requests
