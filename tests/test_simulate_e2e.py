"""Simulate end to end: a real server on 127.0.0.1:0 over the real engine (no stand-in), one
round trip per step kind the engine runs here (add_nodes, remove_nodes, schedule, fill,
explain) with answers worked out by hand, and deadlines cutting a long fill short. The
cluster is the same before and after (generation, pods), and answers a Schedule at once."""

from __future__ import annotations

import grpc
import pytest

from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node, pb_pod
from tests.support import WAIT, Servers, snapshot_pods

Step = pb.SimulationStep
INSUFFICIENT = "0/2 nodes are available: 2 Insufficient cpu."


def test_each_step_kind_answers_from_the_engine_and_leaves_the_cluster(servers: Servers) -> None:
    """n0, n1 of 1 CPU, b0 (200m) on n0. Add g-0 (2 CPU), remove n0 (b0 goes with it); a
    1500m pod fits g-0 only, a second one nowhere: the all_or_nothing step is undone. A fill
    of 300m copies then finds n1's 1000m (3 copies) and g-0's 2000m (6); an explain of a
    100m pod finds both with room (100m and 200m left)."""
    server, stub, _ = servers.start()
    up = stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        upsert_nodes=[pb_node("n0"), pb_node("n1")],
        upsert_pods=[pb_pod("b0", cpu="200m", node_name="n0")]), timeout=WAIT)
    steps = [
        Step(add_nodes=pb.AddNodesStep(template=pb_node("g", cpu="2"), count=1)),
        Step(remove_nodes=pb.RemoveNodesStep(names=["n0"])),
        Step(schedule=pb.ScheduleStep(
            pods=[pb_pod("a", cpu="1500m"), pb_pod("b", cpu="1500m")], all_or_nothing=True)),
        Step(fill=pb.FillStep(template=pb_pod("t", cpu="300m"), max_pods=100)),
        Step(explain=pb.ExplainStep(pod=pb_pod("e"))),
    ]
    resp = stub.Simulate(pb.SimulateRequest(steps=steps), timeout=WAIT)
    assert (resp.complete, resp.generation) == (True, up.generation)
    add, remove, sched, fill, expl = resp.results
    assert list(add.add_nodes.node_names) == ["g-0"]
    assert list(remove.remove_nodes.removed_pod_uids) == ["b0"]
    a, b = sched.schedule.placements
    assert (a.pod_uid, a.node_name, b.pod_uid, b.node_name) == ("a", "g-0", "b", "")
    assert b.message.startswith(INSUFFICIENT) and not sched.schedule.committed
    assert (fill.fill.placed, dict(fill.fill.per_node)) == (9, {"n1": 3, "g-0": 6})
    assert (fill.fill.stopped_by.pod_uid, fill.fill.stopped_by.message) == ("t~9", INSUFFICIENT)
    assert sorted((n.name, n.feasible) for n in expl.explain.nodes) == [
        ("g-0", True), ("n1", True)]
    assert snapshot_pods(server) == {"b0": "n0"}
    assert server.engine.cluster("default").snapshot.generation == up.generation
    out = stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("x", cpu="900m")]), timeout=WAIT)
    assert out.placements[0].node_name == "n1"  # n0 holds b0: only n1 has 900m


def test_an_unknown_node_to_remove_is_invalid_argument_naming_the_field(
    servers: Servers,
) -> None:
    _, stub, _ = servers.start()
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(upsert_nodes=[pb_node("n0")]), timeout=WAIT)
    steps = [Step(fill=pb.FillStep(template=pb_pod("t"), max_pods=1)),
             Step(remove_nodes=pb.RemoveNodesStep(names=["n0", "n9"]))]
    with pytest.raises(grpc.RpcError) as exc:
        stub.Simulate(pb.SimulateRequest(steps=steps), timeout=WAIT)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "steps[1].remove_nodes.names[1]" in (exc.value.details() or "")


def _big(stub: object) -> None:
    """200 nodes of 32 CPU and 250 pods: room for 50,000 100m copies, seconds of work."""
    nodes = [pb_node(f"n{i}", cpu="32", memory="64Gi", pods="250") for i in range(200)]
    stub.UpdateSnapshot(  # type: ignore[attr-defined]
        pb.UpdateSnapshotRequest(upsert_nodes=nodes), timeout=WAIT)


def test_a_deadline_inside_a_long_fill_answers_the_steps_before_it(servers: Servers) -> None:
    server, stub, _ = servers.start()
    _big(stub)
    before = server.engine.cluster("default").snapshot.generation
    steps = [Step(schedule=pb.ScheduleStep(pods=[pb_pod("a")])),
             Step(fill=pb.FillStep(template=pb_pod("t"), max_pods=50_000))]
    # 2 s: the one-pod step is done long before, even on a loaded machine (0.5 s was not);
    # the 50,000 copies take several seconds
    resp = stub.Simulate(pb.SimulateRequest(steps=steps), timeout=2.0)
    assert (resp.complete, resp.stopped_at_step, len(resp.results)) == (False, 1, 1)
    assert resp.results[0].schedule.placements[0].node_name.startswith("n")
    assert snapshot_pods(server) == {}
    assert server.engine.cluster("default").snapshot.generation == before
    out = stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("x")]), timeout=WAIT)
    assert out.placements[0].node_name.startswith("n")


def test_a_deadline_inside_the_first_step_is_deadline_exceeded(servers: Servers) -> None:
    server, stub, _ = servers.start()
    _big(stub)
    steps = [Step(fill=pb.FillStep(template=pb_pod("t"), max_pods=50_000))]
    with pytest.raises(grpc.RpcError) as exc:
        stub.Simulate(pb.SimulateRequest(steps=steps), timeout=0.3)
    assert exc.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert snapshot_pods(server) == {}
    out = stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("x")]), timeout=WAIT)
    assert out.placements[0].node_name.startswith("n")
