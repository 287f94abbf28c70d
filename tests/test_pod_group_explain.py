"""Explain for a pod group (ExplainRequest.pod_group_members): the group's cycle on a copy of
the cluster, each member explained before its cycle. Expected values worked from kube
v1.37.2's PlacementFeasible ("minCount (%d) cannot be satisfied: %d scheduled, %d remaining"),
the FitError of NodeResourcesFit and schedule_one_podgroup.go's member messages."""

from __future__ import annotations

import grpc
import pytest

from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node
from tests.builders.pod_groups import gang_config, pb_gang, pb_member

GROUP_MSG = (
    "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, "
    "pod group preemption: No preemption victims found for incoming preemptor"
)


def _cluster(stub: object) -> None:
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(  # type: ignore[attr-defined]
        upsert_nodes=[pb_node("n0", cpu="2"), pb_node("n1", cpu="2")],
        upsert_pod_groups=[pb_gang("train", 3)],
    ))


def test_a_gang_that_cannot_reach_min_count_is_explained_member_by_member(make_server):  # type: ignore[no-untyped-def]
    server, stub = make_server(config=gang_config(), seed=1)
    _cluster(stub)
    members = [pb_member(f"m{i}", "train", cpu="1500m") for i in range(3)]
    resp = stub.Explain(pb.ExplainRequest(pod_group_members=members))
    m0, m1, m2 = resp.pod_group_members
    # the first member: both nodes empty, both feasible
    assert m0.tried and [v.feasible for v in m0.nodes] == [True, True]
    # the second sees the first assumed where the cycle put it: one node left
    assert m1.tried and sum(v.feasible for v in m1.nodes) == 1
    first_node = next(v.name for v in m1.nodes if not v.feasible)
    assert next(v for v in m1.nodes if v.name == first_node).reasons == ["Insufficient cpu"]
    # the third fits nowhere
    assert m2.tried and not any(v.feasible for v in m2.nodes)
    assert m2.message == "0/2 nodes are available: 2 Insufficient cpu."
    assert resp.pod_group.outcome == pb.PodGroupResult.UNSCHEDULABLE
    assert resp.pod_group.message == GROUP_MSG
    assert resp.pod_group.condition.reason == "Unschedulable"
    # members that fit are told the group failed; the one that did not keeps its FitError
    assert m0.placement.message == f"pod group is unschedulable, {GROUP_MSG}"
    assert m0.placement.outcome == pb.Placement.UNSCHEDULABLE and not m0.placement.node_name
    assert m2.placement.message == "0/2 nodes are available: 2 Insufficient cpu."
    # nothing was placed, and the PodGroup kept no condition (Explain writes nothing)
    assert len(server.engine.find("default").snapshot.pods) == 0
    pg = server.engine.find("default").snapshot.pod_groups["default/train"]
    assert pg.conditions == ()


def test_a_gang_that_fits_explains_each_member_and_places_nothing(make_server):  # type: ignore[no-untyped-def]
    server, stub = make_server(config=gang_config(), seed=1)
    _cluster(stub)
    members = [pb_member(f"m{i}", "train", cpu="1") for i in range(4)]
    resp = stub.Explain(pb.ExplainRequest(pod_group_members=members))
    assert resp.pod_group.outcome == pb.PodGroupResult.SCHEDULED
    assert [m.placement.outcome for m in resp.pod_group_members] == [pb.Placement.SCHEDULED] * 4
    assert all(m.tried for m in resp.pod_group_members)
    # 4 pods of 1 cpu on two 2-cpu nodes: the last member has exactly one node left
    assert sum(v.feasible for v in resp.pod_group_members[3].nodes) == 1
    assert len(server.engine.find("default").snapshot.pods) == 0
    # the real cycle afterwards places all four: Explain consumed nothing it needs
    out = stub.Schedule(pb.ScheduleRequest(pods=members))
    assert [p.outcome for p in out.placements] == [pb.Placement.SCHEDULED] * 4


def test_members_of_two_groups_are_refused(make_server):  # type: ignore[no-untyped-def]
    _, stub = make_server(config=gang_config(), seed=1)
    _cluster(stub)
    members = [pb_member("a", "train"), pb_member("b", "other")]
    with pytest.raises(grpc.RpcError) as err:
        stub.Explain(pb.ExplainRequest(pod_group_members=members))
    assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "pod_group_members[1].scheduling_group" in (err.value.details() or "")


def test_without_the_gate_a_group_explain_is_a_failed_precondition(make_server):  # type: ignore[no-untyped-def]
    _, stub = make_server(seed=1)
    _cluster(stub)
    with pytest.raises(grpc.RpcError) as err:
        stub.Explain(pb.ExplainRequest(pod_group_members=[pb_member("a", "train")]))
    assert err.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "GenericWorkload" in (err.value.details() or "")
