"""Simulate's limits (issue 27): each refused with its code and the field that crossed it,
before the engine runs (nothing changed), and the per-cluster bound on simulations with a
retry delay. The engine's half is a stand-in here (tests/builders/simulation.py)."""

from __future__ import annotations

import threading
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from hypothesis import given
from hypothesis import strategies as hs

from schedsvc.errors import InvalidArgument
from schedsvc.server.gate import need_of
from schedsvc.server.limits import Limits
from schedsvc.server.memory import estimate
from schedsvc.server.simulation_limits import check_simulation, scale_up_probes
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node, pb_pod
from tests.builders.message_walk import fill_path, list_paths
from tests.builders.simulation import FakeSimulate, fake_simulate
from tests.support import WAIT, Servers

Step = pb.SimulationStep
SMALL = Limits(max_simulation_steps=3, max_simulated_pods=100, max_simulated_nodes=10,
               max_pods_per_request=5, max_nodes_per_update=4)


def _details(err: grpc.RpcError) -> list[Any]:
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None
    return list(status.details)


def _violation(err: grpc.RpcError) -> str:
    for d in _details(err):
        if d.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            br = error_details_pb2.BadRequest()
            d.Unpack(br)
            return str(br.field_violations[0].field)
    raise AssertionError("no BadRequest detail")


def _fill(n: int) -> pb.SimulationStep:
    return Step(fill=pb.FillStep(template=pb_pod("t"), max_pods=n))


def _add(n: int) -> pb.SimulationStep:
    return Step(add_nodes=pb.AddNodesStep(template=pb_node("g"), count=n))


_REFUSED: list[tuple[str, list[pb.SimulationStep], str]] = [
    ("more steps than --max-simulation-steps", [_fill(1)] * 4, "steps"),
    ("fills summing past --max-simulated-pods", [_fill(60), _fill(41)], "steps[1].fill.max_pods"),
    ("schedule pods after a fill", [_fill(99), Step(schedule=pb.ScheduleStep(
        pods=[pb_pod("a"), pb_pod("b")]))], "steps[1].schedule.pods"),
    # 5 pods x (1 + 4 templates x probes(2) = 6) = 125 > 100 (and 4 x 2 = 8 nodes: fine)
    ("scale_up pods counted once per probe", [Step(scale_up=pb.ScaleUpStep(
        pods=[pb_pod(f"p{i}") for i in range(5)],
        node_templates=[pb_node(f"g{i}") for i in range(4)], max_new_nodes=2))],
     "steps[0].scale_up.pods"),
    ("drained nodes' pods, read from the live snapshot",
     [_fill(95), Step(drain=pb.DrainStep(node_names=["n0", "n1", "nope"]))],
     "steps[1].drain.node_names"),
    ("add_nodes summing past --max-simulated-nodes", [_add(6), _add(5)],
     "steps[1].add_nodes.count"),
    ("scale_up nodes: max_new_nodes per template", [Step(scale_up=pb.ScaleUpStep(
        pods=[pb_pod("p")], node_templates=[pb_node("g1"), pb_node("g2")], max_new_nodes=6))],
     "steps[0].scale_up.max_new_nodes"),
    ("schedule pods past --max-pods-per-request", [Step(schedule=pb.ScheduleStep(
        pods=[pb_pod(f"p{i}") for i in range(6)]))], "steps[0].schedule.pods"),
    ("scale_up templates past --max-nodes-per-update", [Step(scale_up=pb.ScaleUpStep(
        pods=[pb_pod("p")], node_templates=[pb_node(f"g{i}") for i in range(5)],
        max_new_nodes=1))], "steps[0].scale_up.node_templates"),
    ("remove_nodes names past --max-nodes-per-update",
     [Step(remove_nodes=pb.RemoveNodesStep(names=[f"n{i}" for i in range(5)]))],
     "steps[0].remove_nodes.names"),
    ("drain names past --max-nodes-per-update",
     [Step(drain=pb.DrainStep(node_names=[f"n{i}" for i in range(5)]))],
     "steps[0].drain.node_names"),
    ("a step refused by its conversion", [_fill(1), _fill(0)], "steps[1].fill.max_pods"),
]


@pytest.mark.parametrize(("steps", "field"), [c[1:] for c in _REFUSED],
                         ids=[c[0] for c in _REFUSED])
def test_each_limit_is_invalid_argument_naming_the_field_and_nothing_runs(
    servers: Servers, monkeypatch: pytest.MonkeyPatch, steps: list[pb.SimulationStep],
    field: str,
) -> None:
    fake = fake_simulate(monkeypatch)
    server, stub, _ = servers.start(limits=SMALL)
    # two nodes with 3 pods each: a drain of both is 6 pods
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        upsert_nodes=[pb_node("n0"), pb_node("n1")],
        upsert_pods=[pb_pod(f"b{i}", node_name=f"n{i % 2}") for i in range(6)]), timeout=WAIT)
    before = server.engine.cluster("default").snapshot.generation
    with pytest.raises(grpc.RpcError) as exc:
        stub.Simulate(pb.SimulateRequest(steps=steps), timeout=WAIT)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _violation(exc.value) == field
    assert fake.calls == []
    assert server.engine.cluster("default").snapshot.generation == before


def test_at_the_limits_the_simulation_runs(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_simulate(monkeypatch)
    _, stub, _ = servers.start(limits=SMALL)
    resp = stub.Simulate(pb.SimulateRequest(steps=[_fill(60), _fill(40), _add(10)]),
                         timeout=WAIT)
    assert resp.complete and len(resp.results) == 3
    assert len(fake.calls) == 1


# the objects inside steps, each a path prefix under which its own lists are counted
_INSIDE = [
    ("add_nodes.template", lambda: Step(add_nodes=pb.AddNodesStep(template=pb_node("g"), count=1)),
     lambda s: s.add_nodes.template),
    ("schedule.pods[0]", lambda: Step(schedule=pb.ScheduleStep(pods=[pb_pod("p")])),
     lambda s: s.schedule.pods[0]),
    ("fill.template", lambda: _fill(1), lambda s: s.fill.template),
    ("scale_up.pods[0]", lambda: Step(scale_up=pb.ScaleUpStep(
        pods=[pb_pod("p")], node_templates=[pb_node("g")], max_new_nodes=1)),
     lambda s: s.scale_up.pods[0]),
    ("scale_up.node_templates[0]", lambda: Step(scale_up=pb.ScaleUpStep(
        pods=[pb_pod("p")], node_templates=[pb_node("g")], max_new_nodes=1)),
     lambda s: s.scale_up.node_templates[0]),
    ("explain.pod", lambda: Step(explain=pb.ExplainStep(pod=pb_pod("p"))),
     lambda s: s.explain.pod),
]


@pytest.mark.parametrize(("where", "make", "inside"), _INSIDE, ids=[c[0] for c in _INSIDE])
def test_lists_inside_a_steps_pods_and_nodes_have_a_count_limit(
    servers: Servers, monkeypatch: pytest.MonkeyPatch, where: str, make: Any, inside: Any,
) -> None:
    """As test_tenancy's walk for the other requests: every repeated or map field at any
    depth of a pod or node inside a step, one entry past --max-items-per-field, is refused
    naming it under the step."""
    fake = fake_simulate(monkeypatch)
    _, stub, _ = servers.start(limits=Limits(max_items_per_field=4))
    paths = list_paths(inside(make()).DESCRIPTOR)
    assert paths
    for path in paths:
        step = make()
        named = f"steps[0].{where}" + fill_path(inside(step), path, 5)
        with pytest.raises(grpc.RpcError) as exc:
            stub.Simulate(pb.SimulateRequest(steps=[step]), timeout=WAIT)
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT, named
        assert _violation(exc.value) == named
    assert fake.calls == []


def test_simulations_per_cluster_are_bounded_with_a_retry_delay(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_simulate(monkeypatch, FakeSimulate(gate=threading.Event()))
    assert fake.gate is not None
    _, stub, _ = servers.start(limits=Limits(max_concurrent_simulations_per_cluster=1))
    first: list[pb.SimulateResponse] = []
    t = threading.Thread(target=lambda: first.append(
        stub.Simulate(pb.SimulateRequest(steps=[_fill(1)]), timeout=WAIT)))
    t.start()
    try:
        assert fake.entered.acquire(timeout=WAIT)  # the first holds the cluster
        with pytest.raises(grpc.RpcError) as exc:
            stub.Simulate(pb.SimulateRequest(steps=[_fill(1)]), timeout=WAIT)
        assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "--max-concurrent-simulations-per-cluster" in (exc.value.details() or "")
        assert any(d.Is(error_details_pb2.RetryInfo.DESCRIPTOR) for d in _details(exc.value))
        # Explain on the same cluster is not a simulation: admitted (it waits for the lock)
    finally:
        fake.gate.set()
        t.join(WAIT)
    assert first and first[0].complete
    # the slot is given back: the next one runs
    assert stub.Simulate(pb.SimulateRequest(steps=[_fill(1)]), timeout=WAIT).complete
    assert len(fake.calls) == 2


def test_the_memory_estimate_counts_the_fork(servers: Servers) -> None:
    """8 bytes x 10 columns per node of the cluster, 600 B per pod placed or tried, 2 KiB
    per node added, on top of the message's own estimate."""
    server, stub, _ = servers.start()
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        upsert_nodes=[pb_node(f"n{i}") for i in range(10)]), timeout=WAIT)
    req = pb.SimulateRequest(steps=[_fill(100), _add(2)])
    need = need_of(server.engine, "default", req)()
    assert need == estimate(req) + 10 * 80 + 100 * 600 + 2 * 2048


@given(hs.lists(hs.tuples(hs.sampled_from(["fill", "add"]), hs.integers(0, 60)), max_size=8))
def test_the_step_named_is_where_the_running_sum_first_crosses(
    sizes: list[tuple[str, int]]
) -> None:
    lim = Limits(max_simulation_steps=100, max_simulated_pods=100, max_simulated_nodes=100)
    req = pb.SimulateRequest(steps=[_fill(n) if k == "fill" else _add(n) for k, n in sizes])
    pods = nodes = 0
    expected = None
    for i, (k, n) in enumerate(sizes):
        pods += n if k == "fill" else 0
        nodes += n if k == "add" else 0
        if pods > 100 or nodes > 100:
            expected = f"steps[{i}].fill.max_pods" if k == "fill" else f"steps[{i}].add_nodes.count"
            break
    if expected is None:
        size = check_simulation(req, lim, lambda _n: 0)
        assert (size.pods, size.nodes) == (pods, nodes)
    else:
        with pytest.raises(InvalidArgument) as exc:
            check_simulation(req, lim, lambda _n: 0)
        assert exc.value.field == expected


@pytest.mark.parametrize(("max_new_nodes", "probes"), [(1, 4), (3, 6), (10, 10), (1000, 22)])
def test_scale_up_probes_bound_a_gallop_and_a_bisection(max_new_nodes: int, probes: int) -> None:
    """2 + 2 x (bits of max_new_nodes): 1 -> 1 bit, 3 -> 2, 10 -> 4, 1000 -> 10."""
    assert scale_up_probes(max_new_nodes) == probes
