"""Schedule requests whose first slice runs on the event loop (server/inline.py,
server/schedule_call.py): the same placements as on the worker threads, a batch that keeps its
cluster's lock when it moves to a thread, nothing held after a cancel, and the loop still
answering health while a stream works on it.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from schedsvc.config import default_config
from schedsvc.engine.scheduler import Cluster, Engine
from schedsvc.server.inline import GROWTH, SLOW_MEMORY_SECONDS, InlinePolicy
from schedsvc.server.request_handler import RequestHandler
from schedsvc.server.schedule_call import ScheduleCall
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc
from tests.builders import pb_node, pb_pod
from tests.support import WAIT, Servers, load, wait_until

SLICE = 0.01


class _Caller:
    """A caller with no deadline that stays."""

    def time_remaining(self) -> None:
        return None

    def is_active(self) -> bool:
        return True


class _Call:
    """What InlinePolicy.record reads of a finished ScheduleCall."""

    def __init__(self, cluster: Cluster, pods: int, max_pod: float, convert: float) -> None:
        self.cluster = cluster
        self.pods = [None] * pods
        self.max_pod_seconds = max_pod
        self.convert_seconds = convert


def _after(k: int) -> Callable[[], bool]:
    """A slice that ends after k pods (asked before each pod)."""
    left = iter([False] * k)
    return lambda: next(left, True)


# ---- the policy ------------------------------------------------------------------------------

def test_policy_starts_only_known_fast_clusters_one_slice_per_loop_iteration() -> None:
    engine = Engine(default_config(), seed=1)
    fast, slow = engine.cluster("fast"), engine.cluster("slow")

    async def run() -> None:
        p = InlinePolicy(SLICE)
        assert p.begin(None, 1) is None  # a cluster the server does not hold
        assert p.begin(fast, 1) is None  # not seen yet: its first request shows its cost
        p.record(_Call(fast, 100, SLICE / 10, 100 * 1e-6))  # type: ignore[arg-type]
        p.record(_Call(slow, 100, 3 * SLICE, 100 * 1e-6))  # type: ignore[arg-type]
        assert p.begin(slow, 1) is None  # its slowest recent pod outlasts a slice
        stop = p.begin(fast, 100)
        assert stop is not None and stop() is False  # the slice has time left
        assert p.begin(fast, 100) is None  # one slice per loop iteration
        await asyncio.sleep(0)  # the loop ran what was ready: the next slice may start
        assert p.begin(fast, 100) is not None
        await asyncio.sleep(0)
        # conversion alone would outlast the slice: 1 us per pod, 10 ms
        assert p.begin(fast, int(SLICE / 1e-6) + 1) is None
        assert p.slices == 2

    asyncio.run(run())


def test_a_slow_pod_keeps_its_cluster_off_the_loop_for_a_while() -> None:
    engine = Engine(default_config(), seed=1)
    c = engine.cluster("c")
    now = [100.0]

    async def run() -> None:
        p = InlinePolicy(SLICE, clock=lambda: now[0])
        p.record(_Call(c, 10, SLICE / 100, 0.0))  # type: ignore[arg-type]
        assert p.begin(c, 10) is not None
        await asyncio.sleep(0)
        p.record(_Call(c, 10, 2 * SLICE, 0.0))  # type: ignore[arg-type]  # a preemption, say
        # fast requests after it do not bring it back before SLOW_MEMORY_SECONDS have passed
        for t in (0.0, 1.0, SLOW_MEMORY_SECONDS - 0.01):
            now[0] = 100.0 + t
            p.record(_Call(c, 10, SLICE / 100, 0.0))  # type: ignore[arg-type]
            assert p.begin(c, 10) is None, t
        now[0] = 100.0 + SLOW_MEMORY_SECONDS
        assert p.begin(c, 10) is not None

    asyncio.run(run())


def test_a_grown_cluster_is_measured_again_on_a_thread() -> None:
    engine = Engine(default_config(), seed=1)
    handler = RequestHandler(engine)
    c = engine.cluster("default")

    def nodes(n: int) -> None:
        handler.update_snapshot(pb.UpdateSnapshotRequest(
            upsert_nodes=[pb_node(f"n{i}") for i in range(n)]))

    async def run() -> None:
        p = InlinePolicy(SLICE)
        nodes(80)
        p.record(_Call(c, 10, 0.0, 0.0))  # type: ignore[arg-type]
        edge = int(80 * (1 + GROWTH))
        nodes(edge)  # still within
        assert p.begin(c, 10) is not None
        await asyncio.sleep(0)
        nodes(edge + 1)
        assert p.begin(c, 10) is None
        p.record(_Call(c, 10, 0.0, 0.0))  # type: ignore[arg-type]  # measured at this size
        assert p.begin(c, 10) is not None

    asyncio.run(run())


def test_policy_is_off_with_a_zero_slice_and_forgets_deleted_clusters() -> None:
    engine = Engine(default_config(), seed=1)
    off = InlinePolicy(0.0)
    off.record(_Call(engine.cluster("c"), 1, 0.0, 0.0))  # type: ignore[arg-type]
    assert off.begin(engine.cluster("c"), 1) is None  # before it would touch the loop
    p = InlinePolicy(SLICE)
    p.record(_Call(engine.cluster("d"), 1, 0.0, 0.0))  # type: ignore[arg-type]
    assert len(p._costs) == 1
    engine.delete_cluster("d")
    gc.collect()
    assert len(p._costs) == 0  # the entry went with the cluster


# ---- a batch in slices -----------------------------------------------------------------------

def _handler(nodes: int = 12) -> RequestHandler:
    sv = RequestHandler(Engine(default_config(), seed=7))
    sv.update_snapshot(pb.UpdateSnapshotRequest(
        replace=True, upsert_nodes=[pb_node(f"n{i}", cpu="2") for i in range(nodes)]))
    return sv


def _request(n: int = 10) -> pb.ScheduleRequest:
    cpus = ["100m", "100m", "300m", "100m", "700m", "700m", "100m", "250m", "250m", "100m"]
    return pb.ScheduleRequest(pods=[pb_pod(f"p{i}", cpu=cpus[i % len(cpus)]) for i in range(n)])


def _placed(resp: pb.ScheduleResponse | None) -> list[tuple[str, str, int]]:
    assert resp is not None
    return [(p.pod_uid, p.node_name, p.outcome) for p in resp.placements]


@pytest.mark.parametrize("k", [0, 1, 3, 7, 10])
def test_a_batch_split_after_k_pods_places_as_one_run(k: int) -> None:
    whole = _handler()
    want = whole.schedule_call(_request(), _Caller())
    sv = _handler()
    call = ScheduleCall(sv, _request(), _Caller())
    over = call.step(_after(k), blocking=False)
    assert over == (k >= 10)
    assert len(call.placements) == min(k, 10)
    if not over:  # the rest on another thread, as the server's rest executor runs it
        t = threading.Thread(target=call.step)
        t.start()
        t.join(WAIT)
    call.close()
    assert _placed(call.response()) == _placed(want.response())
    assert call.generation == want.generation
    assert not sv.engine.cluster("default").lock.locked()
    assert sv.admission.in_flight("default") == 0


def test_a_split_batch_keeps_the_cluster_lock_between_slices() -> None:
    sv = _handler()
    cluster = sv.engine.cluster("default")
    call = ScheduleCall(sv, _request(), _Caller())
    assert call.step(_after(2), blocking=False) is False
    assert cluster.lock.locked()  # held between the slices
    # an update that removes every node waits for the batch's end instead of landing inside it
    removed = threading.Thread(target=sv.update_snapshot, args=(pb.UpdateSnapshotRequest(
        remove_nodes=[f"n{i}" for i in range(12)]),))
    removed.start()
    assert call.step() is True
    call.close()
    removed.join(WAIT)
    assert [p.outcome for p in call.response().placements] == [pb.Placement.SCHEDULED] * 10
    assert cluster.snapshot.num_nodes == 0


def test_a_busy_cluster_makes_a_non_blocking_step_take_nothing() -> None:
    sv = _handler()
    cluster = sv.engine.cluster("default")
    call = ScheduleCall(sv, _request(), _Caller())
    with cluster.lock:
        assert call.step(blocking=False) is False
        assert call.placements == []
    assert call.step() is True
    assert not cluster.lock.locked()
    call.close()
    call.close()  # once only
    assert sv.admission.in_flight("default") == 0


def test_close_mid_batch_gives_back_the_lock_and_the_admission_slot() -> None:
    sv = _handler()
    call = ScheduleCall(sv, _request(), _Caller())
    assert sv.admission.in_flight("default") == 1
    assert call.step(_after(4), blocking=False) is False
    call.close()
    assert not sv.engine.cluster("default").lock.locked()
    assert sv.admission.in_flight("default") == 0


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
