"""SIGTERM drains: a stream in flight when the signal lands is served to its end, new calls are
refused, and the process exits 0."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc
from tests.builders import pb_pod

from .ops_support import ServerProcess, load_cluster, serve_argv, wait_for

BEFORE, AFTER, PODS = 4, 4, 25


def _draining(health: health_pb2_grpc.HealthStub) -> bool | None:
    """True once the server stopped reporting SERVING (or stopped answering new calls)."""
    try:
        status = health.Check(health_pb2.HealthCheckRequest(), timeout=5).status
    except grpc.RpcError:
        return True
    return True if status != health_pb2.HealthCheckResponse.SERVING else None


def test_sigterm_drains_a_stream_in_flight_and_exits_0() -> None:
    server = ServerProcess(serve_argv("--grace-seconds", "60", "--seed", "1"))
    try:
        sigterm_sent = threading.Event()

        def requests() -> Iterator[pb.ScheduleRequest]:
            for i in range(BEFORE + AFTER):
                if i == BEFORE:
                    # the rest of the stream is sent only after the server began draining
                    assert sigterm_sent.wait(60), "SIGTERM never sent"
                yield pb.ScheduleRequest(pods=[pb_pod(f"r{i}-{j}") for j in range(PODS)])

        with server.channel() as ch, server.channel() as probe_ch:
            stub = pb_grpc.ScheduleServiceStub(ch)
            load_cluster(stub, 50)
            responses = []
            for resp in stub.ScheduleStream(requests(), timeout=120):
                responses.append(resp)
                if len(responses) == BEFORE:
                    server.proc.send_signal(signal.SIGTERM)
                    wait_for(
                        lambda: _draining(health_pb2_grpc.HealthStub(probe_ch)), 60,
                        "the server to start draining",
                    )
                    sigterm_sent.set()
            # every request got its response, the ones sent after SIGTERM included
            assert len(responses) == BEFORE + AFTER
            assert all(
                p.node_name and p.outcome == pb.Placement.SCHEDULED
                for r in responses for p in r.placements
            )
            assert sum(len(r.placements) for r in responses) == (BEFORE + AFTER) * PODS
        assert server.proc.wait(60) == 0, server.output()
    finally:
        server.close()


def test_sigterm_when_idle_exits_0() -> None:
    server = ServerProcess(serve_argv())
    try:
        assert server.terminate() == 0, server.output()
    finally:
        server.close()
