"""A staged replace is one step as every other call sees it (issue 30, defect 1).

A client replaying after a server restart sends nodes before their pods. A Schedule that lands
between the chunks must not be placed against nodes without their pods, and a placement made
on a state that a replace superseded must not be trusted by the client.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.client import RetryPolicy, SchedClient
from tests.builders import pb_node, pb_pod
from tests.support import WAIT, Servers, snapshot_pods

FULL = [pb_pod(f"b{i}", cpu="1", node_name=f"n{i}") for i in range(2)]  # fills both 1-cpu nodes


def _code(fn: Callable[[], Any]) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as err:
        fn()
    return err.value.code()  # type: ignore[no-any-return]


def _begin(stub: Any, cluster: str = "c", **fields: Any) -> pb.UpdateSnapshotResponse:
    return stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster=cluster, replace=True, stage=True, **fields))


def test_chunks_are_invisible_until_commit_and_schedule_is_refused_meanwhile(
    servers: Servers,
) -> None:
    server, stub, _ = servers.start()
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster="c", upsert_nodes=[pb_node("old")]))
    gen = stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster="c")).generation
    first = _begin(stub, upsert_nodes=[pb_node("n0"), pb_node("n1")])
    assert first.staged_replace and first.generation == gen
    assert (first.nodes, first.pods) == (2, 0)  # of the staged state
    live = server.engine.cluster("c").snapshot
    assert list(live.index) == ["old"]  # the live state is untouched
    # between the chunks: nothing is placed, and nothing is explained from a half state
    pod = pb_pod("x", cpu="1")
    for dry in (False, True):
        code = _code(lambda d=dry: stub.Schedule(pb.ScheduleRequest(
            cluster="c", pods=[pod], dry_run=d)))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert _code(lambda: stub.Explain(pb.ExplainRequest(cluster="c", pod=pod))) == (
        grpc.StatusCode.FAILED_PRECONDITION)
    assert snapshot_pods(server, "c") == {}
    last = stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster="c", stage=True, staged_replace=first.staged_replace, commit=True,
        upsert_pods=FULL, expected_epoch=first.epoch))
    assert last.staged_replace == "" and last.generation == gen + 1
    assert (last.nodes, last.pods) == (2, 2)
    assert sorted(server.engine.cluster("c").snapshot.index) == ["n0", "n1"]
    out = stub.Schedule(pb.ScheduleRequest(cluster="c", pods=[pod])).placements[0]
    assert out.outcome == pb.Placement.UNSCHEDULABLE  # the nodes came with their pods


def test_a_rejected_chunk_changes_nothing_staged_or_live(servers: Servers) -> None:
    server, stub, _ = servers.start()
    first = _begin(stub, upsert_nodes=[pb_node("n0")])
    sid = first.staged_replace
    # a bad later chunk: a pod on a node the staged state does not hold
    bad = pb.UpdateSnapshotRequest(cluster="c", stage=True, staged_replace=sid,
                                   upsert_pods=[pb_pod("p", node_name="nope")])
    assert _code(lambda: stub.UpdateSnapshot(bad)) == grpc.StatusCode.INVALID_ARGUMENT
    # a bad first chunk of a newer staged replace does not supersede the open one
    bad_first = pb.UpdateSnapshotRequest(cluster="c", replace=True, stage=True,
                                         upsert_nodes=[pb_node("BAD NAME")])
    assert _code(lambda: stub.UpdateSnapshot(bad_first)) == grpc.StatusCode.INVALID_ARGUMENT
    done = stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster="c", stage=True, staged_replace=sid, commit=True,
        upsert_pods=[pb_pod("p", node_name="n0")]))
    assert (done.nodes, done.pods) == (1, 1)
    assert snapshot_pods(server, "c") == {"p": "n0"}


def test_a_superseded_or_idle_staged_replace_is_gone(servers: Servers) -> None:
    server, stub, _ = servers.start()
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster="c", upsert_nodes=[pb_node("live")]))
    older = _begin(stub, upsert_nodes=[pb_node("a")]).staged_replace
    newer = _begin(stub, upsert_nodes=[pb_node("b")]).staged_replace
    late = pb.UpdateSnapshotRequest(cluster="c", stage=True, staged_replace=older, commit=True)
    assert _code(lambda: stub.UpdateSnapshot(late)) == grpc.StatusCode.FAILED_PRECONDITION
    # a client gone mid-replay blocks its cluster only until the staged state goes idle
    staged = server.engine.cluster("c").staged
    opened = staged.current()
    assert opened is not None
    now = [opened.touched]
    staged.clock = lambda: now[0]
    placed = stub.Schedule  # refused while it is open and not idle
    assert _code(lambda: placed(pb.ScheduleRequest(cluster="c", pods=[pb_pod("x")]))) == (
        grpc.StatusCode.FAILED_PRECONDITION)
    now[0] += staged.idle_seconds + 1
    out = stub.Schedule(pb.ScheduleRequest(cluster="c", pods=[pb_pod("x")])).placements[0]
    assert out.node_name == "live"  # the live state, as it was
    gone = pb.UpdateSnapshotRequest(cluster="c", stage=True, staged_replace=newer, commit=True)
    assert _code(lambda: stub.UpdateSnapshot(gone)) == grpc.StatusCode.FAILED_PRECONDITION


@pytest.mark.parametrize("fields, wrong", [
    ({"commit": True}, "commit"),
    ({"staged_replace": "x"}, "staged_replace"),
    ({"stage": True}, "staged_replace"),  # a later chunk without the id
    ({"stage": True, "replace": True, "staged_replace": "x"}, "staged_replace"),
])
def test_staging_fields_out_of_place_are_invalid_argument_naming_the_field(
    servers: Servers, fields: dict[str, Any], wrong: str,
) -> None:
    server, stub, _ = servers.start()
    with pytest.raises(grpc.RpcError) as err:
        stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster="c", **fields))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.value.details().startswith(wrong + ":")
    assert server.engine.find("c") is None  # nothing was created


def _restart(server: Any, cluster: str) -> None:
    """What a kill -9 and restart look like to a client: the cluster is gone, the epoch new."""
    server.engine.delete_cluster(cluster)
    server.engine.epoch = "restarted"


def _used_cpu(pods: dict[str, pb.Pod]) -> dict[str, int]:
    per: dict[str, int] = {}
    for p in pods.values():
        cpu = sum(int(c.requests["cpu"].rstrip("m")) * (1 if c.requests["cpu"].endswith("m")
                                                        else 1000) for c in p.containers)
        per[p.node_name] = per.get(p.node_name, 0) + cpu
    return per


def test_a_schedule_between_replay_chunks_is_never_placed_on_half_a_cluster(
    servers: Servers,
) -> None:
    """The probe's over-commit, made deterministic: another thread's Schedule reaches the
    restarted server right after the replay's first chunk (nodes, not their pods)."""
    server, _, _ = servers.start()
    client = SchedClient(f"127.0.0.1:{server.port}", cluster="c",
                         retry=RetryPolicy(replay_chunk=2, budget_seconds=WAIT))
    client.update_snapshot(upsert_nodes=[pb_node("n0"), pb_node("n1")])
    client.update_snapshot(upsert_pods=FULL)
    _restart(server, "c")
    answered = threading.Event()
    other: list[pb.Placement] = []
    real_update, real_schedule = client._stub.UpdateSnapshot, client._stub.Schedule

    def schedule_then_signal(req: Any, **kw: Any) -> Any:
        try:
            return real_schedule(req, **kw)
        finally:
            answered.set()

    def other_thread() -> None:
        other.extend(client.schedule([pb_pod("late", cpu="1")]))

    chunks: list[pb.UpdateSnapshotRequest] = []

    def update_with_a_schedule_after_the_first_chunk(req: Any, **kw: Any) -> Any:
        resp = real_update(req, **kw)
        chunks.append(req)
        if req.replace:  # the replay's first chunk: the nodes, not yet their pods
            threading.Thread(target=other_thread, daemon=True).start()
            assert answered.wait(WAIT), "the other thread's Schedule was never answered"
        return resp

    client._stub.Schedule = schedule_then_signal  # type: ignore[method-assign]
    client._stub.UpdateSnapshot = update_with_a_schedule_after_the_first_chunk  # type: ignore[method-assign]
    client.update_snapshot(upsert_namespaces=[pb.Namespace(name="after")])  # notices, replays
    assert client.resyncs == 1
    for _ in range(int(WAIT / 0.01)):
        if other:
            break
        threading.Event().wait(0.01)
    assert [p.outcome for p in other] == [pb.Placement.UNSCHEDULABLE]  # both nodes are full
    held = snapshot_pods(server, "c")
    assert held == {"b0": "n0", "b1": "n1"}
    assert all(v <= 1000 for v in _used_cpu(client.desired_pods()).values())
    assert len([c for c in chunks if c.stage]) >= 2  # the replay was staged


def test_a_placement_made_before_a_replay_committed_is_sent_again(servers: Servers) -> None:
    """A Schedule answered by the state a replay then replaces: its pods are not on the
    server any more, so the client must not keep them as placed."""
    server, _, _ = servers.start()
    client = SchedClient(f"127.0.0.1:{server.port}", cluster="c",
                         retry=RetryPolicy(budget_seconds=WAIT))
    client.update_snapshot(upsert_nodes=[pb_node("n0", cpu="2")])
    real_schedule = client._stub.Schedule
    answered, go_on = threading.Event(), threading.Event()

    def schedule_paused_after_the_answer(req: Any, **kw: Any) -> Any:
        resp = real_schedule(req, **kw)
        if not answered.is_set():
            answered.set()
            assert go_on.wait(WAIT)
        return resp

    client._stub.Schedule = schedule_paused_after_the_answer  # type: ignore[method-assign]
    out: list[pb.Placement] = []
    t = threading.Thread(target=lambda: out.extend(client.schedule([pb_pod("p", cpu="1")])))
    t.start()
    assert answered.wait(WAIT)
    client.resync()  # replaces the cluster with the state the client holds, without "p"
    go_on.set()
    t.join(WAIT)
    assert [p.outcome for p in out] == [pb.Placement.SCHEDULED]
    assert snapshot_pods(server, "c") == {"p": "n0"}  # placed again, on the replayed state
    assert set(client.desired_pods()) == {"p"}
