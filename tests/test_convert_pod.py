"""proto -> domain conversion of valid pods: defaults and canonical units, presence of optional
affinity and selectors, the whole-pod cache (identity, and a pod built from its cached shape
equal to the uncached conversion), and round trips through tests/builders/to_pb.py.
"""

from __future__ import annotations

import pytest

from schedsvc import model
from schedsvc.server.convert import Converter
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import to_pb
from tests.convert_cases import (
    CONVERTER,
    a_pod,
    anti_affinity_term,
    node_req,
    required_node_affinity,
    selector_expr,
    spread,
)


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
        disruption=pb.PodDisruption(
            controller_kind="ReplicaSet", safe_to_evict="false",
            safe_to_evict_local_volumes=["scratch", "cache"],
        ),
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
    assert pod.disruption == model.PodDisruption(
        controller_kind="ReplicaSet", safe_to_evict="false",
        safe_to_evict_local_volumes=("scratch", "cache"),
    )
    bound = rich_pod()
    bound.node_name = "n1"
    assert CONVERTER.pod_from_pb(bound, "pod").node_name == "n1"


def test_quantity_text_round_trips() -> None:
    assert to_pb.quantity_text("cpu", 1500) == "1500m"
    assert to_pb.quantity_text("memory", 134_000_000) == "134000000"


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
