"""Every RPC that takes a cluster's lock is admitted per cluster (issue #30, defect 4).

Explain and UpdateSnapshot used to go straight to the worker threads: 200 Explains on one big
cluster each held a thread waiting for its lock, and another tenant's one-node update waited
seconds for a thread. Now Schedule, UpdateSnapshot and Explain share one per-cluster counter
(`--max-queue-per-cluster`): past it the answer is RESOURCE_EXHAUSTED with a RetryInfo delay,
before a thread is taken, so one cluster's line holds at most that many threads.

The cluster is frozen by holding its lock, as in test_reliability.py; nothing sleeps.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from schedsvc.server.limits import Limits
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc
from tests.builders import pb_node, pb_pod
from tests.support import WAIT, Servers, load, wait_until

QUEUE = 8  # the default --max-queue-per-cluster
BURST = 40  # more requests at one cluster than --max-workers (16) threads
VICTIM_SECONDS = 2.0  # generous: the defect was a stall of seconds, a free thread answers in ms


def _retry_delay_ms(err: grpc.RpcError) -> int:
    status = rpc_status.from_call(err)
    assert status is not None
    infos = [d for d in status.details if d.Is(error_details_pb2.RetryInfo.DESCRIPTOR)]
    assert len(infos) == 1
    info = error_details_pb2.RetryInfo()
    infos[0].Unpack(info)
    return int(info.retry_delay.ToMilliseconds())


def _explain(stub: pb_grpc.ScheduleServiceStub, i: int) -> Any:
    return stub.Explain.future(pb.ExplainRequest(cluster="a", pod=pb_pod(f"e{i}")), timeout=WAIT)


def _update(stub: pb_grpc.ScheduleServiceStub, i: int) -> Any:
    return stub.UpdateSnapshot.future(
        pb.UpdateSnapshotRequest(cluster="a", upsert_nodes=[pb_node(f"u{i}")]), timeout=WAIT
    )


def _schedule(stub: pb_grpc.ScheduleServiceStub, i: int) -> Any:
    return stub.Schedule.future(pb.ScheduleRequest(cluster="a", pods=[pb_pod(f"s{i}")]),
                                timeout=WAIT)


@pytest.mark.parametrize(
    "send",
    [
        pytest.param(_explain, id="a burst of Explains on one cluster"),
        pytest.param(_update, id="a burst of UpdateSnapshots on one cluster"),
        pytest.param(_schedule, id="a burst of Schedules on one cluster"),
    ],
)
def test_a_burst_on_one_cluster_is_bounded_and_another_tenant_stays_fast(
    servers: Servers, send: Callable[[pb_grpc.ScheduleServiceStub, int], Any]
) -> None:
    server, stub, _ = servers.start(max_workers=16, loop_slice_seconds=0)
    load(stub, 4, cluster="a")
    load(stub, 2, cluster="b")
    cluster = server.engine.cluster("a")
    with cluster.lock:
        futures = [send(stub, i) for i in range(BURST)]
        wait_until(lambda: server.servicer.in_flight() >= QUEUE, what="the burst queued")
        # another tenant: its one-node update and its Explain find a free thread at once
        victim: list[Callable[[], Any]] = [
            lambda: stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
                cluster="b", upsert_nodes=[pb_node("n0", cpu="3")]), timeout=5),
            lambda: stub.Explain(pb.ExplainRequest(cluster="b", pod=pb_pod("v")), timeout=5),
        ]
        for call in victim:
            t0 = time.monotonic()
            call()
            assert time.monotonic() - t0 < VICTIM_SECONDS
        # the frozen cluster's line is the bound: the rest were refused, with a retry delay
        wait_until(lambda: sum(f.done() for f in futures) == BURST - QUEUE, what="refusals")
        refused = [f.exception() for f in futures if f.done()]
        assert all(e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED for e in refused)
        assert all(_retry_delay_ms(e) > 0 for e in refused)
        assert server.handler.admission.in_flight("a") == QUEUE
        # every kind of request counts in the same line
        for more in (_explain, _update, _schedule):
            with pytest.raises(grpc.RpcError) as err:
                more(stub, 1000).result()
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    admitted = [f for f in futures if f.exception() is None]
    assert len(admitted) == QUEUE
    wait_until(lambda: server.handler.admission.in_flight("a") == 0, what="slots given back")


def test_a_queued_request_whose_caller_left_gives_its_slot_back(servers: Servers) -> None:
    """Work still waiting for a thread when its call ends never runs, and frees its slot."""
    server, stub, _ = servers.start(max_workers=2, loop_slice_seconds=0)
    load(stub, 2, cluster="a")
    with server.engine.cluster("a").lock:
        # two run (blocked on the lock, each on a thread), two wait for a thread
        futures = [
            stub.Explain.future(pb.ExplainRequest(cluster="a", pod=pb_pod(f"e{i}")), timeout=1)
            for i in range(4)
        ]
        for f in futures:
            with pytest.raises(grpc.RpcError):
                f.result()
        wait_until(lambda: server.handler.admission.in_flight("a") == 2,
                   what="the two that never started gave back their slots")
    wait_until(lambda: server.handler.admission.in_flight("a") == 0, what="all slots back")


def test_per_cluster_bound_applies_to_updates_with_a_small_queue(servers: Servers) -> None:
    server, stub, _ = servers.start(limits=Limits(max_queue_per_cluster=1))
    load(stub, 1, cluster="a")
    with server.engine.cluster("a").lock:
        first = _update(stub, 0)
        wait_until(lambda: server.handler.admission.in_flight("a") == 1, what="one queued")
        with pytest.raises(grpc.RpcError) as err:
            stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster="a"), timeout=WAIT)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "--max-queue-per-cluster" in (err.value.details() or "")
    assert first.result().nodes == 2
