"""Pod groups in Simulate (GenericWorkload on): a schedule step runs a group as Schedule does,
one pod group cycle, and answers its PodGroupResult; fill and scale_up, whose shortcuts reason
pod by pod, refuse members instead of answering as if they were alone."""

from __future__ import annotations

import grpc
import pytest

from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node
from tests.builders.pod_groups import gang_config, pb_gang, pb_member


def _setup(make_server):  # type: ignore[no-untyped-def]
    server, stub = make_server(config=gang_config(), seed=1)
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        upsert_nodes=[pb_node("n0", cpu="2"), pb_node("n1", cpu="2")],
        upsert_pod_groups=[pb_gang("fits", 4), pb_gang("too-big", 3)],
    ))
    return server, stub


def _step(pods: list[pb.Pod], all_or_nothing: bool = False) -> pb.SimulationStep:
    return pb.SimulationStep(schedule=pb.ScheduleStep(pods=pods, all_or_nothing=all_or_nothing))


def test_a_schedule_step_runs_each_group_as_one_cycle(make_server):  # type: ignore[no-untyped-def]
    server, stub = _setup(make_server)
    fits = [pb_member(f"f{i}", "fits", cpu="1") for i in range(4)]
    big = [pb_member(f"b{i}", "too-big", cpu="1500m") for i in range(3)]
    # interleaved: each group is gathered at its first member's place
    pods = [fits[0], big[0], fits[1], big[1], fits[2], big[2], fits[3]]
    resp = stub.Simulate(pb.SimulateRequest(steps=[_step(pods)]))
    step = resp.results[0].schedule
    by_uid = {p.pod_uid: p for p in step.placements}
    assert [p.pod_uid for p in step.placements] == [p.uid for p in pods]  # the step's order
    assert all(by_uid[p.uid].outcome == pb.Placement.SCHEDULED for p in fits)
    # the four 1-CPU members took all 4 CPUs: no 1.5-CPU member fits, nothing of it stays
    assert all(by_uid[p.uid].outcome == pb.Placement.UNSCHEDULABLE for p in big)
    outcomes = {g.pod_group: g.outcome for g in step.pod_groups}
    assert outcomes == {
        "default/fits": pb.PodGroupResult.SCHEDULED,
        "default/too-big": pb.PodGroupResult.UNSCHEDULABLE,
    }
    assert [g.pod_group for g in step.pod_groups] == ["default/fits", "default/too-big"]
    assert by_uid["f0"].pod_group == "default/fits"
    assert len(server.engine.find("default").snapshot.pods) == 0  # a simulation places nothing


def test_all_or_nothing_undoes_a_step_whose_group_failed(make_server):  # type: ignore[no-untyped-def]
    _, stub = _setup(make_server)
    pods = [pb_member(f"b{i}", "too-big", cpu="1500m") for i in range(3)]
    explain = pb.SimulationStep(explain=pb.ExplainStep(pod=pb_member("x", "fits", cpu="2")))
    resp = stub.Simulate(pb.SimulateRequest(steps=[_step(pods, True), explain]))
    assert not resp.results[0].schedule.committed
    # undone: both nodes are empty again for the explain step after it
    assert [v.feasible for v in resp.results[1].explain.nodes] == [True, True]


@pytest.mark.parametrize("field", ["fill", "scale_up"])
def test_fill_and_scale_up_refuse_group_members(make_server, field):  # type: ignore[no-untyped-def]
    _, stub = _setup(make_server)
    member = pb_member("m", "fits")
    if field == "fill":
        step = pb.SimulationStep(fill=pb.FillStep(template=member, max_pods=3))
        path = "steps[0].fill.template.scheduling_group"
    else:
        step = pb.SimulationStep(scale_up=pb.ScaleUpStep(
            pods=[member], node_templates=[pb_node("t", cpu="2")], max_new_nodes=2,
        ))
        path = "steps[0].scale_up.pods[0].scheduling_group"
    with pytest.raises(grpc.RpcError) as err:
        stub.Simulate(pb.SimulateRequest(steps=[step]))
    assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert path in (err.value.details() or "")
