"""Reliability through gRPC: idempotent retries, resync preconditions, deadlines and
cancellation between pods, per-cluster admission, request limits, cluster isolation.

Each guarantee in docs/guarantees.md names the test here that backs it. Nothing waits on a fixed
sleep: tests hold a cluster's lock to freeze it and poll the server's own counters with deadlines.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from schedsvc.errors import Cancelled, DeadlineExceeded
from schedsvc.server.limits import Limits
from schedsvc.server.schedule_call import NOT_ATTEMPTED
from schedsvc.server.status import status_for
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node, pb_pod
from tests.support import WAIT, Servers, load, snapshot_pods, wait_until


# ---- idempotency ------------------------------------------------------------------------------
def test_retried_schedule_returns_same_placements_and_never_assumes_twice(
    servers: Servers,
) -> None:
    server, stub, _ = servers.start()
    load(stub, 3, cpu="1")
    pods = [pb_pod(f"p{i}", cpu="400m") for i in range(3)]
    first = stub.Schedule(pb.ScheduleRequest(pods=pods), timeout=WAIT)
    assert [p.outcome for p in first.placements] == [pb.Placement.SCHEDULED] * 3
    again = stub.Schedule(pb.ScheduleRequest(pods=pods), timeout=WAIT)
    assert [p.node_name for p in again.placements] == [p.node_name for p in first.placements]
    assert {p.message for p in again.placements} == {"already placed"}
    # a retry that also carries a new pod places only the new one
    mixed = stub.Schedule(pb.ScheduleRequest(pods=[*pods, pb_pod("p3", cpu="400m")]))
    assert [p.message for p in mixed.placements[:3]] == ["already placed"] * 3
    assert mixed.placements[3].outcome == pb.Placement.SCHEDULED
    assert mixed.placements[3].message == ""
    # counts: the server holds 4 pods, not 7
    assert stub.UpdateSnapshot(pb.UpdateSnapshotRequest()).pods == 4
    # usage: every node has room for exactly what 1 cpu minus its placed pods leave
    used: dict[str, int] = {}
    for p in mixed.placements:
        used[p.node_name] = used.get(p.node_name, 0) + 400
    fullest = max(used.values())
    probe = pb_pod("probe", cpu=f"{1000 - fullest}m")
    verdicts = stub.Explain(pb.ExplainRequest(pod=probe), timeout=WAIT).nodes
    assert all(v.feasible for v in verdicts), [(v.name, v.reasons) for v in verdicts]
    too_big = pb_pod("probe2", cpu=f"{1000 - fullest + 1}m")
    fullest_nodes = {n for n, u in used.items() if u == fullest}
    verdicts = stub.Explain(pb.ExplainRequest(pod=too_big), timeout=WAIT).nodes
    assert {v.name for v in verdicts if not v.feasible} == fullest_nodes
    c = server.engine.cluster("default")
    for name, u in used.items():
        assert int(c.snapshot.requested[c.snapshot.index[name], 0]) == u


def test_dry_run_assumes_nothing_even_when_retried(servers: Servers) -> None:
    server, stub, _ = servers.start()
    load(stub, 2)
    pods = [pb_pod("a"), pb_pod("b")]
    for _ in range(2):
        out = stub.Schedule(pb.ScheduleRequest(pods=pods, dry_run=True), timeout=WAIT)
        assert [p.outcome for p in out.placements] == [pb.Placement.SCHEDULED] * 2
    assert snapshot_pods(server) == {}


# ---- resync preconditions -----------------------------------------------------------------------
def test_stale_epoch_or_generation_is_failed_precondition_and_changes_nothing(
    servers: Servers,
) -> None:
    old, old_stub, _ = servers.start()
    new, stub, _ = servers.start()  # a second engine: what a restarted server looks like
    gen = load(stub, 2)
    old_epoch = old_stub.UpdateSnapshot(pb.UpdateSnapshotRequest()).epoch
    epoch = stub.UpdateSnapshot(pb.UpdateSnapshotRequest()).epoch
    assert old_epoch != epoch and old.engine.epoch != new.engine.epoch
    bad = [
        pb.UpdateSnapshotRequest(expected_epoch=old_epoch, upsert_nodes=[pb_node("x")]),
        pb.UpdateSnapshotRequest(expected_generation=gen + 7, upsert_nodes=[pb_node("x")]),
    ]
    for req in bad:
        with pytest.raises(grpc.RpcError) as err:
            stub.UpdateSnapshot(req, timeout=WAIT)
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "resync" in err.value.details()
    resp = stub.UpdateSnapshot(
        pb.UpdateSnapshotRequest(expected_epoch=epoch, expected_generation=gen), timeout=WAIT
    )
    assert resp.nodes == 2 and resp.epoch == epoch
    # Schedule answers carry the epoch too: that is how a client notices a restart
    out = stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("p")]), timeout=WAIT)
    assert out.epoch == epoch


# ---- deadlines and cancellation ------------------------------------------------------------------
class FakeClock:
    """The request handler's clock, one second later each time it is read (once per pod)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


class FakeCaller:
    """A caller with a deadline `remaining` seconds away when the batch starts (read on a
    FakeClock) that leaves after `active_after` liveness checks."""

    def __init__(self, remaining: float, active_after: int | None = None) -> None:
        self.remaining = remaining
        self.checks = 0
        self.active_after = active_after

    def is_active(self) -> bool:
        self.checks += 1
        return self.active_after is None or self.checks <= self.active_after

    def time_remaining(self) -> float:
        return self.remaining


def test_deadline_near_mid_batch_returns_attempted_pods_and_marks_the_rest(
    servers: Servers,
) -> None:
    server, stub, _ = servers.start()
    load(stub, 4)
    pods = [pb_pod(f"p{i}") for i in range(6)]
    server.handler.clock = FakeClock()
    caller = FakeCaller(2.5)  # two pods, then the deadline is within the margin
    resp = server.handler.schedule(pb.ScheduleRequest(pods=pods), caller)
    server.handler.clock = time.monotonic
    assert [p.outcome for p in resp.placements] == [pb.Placement.SCHEDULED] * 2 + [
        pb.Placement.OUTCOME_UNSPECIFIED
    ] * 4
    assert [p.message for p in resp.placements[2:]] == [NOT_ATTEMPTED] * 4
    assert [p.pod_uid for p in resp.placements] == [p.uid for p in pods]
    assert set(snapshot_pods(server)) == {"p0", "p1"}
    retry = stub.Schedule(pb.ScheduleRequest(pods=pods), timeout=WAIT)
    assert [p.message for p in retry.placements[:2]] == ["already placed"] * 2
    assert all(p.outcome == pb.Placement.SCHEDULED for p in retry.placements)
    assert set(snapshot_pods(server)) == {p.uid for p in pods}


def test_caller_gone_mid_batch_stops_between_pods_and_keeps_what_was_placed(
    servers: Servers,
) -> None:
    server, stub, _ = servers.start()
    load(stub, 4)
    pods = [pb_pod(f"p{i}") for i in range(6)]
    server.handler.clock = FakeClock()
    caller = FakeCaller(60.0, active_after=3)  # the client leaves after three pods
    with pytest.raises(Cancelled) as gone:
        server.handler.schedule(pb.ScheduleRequest(pods=pods), caller)
    assert status_for(gone.value).code == grpc.StatusCode.CANCELLED
    assert set(snapshot_pods(server)) == {"p0", "p1", "p2"}
    caller = FakeCaller(0.0)  # the deadline passed before the first pod
    with pytest.raises(DeadlineExceeded) as late:
        server.handler.schedule(pb.ScheduleRequest(pods=[pb_pod("late")]), caller)
    assert status_for(late.value).code == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "late" not in snapshot_pods(server)


def test_queued_request_past_its_deadline_does_no_work(servers: Servers) -> None:
    """Through a real channel: the request waits behind the cluster lock until its caller's
    deadline has passed, and then schedules nothing."""
    server, stub, _ = servers.start()
    load(stub, 4)
    cluster = server.engine.cluster("default")
    with cluster.lock:
        fut = stub.Schedule.future(
            pb.ScheduleRequest(pods=[pb_pod(f"p{i}") for i in range(5)]), timeout=0.5
        )
        wait_until(lambda: server.handler.admission.in_flight("default") == 1, what="queued")
        wait_until(fut.done, what="the client's deadline")
    with pytest.raises(grpc.RpcError) as err:
        fut.result()
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    wait_until(lambda: server.handler.admission.in_flight("default") == 0, what="drained")
    assert snapshot_pods(server) == {}


def test_cancelled_request_places_at_most_a_prefix(servers: Servers) -> None:
    """The cancel reaches the server asynchronously, so some pods may be placed before it
    notices; whatever was placed is a prefix of the batch and a retry completes it once."""
    server, stub, _ = servers.start()
    load(stub, 4, cpu="8")
    pods = [pb_pod(f"p{i}") for i in range(50)]
    with server.engine.cluster("default").lock:
        fut = stub.Schedule.future(pb.ScheduleRequest(pods=pods), timeout=WAIT)
        wait_until(lambda: server.handler.admission.in_flight("default") == 1, what="queued")
        fut.cancel()
    assert fut.cancelled()
    wait_until(lambda: server.handler.admission.in_flight("default") == 0, what="drained")
    placed = snapshot_pods(server)
    assert set(placed) == {p.uid for p in pods[: len(placed)]}
    retry = stub.Schedule(pb.ScheduleRequest(pods=pods), timeout=WAIT)
    assert sum(p.message == "already placed" for p in retry.placements) == len(placed)
    assert len(snapshot_pods(server)) == len(pods)


def test_short_deadline_on_a_big_batch_places_a_prefix_and_a_retry_completes_it(
    servers: Servers,
) -> None:
    server, stub, _ = servers.start()
    load(stub, 200, cpu="8")
    pods = [pb_pod(f"p{i:04d}", cpu="10m") for i in range(1500)]
    try:
        resp = stub.Schedule(pb.ScheduleRequest(pods=pods), timeout=0.2)
        done = [p.outcome != pb.Placement.OUTCOME_UNSPECIFIED for p in resp.placements]
        k = done.index(False) if False in done else len(done)
        assert all(done[:k]) and not any(done[k:])  # attempted pods form a prefix
        assert all(p.message == NOT_ATTEMPTED for p in resp.placements[k:])
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    wait_until(lambda: server.handler.admission.in_flight("default") == 0, what="drained")
    placed = snapshot_pods(server)
    uids = [p.uid for p in pods]
    assert set(placed) == set(uids[: len(placed)])  # a prefix of the batch, nothing else
    retry = stub.Schedule(pb.ScheduleRequest(pods=pods), timeout=WAIT * 2)
    assert all(p.outcome == pb.Placement.SCHEDULED for p in retry.placements)
    assert sum(p.message == "already placed" for p in retry.placements) == len(placed)
    assert len(snapshot_pods(server)) == len(pods)
    assert stub.UpdateSnapshot(pb.UpdateSnapshotRequest()).pods == len(pods)


# ---- overload ---------------------------------------------------------------------------------
def test_queue_per_cluster_is_bounded_with_retry_info_and_other_clusters_unaffected(
    servers: Servers,
) -> None:
    server, stub, _ = servers.start(limits=Limits(max_queue_per_cluster=2))
    load(stub, 2)
    load(stub, 2, cluster="other")
    cluster = server.engine.cluster("default")
    with cluster.lock:
        held = [
            stub.Schedule.future(pb.ScheduleRequest(pods=[pb_pod(f"q{i}")]), timeout=WAIT)
            for i in range(2)
        ]
        wait_until(lambda: server.handler.admission.in_flight("default") == 2, what="queued")
        with pytest.raises(grpc.RpcError) as err:
            stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("x")]), timeout=WAIT)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        status = rpc_status.from_call(err.value)
        assert status is not None
        infos = [d for d in status.details if d.Is(error_details_pb2.RetryInfo.DESCRIPTOR)]
        assert len(infos) == 1
        info = error_details_pb2.RetryInfo()
        infos[0].Unpack(info)
        assert info.retry_delay.ToMilliseconds() > 0
        # another cluster is served while this one is saturated and frozen
        other = stub.Schedule(pb.ScheduleRequest(cluster="other", pods=[pb_pod("o")]),
                              timeout=WAIT)
        assert other.placements[0].outcome == pb.Placement.SCHEDULED
    assert [f.result().placements[0].outcome for f in held] == [pb.Placement.SCHEDULED] * 2
    assert server.handler.admission.in_flight("default") == 0
    assert set(snapshot_pods(server)) == {"q0", "q1"}  # the refused pod was never assumed


def test_request_limits_refuse_oversized_requests_before_any_work(servers: Servers) -> None:
    server, stub, _ = servers.start(
        limits=Limits(max_pods_per_request=3, max_nodes_per_update=3, max_pods_per_update=3),
        max_message_bytes=64 * 1024,
    )
    load(stub, 3)
    cases: list[tuple[Callable[..., Any], Any, grpc.StatusCode]] = [
        (stub.Schedule, pb.ScheduleRequest(pods=[pb_pod(f"p{i}") for i in range(4)]),
         grpc.StatusCode.INVALID_ARGUMENT),
        (stub.UpdateSnapshot, pb.UpdateSnapshotRequest(
            upsert_nodes=[pb_node(f"m{i}") for i in range(4)]), grpc.StatusCode.INVALID_ARGUMENT),
        (stub.UpdateSnapshot, pb.UpdateSnapshotRequest(
            upsert_pods=[pb_pod(f"b{i}", node_name="n0") for i in range(4)]),
         grpc.StatusCode.INVALID_ARGUMENT),
        (stub.Schedule, pb.ScheduleRequest(pods=[pb.Pod(uid="big", name="x" * 100_000)]),
         grpc.StatusCode.RESOURCE_EXHAUSTED),
    ]
    for method, req, code in cases:
        with pytest.raises(grpc.RpcError) as err:
            method(req, timeout=WAIT)
        assert err.value.code() == code
    resp = stub.UpdateSnapshot(pb.UpdateSnapshotRequest(), timeout=WAIT)
    assert (resp.nodes, resp.pods) == (3, 0)
    assert snapshot_pods(server) == {}


# ---- concurrency --------------------------------------------------------------------------------
def test_clusters_run_in_parallel_and_one_cluster_serializes(servers: Servers) -> None:
    server, stub, _ = servers.start(max_workers=16)
    for name in ("a", "b"):
        load(stub, 8, cluster=name, cpu="2")
    # a frozen cluster does not hold up another one
    with server.engine.cluster("a").lock:
        out = stub.Schedule(pb.ScheduleRequest(cluster="b", pods=[pb_pod("free")]), timeout=WAIT)
        assert out.placements[0].outcome == pb.Placement.SCHEDULED

    # many callers on one cluster: cycles are unique and usage adds up exactly
    def call(i: int) -> list[pb.Placement]:
        pods = [pb_pod(f"c{i}-{j}", cpu="100m") for j in range(5)]
        return list(stub.Schedule(pb.ScheduleRequest(cluster="a", pods=pods),
                                  timeout=WAIT).placements)

    with ThreadPoolExecutor(8) as pool:
        results = [p for ps in pool.map(call, range(8)) for p in ps]
    assert all(p.outcome == pb.Placement.SCHEDULED for p in results)
    cycles = [p.cycle for p in results]
    assert len(set(cycles)) == len(cycles) == 40
    c = server.engine.cluster("a")
    assert int(c.snapshot.requested[:, 0].sum()) == 40 * 100
    assert len(snapshot_pods(server, "a")) == 40


def test_stream_cancelled_mid_batch_keeps_placed_pods_and_server_stays_serving(
    servers: Servers,
) -> None:
    server, stub, channel = servers.start()
    load(stub, 4)
    gate = threading.Event()

    def requests() -> Iterator[pb.ScheduleRequest]:
        yield pb.ScheduleRequest(pods=[pb_pod("s0"), pb_pod("s1")])
        gate.wait(WAIT)  # the client stalls, then goes away

    call = stub.ScheduleStream(requests(), timeout=WAIT)
    first = next(call)
    assert [p.outcome for p in first.placements] == [pb.Placement.SCHEDULED] * 2
    call.cancel()
    gate.set()
    assert set(snapshot_pods(server)) == {"s0", "s1"}
    again = stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("s0"), pb_pod("s2")]), timeout=WAIT)
    assert again.placements[0].message == "already placed"
    assert set(snapshot_pods(server)) == {"s0", "s1", "s2"}
