"""Simulate through a real server on 127.0.0.1:0 (issue 27): every step kind's request and
answer, deadlines (a partial answer, or DEADLINE_EXCEEDED with nothing completed), the cluster
left as it was, the client's call, and the simulations' metrics. The engine's half is a
stand-in (tests/builders/simulation.py): what is checked is everything around it."""

from __future__ import annotations

import grpc
import pytest
from prometheus_client import CollectorRegistry

from schedsvc.engine.explain import Explanation
from schedsvc.engine.schedule_one import Placement
from schedsvc.engine.simulate import steps as st
from schedsvc.model import Outcome
from schedsvc.observability.simulation_metrics import SimulationCollector
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.client import SchedClient
from tests.builders import pb_node, pb_pod
from tests.builders.simulation import FakeSimulate, fake_simulate
from tests.support import WAIT, Servers

Step = pb.SimulationStep
_PLACED = Placement("f-0", "n0", Outcome.SCHEDULED, cycle=1)


def _answer(i: int, step: st.Step) -> st.StepResult:
    """Scripted answers, one per kind, each naming what the step carried."""
    if isinstance(step, st.AddNodes):
        return st.AddNodesResult((f"{step.template.name}-0",) * step.count)
    if isinstance(step, st.RemoveNodes):
        return st.RemoveNodesResult(tuple(f"{n}-pod" for n in step.names))
    if isinstance(step, st.ScheduleStep):
        return st.ScheduleStepResult(
            tuple(Placement(p.uid, "n0", Outcome.SCHEDULED) for p in step.pods), True)
    if isinstance(step, st.Fill):
        return st.FillResult(step.max_pods, {"n0": step.max_pods})
    if isinstance(step, st.Drain):
        return st.DrainResult(tuple(st.NodeDrainVerdict(n, True) for n in step.node_names))
    if isinstance(step, st.ScaleUp):
        return st.ScaleUpResult((), tuple(
            st.TemplateEstimate(t.name, 1, True) for t in step.node_templates))
    assert isinstance(step, st.ExplainStep)
    return Explanation("default-scheduler", (), "", f"explained {step.pod.uid}")


ALL_KINDS = [
    Step(add_nodes=pb.AddNodesStep(template=pb_node("g"), count=2)),
    Step(remove_nodes=pb.RemoveNodesStep(names=["n1"])),
    Step(schedule=pb.ScheduleStep(pods=[pb_pod("a")], all_or_nothing=True)),
    Step(fill=pb.FillStep(template=pb_pod("t"), max_pods=7)),
    Step(drain=pb.DrainStep(node_names=["n0"])),
    Step(scale_up=pb.ScaleUpStep(pods=[pb_pod("p")], node_templates=[pb_node("g1")],
                                 max_new_nodes=3)),
    Step(explain=pb.ExplainStep(pod=pb_pod("e"))),
]


def test_every_step_kind_round_trips(servers: Servers, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = fake_simulate(monkeypatch, FakeSimulate(_answer))
    server, stub, _ = servers.start()
    up = stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        upsert_nodes=[pb_node("n0"), pb_node("n1")]), timeout=WAIT)
    resp = stub.Simulate(pb.SimulateRequest(steps=ALL_KINDS), timeout=WAIT)
    assert (resp.complete, resp.generation, resp.epoch) == (True, up.generation, up.epoch)
    assert [r.WhichOneof("result") for r in resp.results] == [
        "add_nodes", "remove_nodes", "schedule", "fill", "drain", "scale_up", "explain"]
    r = resp.results
    assert list(r[0].add_nodes.node_names) == ["g-0", "g-0"]
    assert list(r[1].remove_nodes.removed_pod_uids) == ["n1-pod"]
    assert [(p.pod_uid, p.node_name) for p in r[2].schedule.placements] == [("a", "n0")]
    assert r[2].schedule.committed
    assert (r[3].fill.placed, dict(r[3].fill.per_node)) == (7, {"n0": 7})
    assert [(v.node_name, v.drainable) for v in r[4].drain.nodes] == [("n0", True)]
    assert [(t.template, t.new_nodes) for t in r[5].scale_up.templates] == [("g1", 1)]
    assert r[6].explain.message == "explained e"
    ((cluster, steps),) = fake.calls
    assert cluster == "default" and len(steps) == 7
    assert isinstance(steps[3], st.Fill) and steps[3].template.uid == "t"
    assert server.engine.cluster("default").snapshot.generation == up.generation


def test_a_cluster_the_server_does_not_hold_simulates_empty_and_is_not_created(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_simulate(monkeypatch)
    server, stub, _ = servers.start()
    resp = stub.Simulate(pb.SimulateRequest(cluster="nobody", steps=[ALL_KINDS[3]]),
                         timeout=WAIT)
    assert resp.complete and resp.generation == 0
    assert fake.calls[0][0] == "nobody"
    assert "nobody" not in server.engine.clusters()


def test_a_deadline_after_a_step_answers_the_steps_before_it(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_simulate(monkeypatch, FakeSimulate(_answer, long_step=1))
    server, stub, _ = servers.start()
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(upsert_nodes=[pb_node("n0")]), timeout=WAIT)
    before = server.engine.cluster("default").snapshot.generation
    # the server stops 50 ms (its margin) before the deadline
    resp = stub.Simulate(pb.SimulateRequest(steps=[ALL_KINDS[3], ALL_KINDS[3]]), timeout=0.3)
    assert (resp.complete, resp.stopped_at_step, len(resp.results)) == (False, 1, 1)
    assert server.engine.cluster("default").snapshot.generation == before
    # the cluster's lock is free again: a Schedule answers
    out = stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("x")]), timeout=WAIT)
    assert out.placements[0].node_name == "n0"


def test_a_deadline_before_the_first_step_ends_is_deadline_exceeded(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_simulate(monkeypatch, FakeSimulate(_answer, long_step=0))
    server, stub, _ = servers.start()
    with pytest.raises(grpc.RpcError) as exc:
        stub.Simulate(pb.SimulateRequest(steps=[ALL_KINDS[3]]), timeout=0.2)
    assert exc.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    counts = server.handler.simulations.counts()
    assert counts.outcomes == {"deadline_exceeded": 1}


def test_the_client_simulates_and_metrics_count_each_simulation_once(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_simulate(monkeypatch, FakeSimulate(_answer))
    server, _, _ = servers.start()
    with SchedClient(f"127.0.0.1:{server.port}") as client:
        client.update_snapshot(upsert_nodes=[pb_node("n0")])
        resp = client.simulate(ALL_KINDS)
        assert resp.complete and len(resp.results) == 7
        with pytest.raises(grpc.RpcError) as exc:
            client.simulate([Step(fill=pb.FillStep(template=pb_pod("t")))])
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    registry = CollectorRegistry()
    registry.register(SimulationCollector(server.handler.simulations.counts))

    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    assert value("schedsvc_simulations_total", outcome="complete") == 1
    assert value("schedsvc_simulations_total", outcome="invalid_argument") == 1
    # one scheduled, 7 filled, one explained; the drain moved none, the scale-up placed none
    assert value("schedsvc_simulated_pods_total", step="schedule") == 1
    assert value("schedsvc_simulated_pods_total", step="fill") == 7
    assert value("schedsvc_simulated_pods_total", step="explain") == 1
    assert value("schedsvc_simulated_pods_total", step="drain") == 0
    assert value("schedsvc_simulation_seconds_count") == 2
    assert value("schedsvc_simulation_seconds_bucket", le="+Inf") == 2
