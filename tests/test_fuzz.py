"""Fuzz every RPC of a live server with mutated messages and raw bytes.

Every answer must be OK or a clean refusal (INVALID_ARGUMENT, FAILED_PRECONDITION,
RESOURCE_EXHAUSTED), never UNKNOWN or INTERNAL; the server must stay SERVING; and after each call
the snapshot's books must balance: usage columns equal the sum of the pods held, counts match the
API's, and a pod we placed never pushes its node over allocatable.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.server.app import Server
from schedsvc.server.limits import Limits
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc
from tests.support import Servers, check_books

CLEAN = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}
QUANTITIES = ["100m", "1", "2Gi", "500M", "0", "", "abc", "-1", "1e400", "9" * 40 + "Ti",
              "1.5.5", "0.0001m", "12Ei", "nan", " 1"]
OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus", "", "in"]
NAMES = ["n0", "n1", "n2", "ghost", "", "N\x00", "x" * 300]
UIDS = ["u0", "u1", "u2", "u3", "", "u0"]
RESOURCES = ["cpu", "memory", "pods", "ephemeral-storage", "example.com/gpu", "", "bad name!"]
METHODS = ["UpdateSnapshot", "Schedule", "Explain", "ScheduleStream"]
REQUEST_TYPES: dict[str, Any] = {
    "UpdateSnapshot": pb.UpdateSnapshotRequest,
    "Schedule": pb.ScheduleRequest,
    "Explain": pb.ExplainRequest,
    "ScheduleStream": pb.ScheduleRequest,
}

ints = st.one_of(st.integers(-(2**31), 2**31 - 1), st.sampled_from([0, 1, -1, 2**31 - 1]))


@st.composite
def requirement(draw: st.DrawFn) -> pb.NodeSelectorRequirement:
    return pb.NodeSelectorRequirement(
        key=draw(st.sampled_from(["zone", "kubernetes.io/hostname", "", "a/b/c"])),
        operator=draw(st.sampled_from(OPERATORS)),
        values=draw(st.lists(st.sampled_from(["a", "1", "", "n0"]), max_size=3)),
    )


@st.composite
def fuzz_node(draw: st.DrawFn) -> pb.Node:
    n = pb.Node(
        name=draw(st.sampled_from(NAMES)),
        allocatable=draw(st.dictionaries(st.sampled_from(RESOURCES), st.sampled_from(QUANTITIES),
                                         max_size=4)),
        unschedulable=draw(st.booleans()),
        labels=draw(st.dictionaries(st.sampled_from(["zone", "", "k/"]),
                                    st.sampled_from(["a", "", "-bad"]), max_size=2)),
    )
    if draw(st.booleans()):
        n.taints.add(key=draw(st.sampled_from(["k", ""])),
                     effect=draw(st.sampled_from(["NoSchedule", "Bogus", ""])))
    if draw(st.booleans()):
        n.images.add(names=["img"], size_bytes=draw(st.sampled_from([1, -5, 2**62])))
    return n


@st.composite
def fuzz_pod(draw: st.DrawFn) -> pb.Pod:
    p = pb.Pod(
        uid=draw(st.sampled_from(UIDS)),
        name=draw(st.sampled_from(["p", "", "P_bad"])),
        namespace=draw(st.sampled_from(["default", "", "kube-system"])),
        scheduler_name=draw(st.sampled_from(["", "default-scheduler", "other"])),
        priority=draw(ints),
        node_name=draw(st.sampled_from(["", "", "n0", "ghost"])),
        nominated_node_name=draw(st.sampled_from(["", "", "n1", "ghost"])),
    )
    for _ in range(draw(st.integers(0, 2))):
        c = p.containers.add(name=draw(st.sampled_from(["c", ""])), image="img")
        for k, v in draw(st.dictionaries(st.sampled_from(RESOURCES),
                                         st.sampled_from(QUANTITIES), max_size=3)).items():
            c.requests[k] = v
        if draw(st.booleans()):
            c.ports.add(container_port=draw(ints), host_port=draw(ints),
                        protocol=draw(st.sampled_from(["TCP", "UDP", "BOGUS", ""])))
    if draw(st.booleans()):
        term = p.affinity.node_affinity.required_during_scheduling_ignored_during_execution
        term.node_selector_terms.add().match_expressions.append(draw(requirement()))
    if draw(st.booleans()):
        p.tolerations.add(key="k", operator=draw(st.sampled_from(OPERATORS + ["Equal"])),
                          effect=draw(st.sampled_from(["NoSchedule", "Bogus", ""])))
    if draw(st.booleans()):
        p.topology_spread_constraints.add(
            max_skew=draw(ints), topology_key=draw(st.sampled_from(["zone", ""])),
            when_unsatisfiable=draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway", "x"])),
        )
    return p


@st.composite
def fuzz_request(draw: st.DrawFn) -> tuple[str, Any]:
    method = draw(st.sampled_from(METHODS))
    cluster = draw(st.sampled_from(["", "default", "c2", "x" * 300]))
    if method == "UpdateSnapshot":
        req: Any = pb.UpdateSnapshotRequest(
            cluster=cluster, replace=draw(st.booleans()),
            upsert_nodes=draw(st.lists(fuzz_node(), max_size=4)),
            remove_nodes=draw(st.lists(st.sampled_from(NAMES), max_size=2)),
            upsert_pods=draw(st.lists(fuzz_pod(), max_size=4)),
            remove_pods=draw(st.lists(st.sampled_from(UIDS), max_size=2)),
            expected_generation=draw(st.sampled_from([0, 0, 1, 2**63])),
            expected_epoch=draw(st.sampled_from(["", "", "stale"])),
        )
    elif method == "Explain":
        req = pb.ExplainRequest(cluster=cluster)
        if draw(st.booleans()):
            req.pod.CopyFrom(draw(fuzz_pod()))
    else:
        req = pb.ScheduleRequest(cluster=cluster, pods=draw(st.lists(fuzz_pod(), max_size=5)),
                                 dry_run=draw(st.booleans()))
    return method, req


def _call(stub: pb_grpc.ScheduleServiceStub, method: str, req: Any) -> tuple[grpc.StatusCode, Any]:
    try:
        if method == "ScheduleStream":
            out = list(stub.ScheduleStream(iter([req, req]), timeout=30))
            return grpc.StatusCode.OK, out
        return grpc.StatusCode.OK, getattr(stub, method)(req, timeout=30)
    except grpc.RpcError as err:
        return err.code(), err.details()


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[Server, pb_grpc.ScheduleServiceStub, grpc.Channel]]:
    s = Servers()
    yield s.start(limits=Limits(max_pods_per_request=4, max_nodes_per_update=3))
    s.close()


def _serving(channel: grpc.Channel) -> None:
    resp = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=30)
    assert resp.status == health_pb2.HealthCheckResponse.SERVING


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_messages_get_clean_answers_and_keep_the_books(live: Any, data: Any) -> None:
    server, stub, channel = live
    if data.draw(st.booleans()):  # often start from a sane cluster, so scheduling happens
        stub.UpdateSnapshot(pb.UpdateSnapshotRequest(replace=True, upsert_nodes=[
            pb.Node(name=f"n{i}", allocatable={"cpu": "1", "memory": "1Gi", "pods": "5"})
            for i in range(3)]), timeout=30)
    method, req = data.draw(fuzz_request())
    code, out = _call(stub, method, req)
    assert code in CLEAN, (method, code, out)
    if code == grpc.StatusCode.OK and method == "Schedule" and not req.dry_run:
        c = server.engine.cluster(req.cluster)
        with c.lock:
            snap = c.snapshot
            for p in out.placements:
                if p.outcome == pb.Placement.SCHEDULED and p.message != "already placed":
                    row = snap.index[p.node_name]
                    alloc, used = snap.allocatable[row], snap.requested[row]
                    # a node the client over-filled itself is its business; ours must fit
                    assert np.all(used[:4] <= alloc[:4]) or not snap.pods[p.pod_uid].assumed, (
                        p.node_name, used, alloc)
    if code == grpc.StatusCode.OK and method == "UpdateSnapshot":
        c = server.engine.cluster(req.cluster)
        with c.lock:
            assert (out.nodes, out.pods) == (c.snapshot.num_nodes, len(c.snapshot.pods))
    check_books(server)
    _serving(channel)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(method=st.sampled_from(METHODS + ["Nope"]), body=st.binary(max_size=300))
def test_random_bytes_get_clean_answers(live: Any, method: str, body: bytes) -> None:
    server, _, channel = live
    path = f"/schedsvc.v1.ScheduleService/{method}"
    try:
        if method == "ScheduleStream":
            call = channel.stream_stream(path, request_serializer=None,
                                         response_deserializer=None)
            list(call(iter([body]), timeout=30))
        else:
            channel.unary_unary(path, request_serializer=None,
                                response_deserializer=None)(body, timeout=30)
        code = grpc.StatusCode.OK
    except grpc.RpcError as err:
        code = err.code()
    if method == "Nope":
        assert code == grpc.StatusCode.UNIMPLEMENTED
    else:
        assert code in CLEAN, (method, code, body)
        if code == grpc.StatusCode.OK:  # bytes that happen to decode are real requests
            REQUEST_TYPES[method].FromString(body)
    check_books(server)
    _serving(channel)


def test_truncated_message_is_invalid_argument_not_internal(live: Any) -> None:
    _, _, channel = live
    call = channel.unary_unary("/schedsvc.v1.ScheduleService/Schedule",
                               request_serializer=None, response_deserializer=None)
    with pytest.raises(grpc.RpcError) as err:
        call(b"\x12\x05\xff", timeout=30)  # field 2, length 5, one byte present
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "malformed" in err.value.details()
