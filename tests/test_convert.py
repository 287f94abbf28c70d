"""proto -> domain conversion: every validation rule names the field as the request spells it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from schedsvc import model
from schedsvc.errors import InvalidArgument
from schedsvc.server.convert import Converter
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import to_pb

CONVERTER = Converter()  # one server's conversion and caches, shared by these tests


def a_pod(**kw: object) -> pb.Pod:
    base = pb.Pod(
        uid="u1",
        name="p1",
        labels={"app": "web"},
        containers=[pb.Container(name="c", requests={"cpu": "100m", "memory": "1Gi"})],
    )
    base.MergeFrom(pb.Pod(**kw))  # type: ignore[arg-type]
    return base


def a_node(**kw: object) -> pb.Node:
    base = pb.Node(name="n1", allocatable={"cpu": "4", "memory": "32Gi", "pods": "110"})
    base.MergeFrom(pb.Node(**kw))  # type: ignore[arg-type]
    return base


def node_req(op: str, *values: str, key: str = "zone") -> pb.NodeSelectorRequirement:
    return pb.NodeSelectorRequirement(key=key, operator=op, values=values)


def required_node_affinity(*reqs: pb.NodeSelectorRequirement) -> pb.Affinity:
    a = pb.Affinity()
    terms = a.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms
    terms.add().match_expressions.extend(reqs)
    return a


def field_affinity(req: pb.NodeSelectorRequirement) -> pb.Affinity:
    a = pb.Affinity()
    terms = a.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms
    terms.add().match_fields.append(req)
    return a


def anti_affinity_term(**kw: object) -> pb.Affinity:
    a = pb.Affinity()
    a.pod_anti_affinity.required_during_scheduling_ignored_during_execution.append(
        pb.PodAffinityTerm(**kw)  # type: ignore[arg-type]
    )
    return a


def spread(**kw: object) -> pb.TopologySpreadConstraint:
    base = pb.TopologySpreadConstraint(
        max_skew=1, topology_key="zone", when_unsatisfiable="DoNotSchedule"
    )
    base.MergeFrom(pb.TopologySpreadConstraint(**kw))  # type: ignore[arg-type]
    return base


def selector_expr(op: str, *values: str, key: str = "app") -> pb.LabelSelector:
    return pb.LabelSelector(
        match_expressions=[pb.LabelSelectorRequirement(key=key, operator=op, values=values)]
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


NODE_CASES: list[tuple[str, Callable[[], pb.Node], str]] = [
    ("a node without name", lambda: pb.Node(allocatable={"cpu": "1"}), "upsert_nodes[0].name"),
    (
        "an unknown taint effect",
        lambda: a_node(taints=[pb.Taint(key="a", effect="NoSchedule"), pb.Taint(key="b")]),
        "upsert_nodes[0].taints[1].effect",
    ),
    (
        "a taint without key",
        lambda: a_node(taints=[pb.Taint(effect="NoSchedule")]),
        "upsert_nodes[0].taints[0].key",
    ),
    (
        "a duplicate taint",
        lambda: a_node(
            taints=[pb.Taint(key="a", effect="NoSchedule"), pb.Taint(key="a", effect="NoSchedule")]
        ),
        "upsert_nodes[0].taints[1]",
    ),
    (
        "bad allocatable",
        lambda: a_node(allocatable={"memory": "32 Gi"}),
        'upsert_nodes[0].allocatable["memory"]',
    ),
    ("a bad label", lambda: a_node(labels={"-x": "y"}), 'upsert_nodes[0].labels["-x"]'),
    (
        "a negative image size",
        lambda: a_node(images=[pb.ContainerImage(names=["a"], size_bytes=-1)]),
        "upsert_nodes[0].images[0].size_bytes",
    ),
]


@pytest.mark.parametrize(
    ("make", "field"), [c[1:] for c in NODE_CASES], ids=[c[0] for c in NODE_CASES]
)
def test_node_validation_names_the_field(make: Callable[[], pb.Node], field: str) -> None:
    with pytest.raises(InvalidArgument) as exc:
        CONVERTER.node_from_pb(make(), "upsert_nodes[0]")
    assert exc.value.field == field


def test_namespace_needs_a_name() -> None:
    with pytest.raises(InvalidArgument) as exc:
        CONVERTER.namespace_from_pb(pb.Namespace(), "upsert_namespaces[3]")
    assert exc.value.field == "upsert_namespaces[3].name"


def test_defaults_and_canonical_units() -> None:
    pod = CONVERTER.pod_from_pb(
        pb.Pod(
            uid="u",
            containers=[pb.Container(requests={"cpu": "0.1", "memory": "134M"})],
            tolerations=[pb.Toleration(key="k")],
            topology_spread_constraints=[spread()],
        ),
        "pod",
    )
    assert pod.namespace == "default"
    assert pod.scheduler_name == "default-scheduler"
    assert dict(pod.containers[0].requests) == {"cpu": 100, "memory": 134_000_000}
    assert pod.tolerations[0].operator == "Equal"
    c = pod.topology_spread_constraints[0]
    assert (c.node_affinity_policy, c.node_taints_policy, c.min_domains) == (
        "Honor",
        "Ignore",
        None,
    )
    assert c.label_selector is None
    assert pod.affinity is None and pod.default_selector is None


def test_protocol_defaults_to_tcp() -> None:
    pod = CONVERTER.pod_from_pb(
        a_pod(containers=[pb.Container(ports=[pb.ContainerPort(container_port=80, host_port=80)])]),
        "pod",
    )
    assert pod.containers[1].ports[0] == model.ContainerPort(80, 80, "TCP", "")


def test_required_node_affinity_presence() -> None:
    """Set without terms is kube's empty NodeSelector (matches nothing); unset is None."""
    a = pb.Affinity()
    a.node_affinity.required_during_scheduling_ignored_during_execution.SetInParent()
    pod = CONVERTER.pod_from_pb(a_pod(affinity=a), "pod")
    assert pod.affinity is not None and pod.affinity.node_affinity is not None
    assert pod.affinity.node_affinity.required == ()
    b = pb.Affinity()
    b.node_affinity.preferred_during_scheduling_ignored_during_execution.add(weight=1)
    pod = CONVERTER.pod_from_pb(a_pod(affinity=b), "pod")
    assert pod.affinity is not None and pod.affinity.node_affinity is not None
    assert pod.affinity.node_affinity.required is None
    assert pod.affinity.pod_affinity is None


def test_label_selector_presence() -> None:
    """Unset selector is None (matches nothing); set but empty matches everything."""
    pod = CONVERTER.pod_from_pb(
        a_pod(affinity=anti_affinity_term(topology_key="zone", label_selector=pb.LabelSelector())),
        "pod",
    )
    assert pod.affinity is not None and pod.affinity.pod_anti_affinity is not None
    assert pod.affinity.pod_anti_affinity.required[0].label_selector == model.LabelSelector()
    pod = CONVERTER.pod_from_pb(a_pod(affinity=anti_affinity_term(topology_key="zone")), "pod")
    assert pod.affinity is not None and pod.affinity.pod_anti_affinity is not None
    assert pod.affinity.pod_anti_affinity.required[0].label_selector is None


def test_empty_default_selector_is_none() -> None:
    pod = CONVERTER.pod_from_pb(a_pod(default_selector=pb.LabelSelector()), "pod")
    assert pod.default_selector is None
    pod = CONVERTER.pod_from_pb(
        a_pod(default_selector=pb.LabelSelector(match_labels={"app": "web"})), "pod"
    )
    assert pod.default_selector == model.LabelSelector(match_labels=(("app", "web"),))


def test_whole_pod_cache_keeps_identity() -> None:
    """Pods equal but for uid/name share the cached conversion and keep their own identity."""
    conv = Converter()  # empty caches
    a = conv.pod_from_pb(a_pod(uid="a", name="pa"), "pods[0]")
    b = conv.pod_from_pb(a_pod(uid="b", name="x" * 200), "pods[1]")
    assert (a.uid, a.name, b.uid, b.name) == ("a", "pa", "b", "x" * 200)
    assert a.containers is b.containers
    c = conv.pod_from_pb(a_pod(uid="c", labels={"app": "db"}), "pods[2]")
    assert dict(c.labels) == {"app": "db"}
    nameless = a_pod(uid="d")
    nameless.name = ""
    d = conv.pod_from_pb(nameless, "pods[3]")
    assert (d.uid, d.name) == ("d", "")


def rich_pod() -> pb.Pod:
    a = required_node_affinity(node_req("In", "a", "b"), node_req("Gt", "3", key="gen"))
    a.node_affinity.preferred_during_scheduling_ignored_during_execution.add(
        weight=5,
        preference=pb.NodeSelectorTerm(match_fields=[node_req("In", "n1", key="metadata.name")]),
    )
    a.pod_affinity.preferred_during_scheduling_ignored_during_execution.add(
        weight=7,
        pod_affinity_term=pb.PodAffinityTerm(
            topology_key="zone",
            label_selector=selector_expr("NotIn", "x", "y"),
            namespaces=["other"],
            namespace_selector=pb.LabelSelector(match_labels={"team": "a"}),
            match_label_keys=["app"],
            mismatch_label_keys=["tier"],
        ),
    )
    a.pod_anti_affinity.required_during_scheduling_ignored_during_execution.add(
        topology_key="kubernetes.io/hostname",
        label_selector=pb.LabelSelector(match_labels={"a": "b"}),
    )
    return pb.Pod(
        uid="u9",
        name="rich",
        namespace="other",
        labels={"app": "web", "tier": "front"},
        scheduler_name="custom",
        priority=1000,
        containers=[
            pb.Container(
                name="c",
                image="img:1",
                requests={"cpu": "250m", "memory": "1Gi", "example.com/gpu": "1"},
                ports=[
                    pb.ContainerPort(
                        container_port=80, host_port=8080, protocol="UDP", host_ip="10.0.0.1"
                    )
                ],
            )
        ],
        init_containers=[
            pb.Container(name="i", requests={"cpu": "1"}),
            pb.Container(name="proxy", requests={"cpu": "50m"}, restart_policy="Always"),
        ],
        overhead={"cpu": "10m"},
        resources=pb.ResourceRequirements(requests={"cpu": "2", "hugepages-2Mi": "4Mi"}),
        node_selector={"disktype": "ssd"},
        affinity=a,
        tolerations=[
            pb.Toleration(key="k", operator="Equal", value="v", effect="NoSchedule"),
            pb.Toleration(operator="Exists"),
            pb.Toleration(key="t", operator="Exists", effect="NoExecute", toleration_seconds=30),
        ],
        topology_spread_constraints=[
            spread(
                min_domains=2,
                label_selector=pb.LabelSelector(match_labels={"app": "web"}),
                node_affinity_policy="Ignore",
                node_taints_policy="Honor",
                match_label_keys=["pod-template-hash"],
            )
        ],
        nominated_node_name="n2",
        default_selector=pb.LabelSelector(match_labels={"app": "web"}),
    )


def test_pod_round_trip() -> None:
    pod = CONVERTER.pod_from_pb(rich_pod(), "pod")
    again = CONVERTER.pod_from_pb(to_pb.pod_to_pb(pod), "pod")
    assert again == pod
    assert pod.containers[0].requests["example.com/gpu"] == 1
    assert pod.tolerations[2].toleration_seconds == 30
    assert pod.topology_spread_constraints[0].min_domains == 2
    assert [c.is_sidecar for c in pod.init_containers] == [False, True]
    assert pod.requests == {"cpu": 2000, "hugepages-2Mi": 4 * 1024 * 1024}
    bound = rich_pod()
    bound.node_name = "n1"
    assert CONVERTER.pod_from_pb(bound, "pod").node_name == "n1"


def test_node_and_namespace_round_trip() -> None:
    node = CONVERTER.node_from_pb(
        a_node(
            labels={"zone": "a"},
            taints=[pb.Taint(key="k", value="v", effect="NoExecute")],
            unschedulable=True,
            images=[pb.ContainerImage(names=["a:1", "a@sha"], size_bytes=5_000_000)],
        ),
        "node",
    )
    assert node.allocatable == {"cpu": 4000, "memory": 32 * 2**30, "pods": 110}
    assert CONVERTER.node_from_pb(to_pb.node_to_pb(node), "node") == node
    ns = CONVERTER.namespace_from_pb(pb.Namespace(name="other", labels={"team": "a"}), "ns")
    assert CONVERTER.namespace_from_pb(to_pb.namespace_to_pb(ns), "ns") == ns


def test_quantity_text_round_trips() -> None:
    assert to_pb.quantity_text("cpu", 1500) == "1500m"
    assert to_pb.quantity_text("memory", 134_000_000) == "134000000"


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


def test_a_pod_built_from_its_cached_shape_equals_the_uncached_conversion() -> None:
    """pod_from_pb builds cached pods through model.Pod's slots, not its __init__: the result
    must be the same frozen value, every field, as a conversion without the cache."""
    from dataclasses import FrozenInstanceError, fields

    from schedsvc.server.convert_pod import pod_without_cache

    conv = Converter()
    conv.pod_from_pb(rich_pod(), "pods[0]")  # fills the whole-pod cache
    cached = conv.pod_from_pb(rich_pod(), "pods[1]")  # built from the cached shape
    plain = pod_without_cache(rich_pod(), "pods[1]", Converter().caches, conv.max_items)
    for f in fields(model.Pod):
        if f.name != "shape":
            assert getattr(cached, f.name) == getattr(plain, f.name), f.name
    assert cached == plain
    assert cached.shape is not None and cached.nominated_node_name == "n2"
    with pytest.raises(FrozenInstanceError):
        cached.uid = "other"  # type: ignore[misc]
