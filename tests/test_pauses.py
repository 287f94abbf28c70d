"""Pauses the event loop waits out that are not its own work (server/pauses.py).

A snapshot must be freed by reference counting when it is replaced, or freezing the heap would
keep every replaced one; the policy must still reclaim a cycle it froze by accident.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import weakref
from collections.abc import Iterator

import grpc
import pytest

from schedsvc.config import default_config
from schedsvc.engine.preemption.victim_table import VictimTable
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.framework.selector_counts import SelectorCounts
from schedsvc.framework.snapshot import Snapshot
from schedsvc.server.app import Server, ServerOptions
from schedsvc.server.malformed import MalformedRequestInterceptor
from schedsvc.server.pauses import HeapPolicy, ShortTurns
from schedsvc.server.request_handler import SETTLE_ITEMS, _settles
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import node, pod


@pytest.fixture
def thawed() -> Iterator[None]:
    yield
    gc.unfreeze()


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_replaced_snapshot_with_its_listeners_is_freed_without_the_collector() -> None:
    c = Engine(default_config(), seed=1).cluster("c")
    c.update(SnapshotUpdate(
        upsert_nodes=[node(f"n{i}") for i in range(50)],
        upsert_pods=[pod(f"p{i}", node_name=f"n{i}") for i in range(50)],
    ))
    old = c.snapshot
    SelectorCounts.for_snapshot(old)  # both listeners refer back to their snapshot
    VictimTable.for_snapshot(old)
    assert len(old.listeners) == 2
    gone = weakref.ref(old)
    del old
    gc.collect()
    gc.disable()
    try:
        c.update(SnapshotUpdate(replace=True, upsert_nodes=[node("m")]))
        assert gone() is None  # freed at once, by reference counting
    finally:
        gc.enable()


def test_a_settle_freezes_the_heap_and_keeps_a_stray_cycle_only_until_it_doubles(
    thawed: None,
) -> None:
    policy = HeapPolicy(floor=0)
    policy.settle()  # a limit of 0: the first settle is a full pass
    assert policy.full_passes == 1 and gc.get_freeze_count() > 0
    stray = _Cycle()
    kept = weakref.ref(stray)
    gc.freeze()  # frozen while alive (a settle racing a request), then dropped
    del stray
    policy.settle()
    assert policy.full_passes == 1 and kept() is not None  # below the limit: kept
    growth = [[] for _ in range(gc.get_freeze_count() + 1)]  # the frozen set doubles
    policy.settle()
    assert policy.full_passes == 2 and kept() is None
    del growth


@pytest.mark.parametrize(("request_", "settles"), [
    (pb.UpdateSnapshotRequest(replace=True), True),
    (pb.UpdateSnapshotRequest(commit=True), True),
    (pb.UpdateSnapshotRequest(upsert_nodes=[pb.Node(name=f"n{i}") for i in range(SETTLE_ITEMS)]),
     True),
    (pb.UpdateSnapshotRequest(
        upsert_nodes=[pb.Node(name="n")], upsert_pods=[pb.Pod(uid=f"p{i}") for i in range(254)]),
     False),
    (pb.UpdateSnapshotRequest(remove_nodes=[f"n{i}" for i in range(1000)]), False),
])
def test_which_updates_settle(request_: pb.UpdateSnapshotRequest, settles: bool) -> None:
    assert _settles(request_) is settles


def test_only_a_server_asked_to_freezes_the_heap() -> None:
    plain = Server(Engine(default_config(), seed=1), ServerOptions(address="127.0.0.1:0"))
    assert plain.handler.heap is None
    options = ServerOptions(address="127.0.0.1:0", tune_process=True)
    assert Server(Engine(default_config(), seed=1), options).handler.heap is not None


def test_snapshot_type_is_weakly_referenceable() -> None:
    """The listeners' back references rely on it: a weak reference reaches the snapshot while
    it lives and does not keep it alive."""
    snap = Snapshot()
    ref = weakref.ref(snap)
    assert ref() is snap
    del snap
    gc.collect()
    assert ref() is None


def test_short_turns_last_while_any_holder_is_inside() -> None:
    before = sys.getswitchinterval()
    turns = ShortTurns(0.001)
    with turns:
        assert sys.getswitchinterval() == pytest.approx(0.001)
        with turns:
            pass
        assert sys.getswitchinterval() == pytest.approx(0.001)  # the outer holder is inside
    assert sys.getswitchinterval() == before


def test_a_large_unary_request_is_worked_in_short_turns_and_a_small_one_is_not() -> None:
    before = sys.getswitchinterval()
    seen: list[float] = []

    async def handler(
        request: pb.UpdateSnapshotRequest, context: object,
    ) -> pb.UpdateSnapshotResponse:
        seen.append(sys.getswitchinterval())
        return pb.UpdateSnapshotResponse(nodes=len(request.upsert_nodes))

    plain = grpc.unary_unary_rpc_method_handler(
        handler, pb.UpdateSnapshotRequest.FromString,
        pb.UpdateSnapshotResponse.SerializeToString,
    )
    guard = MalformedRequestInterceptor(inline_bytes=1000, turns=ShortTurns(0.001))

    async def call(request: pb.UpdateSnapshotRequest) -> int:
        async def continuation(_: object) -> grpc.RpcMethodHandler:
            return plain
        wrapped = await guard.intercept_service(continuation, None)
        assert wrapped is not None
        decoded = wrapped.request_deserializer(request.SerializeToString())
        resp = await wrapped.unary_unary(decoded, None)
        return int(resp.nodes)

    large = pb.UpdateSnapshotRequest(upsert_nodes=[pb.Node(name=f"n{i}") for i in range(200)])
    assert large.ByteSize() > 1000
    assert asyncio.run(call(large)) == 200
    assert asyncio.run(call(pb.UpdateSnapshotRequest(upsert_nodes=[pb.Node(name="n")]))) == 1
    assert seen == [pytest.approx(0.001), before]
    assert sys.getswitchinterval() == before
