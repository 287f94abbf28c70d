"""Schedule requests whose first slice runs on the event loop (server/inline.py,
server/schedule_call.py), below the server: the InlinePolicy that decides which clusters start
on the loop, and a batch run in slices that places as one run, keeps its cluster's lock
between slices and gives everything back on close. Through the server:
test_loop_slice_server.py.
"""

from __future__ import annotations

import asyncio
import gc
import threading

import pytest

from schedsvc.config import default_config
from schedsvc.engine.scheduler import Cluster, Engine
from schedsvc.server.inline import GROWTH, SLOW_MEMORY_SECONDS, InlinePolicy
from schedsvc.server.request_handler import RequestHandler
from schedsvc.server.schedule_call import ScheduleCall
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node, pb_pod
from tests.loop_slice_cases import SLICE, _after, _placed
from tests.support import WAIT


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
