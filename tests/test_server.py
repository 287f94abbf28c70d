"""The gRPC surface: a real server on a loopback port, and the request handler without gRPC.

Every malformed request fails as a whole with INVALID_ARGUMENT naming the field (a
google.rpc.BadRequest detail) and leaves the snapshot exactly as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status

from schedsvc.config import default_config
from schedsvc.engine.scheduler import Engine
from schedsvc.errors import InvalidArgument
from schedsvc.server.request_handler import RequestHandler
from schedsvc.server.status import status_for
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node, pb_pod


def state(stub: Any, cluster: str = "default") -> tuple[int, int, int]:
    r = stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster=cluster))
    return r.generation, r.nodes, r.pods


def bad_field(err: grpc.RpcError) -> str:
    st = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert st is not None
    for d in st.details:
        br = error_details_pb2.BadRequest()
        if d.Unpack(br):
            return str(br.field_violations[0].field)
    raise AssertionError("no BadRequest detail")


def seeded(stub: Any) -> None:
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        upsert_nodes=[pb_node("n0"), pb_node("n1")],
        upsert_pods=[pb_pod("bound", node_name="n0")],
    ))


def test_health_and_reflection_answer(make_server: Callable[..., Any]) -> None:
    server, _ = make_server()
    ch = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    h = health_pb2_grpc.HealthStub(ch)
    resp = h.Check(health_pb2.HealthCheckRequest(service="schedsvc.v1.ScheduleService"))
    assert resp.status == health_pb2.HealthCheckResponse.SERVING
    r = reflection_pb2_grpc.ServerReflectionStub(ch)
    answers = list(r.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(
        list_services="")])))
    names = {s.name for s in answers[0].list_services_response.service}
    assert "schedsvc.v1.ScheduleService" in names and "grpc.health.v1.Health" in names
    ch.close()


def test_snapshot_schedule_stream_and_explain_round_trip(stub: Any) -> None:
    seeded(stub)
    gen, nodes, pods = state(stub)
    assert (nodes, pods) == (2, 1)
    resp = stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("a"), pb_pod("b")]))
    assert [p.outcome for p in resp.placements] == [pb.Placement.SCHEDULED] * 2
    assert all(p.node_name in ("n0", "n1") for p in resp.placements)
    assert resp.generation > gen and resp.epoch
    streamed = list(stub.ScheduleStream(iter([
        pb.ScheduleRequest(pods=[pb_pod("c")]),
        pb.ScheduleRequest(pods=[pb_pod("huge", cpu="64")]),
    ])))
    assert len(streamed) == 2
    assert streamed[0].placements[0].outcome == pb.Placement.SCHEDULED
    huge = streamed[1].placements[0]
    assert huge.outcome == pb.Placement.UNSCHEDULABLE
    # 64 cpus exceed every node's allocatable: DefaultPreemption says it cannot help
    assert huge.message == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert dict(huge.reasons) == {"Insufficient cpu": 2}
    ex = stub.Explain(pb.ExplainRequest(pod=pb_pod("d")))
    assert {n.name for n in ex.nodes} == {"n0", "n1"} and ex.chosen_node in ("n0", "n1")
    assert all(n.feasible and n.scores for n in ex.nodes)
    assert state(stub)[2] == 4  # bound + a + b + c; Explain assumed nothing


def test_an_unknown_scheduler_name_is_rejected_not_failed(stub: Any) -> None:
    seeded(stub)
    resp = stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("x", scheduler_name="nobody")]))
    assert resp.placements[0].outcome == pb.Placement.REJECTED


def _req(**kw: Any) -> pb.ScheduleRequest:
    return pb.ScheduleRequest(**kw)


BAD_REQUESTS: list[Any] = [
    pytest.param("Schedule", _req(pods=[pb_pod("a", cpu="lots")]),
                 'pods[0].containers[0].requests["cpu"]', id="a bad quantity"),
    pytest.param("Schedule", _req(pods=[pb_pod("")]), "pods[0].uid", id="an empty uid"),
    pytest.param("Schedule", _req(pods=[pb_pod("a"), pb_pod("a")]), "pods[1].uid",
                 id="a duplicate uid in the batch"),
    pytest.param(
        "Schedule",
        _req(pods=[pb_pod("a", affinity=pb.Affinity(node_affinity=pb.NodeAffinity(
            required_during_scheduling_ignored_during_execution=pb.NodeSelector(
                node_selector_terms=[pb.NodeSelectorTerm(match_expressions=[
                    pb.NodeSelectorRequirement(key="zone", operator="Near", values=["a"])])]))))]),
        "pods[0].affinity.node_affinity.required_during_scheduling_ignored_during_execution"
        ".node_selector_terms[0].match_expressions[0].operator",
        id="an unknown operator"),
    pytest.param(
        "Schedule",
        _req(pods=[pb_pod("a", affinity=pb.Affinity(node_affinity=pb.NodeAffinity(
            preferred_during_scheduling_ignored_during_execution=[pb.PreferredSchedulingTerm(
                weight=-3, preference=pb.NodeSelectorTerm())])))]),
        "pods[0].affinity.node_affinity.preferred_during_scheduling_ignored_during_execution"
        "[0].weight",
        id="a negative weight"),
    pytest.param(
        "UpdateSnapshot",
        pb.UpdateSnapshotRequest(upsert_pods=[pb_pod("p", node_name="nowhere")]),
        "upsert_pods[0].node_name", id="a pod bound to an unknown node"),
    pytest.param(
        "UpdateSnapshot",
        pb.UpdateSnapshotRequest(upsert_nodes=[pb_node("n9", cpu="-1")]),
        'upsert_nodes[0].allocatable["cpu"]', id="a negative allocatable"),
    pytest.param(
        "UpdateSnapshot",
        pb.UpdateSnapshotRequest(upsert_nodes=[pb.Node(
            name="n9", taints=[pb.Taint(key="k", effect="Sometimes")])]),
        "upsert_nodes[0].taints[0].effect", id="an unknown taint effect"),
    pytest.param("Explain", pb.ExplainRequest(), "pod", id="Explain without a pod"),
]


@pytest.mark.parametrize(("method", "request_msg", "field"), BAD_REQUESTS)
def test_a_malformed_request_names_its_field_and_changes_nothing(
    stub: Any, method: str, request_msg: Any, field: str
) -> None:
    seeded(stub)
    before = state(stub)
    with pytest.raises(grpc.RpcError) as e:
        getattr(stub, method)(request_msg)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert bad_field(e.value) == field
    assert state(stub) == before
    # the server keeps serving
    assert stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("ok")])).placements[0].node_name


def test_a_batch_over_the_pod_limit_is_invalid_and_an_oversized_message_is_refused(
    stub: Any,
) -> None:
    seeded(stub)
    before = state(stub)
    with pytest.raises(grpc.RpcError) as e:
        stub.Schedule(pb.ScheduleRequest(pods=[pb_pod(f"p{i}") for i in range(10_001)]))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and bad_field(e.value) == "pods"
    # beyond the transport's message size limit (64 MiB) grpc itself refuses the message
    huge = pb.UpdateSnapshotRequest(
        upsert_nodes=[pb.Node(name="big", labels={"blob": "x" * (65 * 2**20)})]
    )
    with pytest.raises(grpc.RpcError) as e2:
        stub.UpdateSnapshot(huge)
    assert e2.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert state(stub) == before


def test_stale_expected_generation_or_epoch_is_failed_precondition(stub: Any) -> None:
    seeded(stub)
    gen, _, _ = state(stub)
    with pytest.raises(grpc.RpcError) as e:
        stub.UpdateSnapshot(pb.UpdateSnapshotRequest(expected_generation=gen + 7))
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as e2:
        stub.UpdateSnapshot(pb.UpdateSnapshotRequest(expected_epoch="an-old-epoch"))
    assert e2.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    ok = stub.UpdateSnapshot(pb.UpdateSnapshotRequest(expected_generation=gen))
    assert ok.generation == gen


# ---- the request handler, without gRPC -------------------------------------------------------


class _Caller:
    """A caller with no deadline that stays."""

    def time_remaining(self) -> None:
        return None

    def is_active(self) -> bool:
        return True


@pytest.fixture
def handler() -> Iterator[RequestHandler]:
    engine = Engine(default_config(), seed=1)
    yield RequestHandler(engine)
    engine.close()


def test_handler_schedules_without_grpc(handler: RequestHandler) -> None:
    handler.update_snapshot(pb.UpdateSnapshotRequest(upsert_nodes=[pb_node("n0", cpu="1")]))
    resp = handler.schedule(
        pb.ScheduleRequest(pods=[pb_pod("a", cpu="600m"), pb_pod("b", cpu="600m")]), _Caller()
    )
    assert resp.placements[0].node_name == "n0"
    assert resp.placements[1].outcome == pb.Placement.UNSCHEDULABLE
    # a (priority 0) holds the room b needs, and b may not evict a pod of its own priority
    assert resp.placements[1].message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    assert handler.admission.in_flight("default") == 0


def test_handler_raises_a_domain_error_that_maps_to_invalid_argument(
    handler: RequestHandler,
) -> None:
    with pytest.raises(InvalidArgument) as e:
        handler.schedule(pb.ScheduleRequest(pods=[pb_pod("a", cpu="?")]), _Caller())
    assert e.value.field.startswith("pods[0]")
    st = status_for(e.value)
    assert st.code == grpc.StatusCode.INVALID_ARGUMENT
    assert st.details == str(e.value)
    assert handler.admission.in_flight("default") == 0  # refused holding nothing
