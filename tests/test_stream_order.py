"""A stream answers in order and ends where a bad request stands: the requests before it are
answered, none after it runs. (Guards any reading ahead of the answers: bench/AB-old-new.md
tells why the server reads none today.)"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import grpc
import pytest

from schedsvc.server.limits import Limits
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_pod
from tests.support import WAIT, Servers, load, snapshot_pods, wait_until

MALFORMED = b"\x12\x05\xff"  # field 2, length 5, one byte present


def _request(prefix: str, n: int, cluster: str = "") -> pb.ScheduleRequest:
    return pb.ScheduleRequest(cluster=cluster, pods=[pb_pod(f"{prefix}{i}") for i in range(n)])


def test_requests_before_a_malformed_one_are_answered_and_none_after_it_runs(
    servers: Servers,
) -> None:
    server, stub, channel = servers.start()
    load(stub, 4)
    call = channel.stream_stream("/schedsvc.v1.ScheduleService/ScheduleStream",
                                 request_serializer=None, response_deserializer=None)
    sent = [_request("a", 3).SerializeToString(), _request("b", 3).SerializeToString(),
            MALFORMED, _request("c", 3).SerializeToString()]
    answers: list[pb.ScheduleResponse] = []
    with pytest.raises(grpc.RpcError) as err:
        for raw in call(iter(sent), timeout=WAIT):
            answers.append(pb.ScheduleResponse.FromString(raw))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "malformed" in (err.value.details() or "")
    assert [[p.pod_uid for p in a.placements] for a in answers] == [
        ["a0", "a1", "a2"], ["b0", "b1", "b2"]]
    placed = snapshot_pods(server)
    assert {"a0", "b2"} <= set(placed) and not any(uid.startswith("c") for uid in placed)
    wait_until(lambda: server.servicer.in_flight() == 0, what="in-flight back to 0")
    wait_until(lambda: server.servicer.streams.open_streams() == 0, what="stream closed")


def test_a_refused_cluster_ends_the_stream_after_the_answers_before_it(servers: Servers) -> None:
    server, stub, _ = servers.start(limits=Limits(max_streams_per_cluster=1))
    load(stub, 2, cluster="a")
    load(stub, 2, cluster="b")
    hold = threading.Event()

    def holder() -> Iterator[pb.ScheduleRequest]:
        yield _request("h", 1, cluster="a")
        hold.wait(WAIT)

    held = stub.ScheduleStream(holder(), timeout=WAIT)
    assert next(held).placements[0].outcome == pb.Placement.SCHEDULED
    answers = []
    with pytest.raises(grpc.RpcError) as err:
        for resp in stub.ScheduleStream(iter([_request("x", 1, cluster="b"),
                                              _request("y", 1, cluster="a")]), timeout=WAIT):
            answers.append([p.pod_uid for p in resp.placements])
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert answers == [["x0"]]
    assert "y0" not in snapshot_pods(server, "a")
    hold.set()
    wait_until(lambda: server.servicer.streams.open_streams() == 0, what="streams closed")
    assert server.servicer.in_flight() == 0
