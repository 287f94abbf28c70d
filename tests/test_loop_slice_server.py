"""Schedule requests whose first slice runs on the event loop, through the gRPC server: the same
placements as on the worker threads, nothing held after a cancel, no deadlock on a split
batch's lock, the loop still answering health while a stream works on it, and (from review)
a busy cluster waited for on a worker rather than the rest pool, conversion ending with its
slice.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from schedsvc.engine.scheduler import Cluster
from schedsvc.server.inline import InlinePolicy
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc
from tests.builders import pb_node, pb_pod
from tests.loop_slice_cases import SLICE, _after, _placed
from tests.support import WAIT, Servers, load, wait_until

# ---- through the server ----------------------------------------------------------------------

class _Forced(InlinePolicy):
    """Every request on a held cluster starts on the loop, and its slice ends after k pods."""

    def __init__(self, k: int) -> None:
        super().__init__(SLICE)
        self.k = k

    def begin(self, cluster: Cluster | None, pods: int) -> Callable[[], bool] | None:
        if cluster is None:
            return None
        self.slices += 1
        return _after(self.k)


def _stream(stub: Any, requests: list[pb.ScheduleRequest]) -> list[pb.ScheduleResponse]:
    return list(stub.ScheduleStream(iter(requests), timeout=WAIT))


def _batches(n: int) -> list[pb.ScheduleRequest]:
    return [pb.ScheduleRequest(pods=[pb_pod(f"b{j}-{i}", cpu=["100m", "300m"][j % 2])
                                     for i in range(10)]) for j in range(n)]


def test_slices_on_the_loop_place_as_the_worker_threads_do(servers: Servers) -> None:
    # a slice of a second: no pod on a loaded machine is that slow, so "on" always starts on
    # the loop once its first request was measured (a 10 ms slice failed 1 run in 4 under load)
    on, on_stub, _ = servers.start(loop_slice_seconds=1.0)
    off, off_stub, _ = servers.start(loop_slice_seconds=0.0)
    split, split_stub, _ = servers.start(loop_slice_seconds=SLICE)
    split.servicer.inline = _Forced(3)
    for stub in (on_stub, off_stub, split_stub):
        load(stub, 30, cpu="2")
    got = [[_placed(r) for r in _stream(stub, _batches(12))]
           for stub in (on_stub, off_stub, split_stub)]
    assert got[0] == got[1] == got[2]
    assert on.servicer.inline.slices > 0  # the first request ran on a thread, later ones not
    assert off.servicer.inline.slices == 0
    assert split.servicer.inline.slices == 12


def test_a_cancel_while_the_rest_waits_for_a_thread_leaves_nothing_held(
    servers: Servers,
) -> None:
    server, stub, _ = servers.start(max_workers=1)
    load(stub, 10, cpu="2")
    server.servicer.inline = _Forced(1)
    cluster = server.engine.cluster("default")
    gate = threading.Event()
    server.rest_executor.submit(gate.wait, WAIT)  # the rest's only thread is busy
    fut = stub.Schedule.future(_batches(1)[0], timeout=WAIT)
    wait_until(lambda: cluster.lock.locked(), what="the first slice holds the lock")
    assert server.handler.admission.in_flight("default") == 1
    fut.cancel()
    wait_until(lambda: not cluster.lock.locked(), what="lock given back")
    assert server.handler.admission.in_flight("default") == 0
    gate.set()
    resp = stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("after")]), timeout=WAIT)
    assert resp.placements[0].outcome == pb.Placement.SCHEDULED
    assert "b0-0" in cluster.snapshot.pods  # the first slice's pod stays assumed
    assert "b0-1" not in cluster.snapshot.pods  # the rest never ran


def test_a_request_waiting_for_a_split_batchs_lock_on_every_worker_does_not_deadlock(
    servers: Servers,
) -> None:
    """The rest of a batch does not queue behind requests that wait for its lock: with one
    worker thread, an update queued before the batch takes that thread and waits for the
    batch's lock; the batch's rest must run elsewhere, or neither ever ends."""
    server, stub, _ = servers.start(max_workers=1)
    load(stub, 10, cpu="2")
    server.servicer.inline = _Forced(1)
    gate = threading.Event()
    server.executor.submit(gate.wait, WAIT)  # the only worker is busy
    update = stub.UpdateSnapshot.future(pb.UpdateSnapshotRequest(
        upsert_nodes=[pb_node("late", cpu="2")]), timeout=WAIT)
    wait_until(lambda: server.servicer.in_flight() == 1, what="the update queued")
    batch = stub.Schedule.future(_batches(1)[0], timeout=WAIT)
    # the batch's first slice ran on the loop; its rest is done, or queued behind the update
    wait_until(lambda: batch.done() or server.servicer.in_flight() == 2, what="the slice")
    gate.set()  # the worker takes the update, which waits for the batch's lock if still held
    resp = batch.result(timeout=WAIT)
    assert [p.outcome for p in resp.placements] == [pb.Placement.SCHEDULED] * 10
    assert update.result(timeout=WAIT).nodes == 11


async def _busy_stream_and_health(port: int, requests: Iterator[pb.ScheduleRequest]) -> int:
    """A stream working through `requests` while health checks run; how many answered."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        call = pb_grpc.ScheduleServiceStub(ch).ScheduleStream(requests, timeout=WAIT)
        health = health_pb2_grpc.HealthStub(ch)
        answered = 0

        async def checks() -> None:
            nonlocal answered
            for _ in range(40):
                h = await health.Check(health_pb2.HealthCheckRequest(), timeout=WAIT)
                answered += h.status == health_pb2.HealthCheckResponse.SERVING
                await asyncio.sleep(0.002)

        async def drain() -> int:
            return len([r async for r in call])

        n, _ = await asyncio.gather(drain(), checks())
        assert n == 60
        return answered


def test_health_answers_while_a_stream_works_on_the_loop(servers: Servers) -> None:
    server, stub, _ = servers.start()
    server.servicer.inline = _Forced(5)  # slices of 5 pods on the loop, however slow a pod is
    load(stub, 200, cpu="8")
    reqs = iter([pb.ScheduleRequest(pods=[pb_pod(f"h{j}-{i}") for i in range(20)])
                 for j in range(60)])
    assert asyncio.run(_busy_stream_and_health(server.port, reqs)) == 40
    assert server.servicer.inline.slices > 0


# ---- review: the rest pool, conversion on the loop ---------------------------------------------

def test_a_request_that_found_its_cluster_busy_waits_for_it_on_a_worker_not_the_rest_pool(
    servers: Servers,
) -> None:
    """A request whose slice found its cluster locked moves on holding nothing. Were it to wait
    for the lock on the rest pool, a batch that took the lock on the loop a moment later would
    queue its rest behind it there, and neither would ever end (a caller without a deadline
    holds the cluster, its admission slots and the rest pool's thread for good)."""
    server, stub, _ = servers.start(max_workers=1)
    load(stub, 10, cpu="2")
    server.servicer.inline = _Forced(1)
    cluster = server.engine.cluster("default")
    first, second = _batches(2)
    gate = threading.Event()
    server.rest_executor.submit(gate.wait, WAIT)  # its only thread runs another batch's rest
    cluster.lock.acquire()  # a request on a worker thread holds the cluster
    try:
        busy = stub.Schedule.future(first, timeout=WAIT)
        wait_until(lambda: server.servicer.in_flight() == 1, what="the busy request moved on")
    finally:
        cluster.lock.release()
    split = stub.Schedule.future(second, timeout=WAIT)
    wait_until(lambda: split.done() or "b1-0" in cluster.snapshot.pods,
               what="the second request's first pod")
    gate.set()
    for fut in (busy, split):
        assert [p.outcome for p in fut.result(timeout=WAIT).placements] == (
            [pb.Placement.SCHEDULED] * 10
        )


def test_conversion_on_the_loop_ends_with_its_slice(
    servers: Servers, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The policy guesses a request's conversion from the cluster's last request, per pod; pods
    the conversion caches have not seen (a Job's pods each carry their own index label) cost
    many times what cached ones do. Here the second request's pods convert slowly (2 ms each,
    standing in for such misses): the loop must not go on converting past its slice."""
    server, stub, _ = servers.start()
    load(stub, 10, cpu="8")
    stub.Schedule(pb.ScheduleRequest(pods=[pb_pod(f"w{i}") for i in range(50)]), timeout=WAIT)
    conv = server.handler.converter
    real = conv.pod_from_pb
    loop_thread = server._loop_thread
    on_loop = 0

    def slow(msg: pb.Pod, prefix: str, max_miss_bytes: int = 0) -> Any:
        nonlocal on_loop
        on_loop += threading.current_thread() is loop_thread
        time.sleep(0.002)
        return real(msg, prefix, max_miss_bytes)

    monkeypatch.setattr(conv, "pod_from_pb", slow)
    resp = stub.Schedule(
        pb.ScheduleRequest(pods=[pb_pod(f"s{i}") for i in range(50)]), timeout=WAIT
    )
    assert len(resp.placements) == 50
    assert on_loop <= SLICE / 0.002 + 1  # a slice's worth, and the pod before the next look
