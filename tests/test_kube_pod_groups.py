"""The client's reading of gang scheduling from Kubernetes JSON (kube_pod_groups.py): PodGroups
and Workloads as `kubectl get podgroups.v1beta1.scheduling.k8s.io -o json` prints them (a
`kind: List`), a pod's spec.schedulingGroup, the unmodelled Alpha fields refused by JSON path or
reported in the lenient mode, and the messages the server accepts."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from schedsvc.model_pod_group import DisruptionMode
from schedsvc.server.convert import Converter
from schedsvc.server.convert_pod_group import pod_group_from_pb, workload_from_pb
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.kube import KubeObjectError, load_cluster, pod_from_kube
from schedsvc_client.load import main
from schedsvc_client.unmodelled import LoadReport
from tests.builders.pod_groups import (
    KUBE_POD_GROUP,
    KUBE_WORKLOAD,
    kube_pod_group,
    kube_workload,
)


def _list(*items: dict[str, Any]) -> str:
    """kubectl's `-o json` of several objects: a List whose items keep their kind."""
    return json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                       "items": list(items)})


def test_a_kubectl_list_of_pod_groups_and_workloads_is_read_whole() -> None:
    c = load_cluster(_list(KUBE_POD_GROUP, KUBE_WORKLOAD))
    assert c.pod_groups == [pb.PodGroup(
        name="trainer-workers-0", namespace="ml", uid="7f1c3a52-0d9e-4c41-9b7a-2f4c8e1d6a90",
        generation=2,
        spec=pb.PodGroupSpec(
            workload_ref=pb.WorkloadReference(workload_name="trainer", template_name="workers"),
            scheduling_policy=pb.PodGroupSchedulingPolicy(
                gang=pb.GangSchedulingPolicy(min_count=4)),
            disruption_mode=pb.DisruptionMode(all=pb.AllDisruptionMode()),
            priority_class_name="batch-high", priority=1000,
        ),
        status=pb.PodGroupStatus(conditions=[pb.PodGroupCondition(
            type="PodGroupInitiallyScheduled", status="False", reason="Unschedulable",
            message="pod group is unschedulable, minCount (4) cannot be satisfied: "
                    "0 scheduled, 2 remaining",
            observed_generation=2)]),
    )]
    (wl,) = c.workloads
    assert (wl.name, wl.namespace, wl.spec.controller_ref.kind) == ("trainer", "ml", "Job")
    assert [(t.name, t.scheduling_policy.HasField("gang"))
            for t in wl.spec.pod_group_templates] == [("driver", False), ("workers", True)]


def test_what_the_client_reads_the_server_accepts() -> None:
    c = load_cluster(_list(KUBE_POD_GROUP, KUBE_WORKLOAD))
    g = pod_group_from_pb(c.pod_groups[0], "upsert_pod_groups[0]", 100)
    assert (g.key, g.min_count, g.disruption_mode, g.effective_priority) == (
        "ml/trainer-workers-0", 4, DisruptionMode.ALL, 1000)
    assert g.condition("PodGroupInitiallyScheduled") is not None
    w = workload_from_pb(c.workloads[0], "upsert_workloads[0]", 100)
    assert [t.min_count for t in w.templates] == [None, 4]


def test_a_raw_pod_group_list_without_item_kinds_is_read_as_pod_groups() -> None:
    item = copy.deepcopy(KUBE_POD_GROUP)
    del item["kind"]
    raw = json.dumps({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroupList",
                      "items": [item]})
    assert [g.name for g in load_cluster(raw).pod_groups] == ["trainer-workers-0"]


def test_a_pods_scheduling_group_is_read_and_converted() -> None:
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "w-0", "namespace": "ml", "uid": "u0"},
           "spec": {"schedulingGroup": {"podGroupName": "trainer-workers-0"},
                    "containers": [{"name": "c", "image": "i"}]}}
    msg = pod_from_kube(obj)
    assert msg.scheduling_group.pod_group_name == "trainer-workers-0"
    assert Converter().pod_from_pb(msg, "pods[0]").pod_group == "trainer-workers-0"
    del obj["spec"]["schedulingGroup"]  # type: ignore[attr-defined]
    assert not pod_from_kube(obj).HasField("scheduling_group")


UNMODELLED = [
    ("PodGroup", "schedulingConstraints", {"topology": [{"key": "topology.kubernetes.io/zone"}]}),
    ("PodGroup", "resourceClaims", [{"name": "gpu", "resourceClaimName": "shared"}]),
    ("PodGroup", "parentCompositePodGroupName", "trainer"),
    ("PodGroup", "preemptionPolicy", "Never"),
    ("Workload", "compositePodGroupTemplates", [{"name": "all"}]),
]


def _with(kind: str, field: str, value: Any) -> dict[str, Any]:
    return kube_pod_group(**{field: value}) if kind == "PodGroup" else kube_workload(
        **{field: value})


@pytest.mark.parametrize(("kind", "field", "value"), UNMODELLED,
                         ids=[f"{k}.spec.{f}" for k, f, _ in UNMODELLED])
def test_an_unmodelled_field_is_refused_naming_its_path(kind: str, field: str,
                                                        value: Any) -> None:
    with pytest.raises(KubeObjectError) as exc:
        load_cluster(_list(_with(kind, field, value)))
    assert exc.value.path == f"items[0].spec.{field}"
    assert "not modelled" in exc.value.description


@pytest.mark.parametrize(("kind", "field", "value"), UNMODELLED,
                         ids=[f"{k}.spec.{f}" for k, f, _ in UNMODELLED])
def test_the_lenient_mode_drops_and_reports_it(kind: str, field: str, value: Any) -> None:
    report = LoadReport()
    c = load_cluster(_list(_with(kind, field, value)), ignore_unmodelled=True, report=report)
    assert list(report.ignored) == [f"spec.{field}"]
    assert report.ignored[f"spec.{field}"].first == f"items[0].spec.{field}"
    read = c.pod_groups[0] if kind == "PodGroup" else c.workloads[0]
    assert read.name in ("trainer-workers-0", "trainer")  # the rest was read
    if kind == "PodGroup":
        assert pod_group_from_pb(read, "p", 100).min_count == 4  # and the server accepts it


def test_a_template_s_unmodelled_field_is_refused_too() -> None:
    wl = kube_workload()
    wl["spec"]["podGroupTemplates"][1]["preemptionPolicy"] = "Never"
    with pytest.raises(KubeObjectError) as exc:
        load_cluster(_list(wl))
    assert exc.value.path == "items[0].spec.podGroupTemplates[1].preemptionPolicy"


def test_the_v1alpha1_gang_api_of_1_35_is_refused() -> None:
    old = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
           "metadata": {"name": "w"}, "spec": {"podGroups": [{"name": "g"}]}}
    with pytest.raises(KubeObjectError) as exc:
        load_cluster(_list(old))
    assert exc.value.path == "items[0].apiVersion"


def test_replay_sends_the_pod_groups_and_workloads_it_reads(make_server: Any, tmp_path: Any,
                                                            capsys: Any) -> None:
    server, _ = make_server(seed=1)
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"},
                                 "status": {"allocatable": {"cpu": "2", "pods": "10"}}}))
    groups = tmp_path / "groups.json"
    groups.write_text(_list(KUBE_POD_GROUP, KUBE_WORKLOAD))
    rc = main(["replay", "--nodes", str(nodes), "--pods", str(groups), "--cluster", "r",
               "--target", f"127.0.0.1:{server.port}"])
    assert rc == 0, capsys.readouterr().err
    snap = server.engine.cluster("r").snapshot
    assert (list(snap.pod_groups), list(snap.workloads)) == (
        ["ml/trainer-workers-0"], ["ml/trainer"])
