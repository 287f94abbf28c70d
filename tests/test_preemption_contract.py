"""The preemption contract at the edges: kubectl JSON -> proto (client), proto -> domain
(server validation), and a preempting pod through a real gRPC server."""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest

from schedsvc import model
from schedsvc.errors import InvalidArgument
from schedsvc.server.convert import Converter
from schedsvc.server.convert_preemption import pdb_key
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.kube import KubeObjectError, load_cluster, load_objects, pod_from_kube
from tests.builders import pb_node, pb_pod
from tests.builders.to_pb import pod_to_pb

CONVERTER = Converter()  # one server's conversion and caches

POD = {
    "kind": "Pod",
    "metadata": {"name": "v", "namespace": "team", "uid": "u1", "labels": {"app": "x"},
                 "deletionTimestamp": "2026-01-01T00:00:05Z"},
    "spec": {"nodeName": "n0", "priority": 5, "preemptionPolicy": "Never",
             "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
    "status": {"startTime": "2026-01-01T00:00:00Z", "conditions": [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]},
}
PDB = {
    "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
    "metadata": {"name": "b", "namespace": "team"},
    "spec": {"selector": {"matchLabels": {"app": "x"}}, "minAvailable": 1},
    "status": {"disruptionsAllowed": 2, "disruptedPods": {"w": "2026-01-01T00:00:01Z"}},
}


def test_load_cluster_reads_pods_preemption_fields_and_budgets() -> None:
    kc = load_cluster(json.dumps({"kind": "List", "items": [POD, PDB]}))
    assert len(kc.pods) == 1 and not kc.nodes and not kc.namespaces
    p = CONVERTER.pod_from_pb(kc.pods[0], "pods[0]")
    assert p.preemption_policy is model.PreemptionPolicy.NEVER
    assert p.start_time == 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z
    assert p.terminating_by_preemption
    (b,) = (CONVERTER.pdb_from_pb(x, "b") for x in kc.pod_disruption_budgets)
    assert b == model.PodDisruptionBudget(
        "b", "team", model.LabelSelector(match_labels=(("app", "x"),)), 2, frozenset({"w"})
    )
    # load_objects is as it was: three lists
    assert len(load_objects(json.dumps({"kind": "List", "items": [POD, PDB]}))) == 3


def test_a_deletion_without_the_scheduler_condition_is_not_a_preemption() -> None:
    obj = json.loads(json.dumps(POD))
    obj["status"]["conditions"][0]["reason"] = "EvictionByEvictionAPI"
    assert not pod_from_kube(obj).terminating_by_preemption
    # still terminating: PodTopologySpread does not count it (kube's countPodsMatchSelector)
    assert pod_from_kube(obj).terminating
    assert CONVERTER.pod_from_pb(pod_from_kube(obj), "p").terminating
    del obj["metadata"]["deletionTimestamp"]
    obj["status"]["conditions"][0]["reason"] = "PreemptionByScheduler"
    assert not pod_from_kube(obj).terminating_by_preemption
    assert not pod_from_kube(obj).terminating


@pytest.mark.parametrize(("patch", "path"), [
    ({"spec": {"preemptionPolicy": "Sometimes"}}, "spec.preemptionPolicy"),
    ({"status": {"startTime": "yesterday"}}, "status.startTime"),
])
def test_bad_pod_fields_name_their_json_path(patch: dict[str, Any], path: str) -> None:
    obj = json.loads(json.dumps(POD))
    for k, v in patch.items():
        obj[k].update(v)
    with pytest.raises(KubeObjectError) as e:
        pod_from_kube(obj, "items[0]")
    assert e.value.path == f"items[0].{path}"


def test_only_policy_v1_budgets_are_read() -> None:
    old = dict(PDB, apiVersion="policy/v1beta1")
    with pytest.raises(KubeObjectError, match="policy/v1"):
        load_cluster(json.dumps({"kind": "List", "items": [old]}))


def test_server_validation_names_the_field() -> None:
    with pytest.raises(InvalidArgument) as e:
        CONVERTER.pod_from_pb(pb.Pod(uid="a", preemption_policy="Maybe"), "pods[3]")
    assert e.value.field == "pods[3].preemption_policy"
    with pytest.raises(InvalidArgument) as e:
        CONVERTER.pdb_from_pb(pb.PodDisruptionBudget(), "upsert_pod_disruption_budgets[0]")
    assert e.value.field == "upsert_pod_disruption_budgets[0].name"
    with pytest.raises(InvalidArgument) as e:
        pdb_key("nope", "remove_pod_disruption_budgets[1]")
    assert e.value.field == "remove_pod_disruption_budgets[1]"
    # an empty selector selects nothing here, as kube's preemption skips it
    empty = CONVERTER.pdb_from_pb(
        pb.PodDisruptionBudget(name="b", selector=pb.LabelSelector()), "b"
    )
    assert empty.selector is None and empty.namespace == "default"


def test_pod_fields_round_trip() -> None:
    p = CONVERTER.pod_from_pb(pod_from_kube(POD), "p")
    assert CONVERTER.pod_from_pb(pod_to_pb(p), "p") == p


def test_a_preempting_pod_through_grpc(stub: Any) -> None:
    low = [pb_pod(f"l{i}", cpu="1", node_name="n0") for i in range(2)]
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster="pre", replace=True, upsert_nodes=[pb_node("n0", cpu="2")], upsert_pods=low,
    ))
    high = pb_pod("h", cpu="1")
    high.priority = 10
    resp = stub.Schedule(pb.ScheduleRequest(cluster="pre", pods=[high]))
    p = resp.placements[0]
    assert p.outcome == pb.Placement.UNSCHEDULABLE and p.nominated_node_name == "n0"
    assert len(p.victims) == 1 and p.victims[0].priority == 0
    # the client evicts, then sends the pod again: it lands on its nominated node
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster="pre", remove_pods=[p.victims[0].uid]))
    again = stub.Schedule(pb.ScheduleRequest(cluster="pre", pods=[high])).placements[0]
    assert again.outcome == pb.Placement.SCHEDULED and again.node_name == "n0"


def test_a_bad_budget_is_invalid_argument_and_changes_nothing(stub: Any) -> None:
    with pytest.raises(grpc.RpcError) as e:
        stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
            upsert_nodes=[pb_node("n0")],
            upsert_pod_disruption_budgets=[pb.PodDisruptionBudget(name="a/b")],
        ))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert stub.UpdateSnapshot(pb.UpdateSnapshotRequest()).nodes == 0
