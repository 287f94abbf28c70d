"""Staged replace and the client's floor, attacked (review of issue 30, defect 1).

Each test is deterministic: interleavings are made by calling the server or the client in
order from one thread, never by racing threads.
"""

from __future__ import annotations

import grpc
import pytest

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.client import RetryPolicy, SchedClient
from tests.builders import pb_node, pb_pod
from tests.support import WAIT, Servers, snapshot_pods


def _abandoned_staged_replace(stub: object, cluster: str = "c") -> str:
    """What a client killed mid-replay leaves: a first chunk, and no commit."""
    resp = stub.UpdateSnapshot(pb.UpdateSnapshotRequest(  # type: ignore[attr-defined]
        cluster=cluster, replace=True, stage=True, upsert_nodes=[pb_node("half")]))
    assert resp.staged_replace
    return str(resp.staged_replace)


def test_a_plain_replace_supersedes_an_open_staged_replace(servers: Servers) -> None:
    """A replace is the whole cluster's next state, whether it took one message or many: one
    in a single message after a staged replace was opened must end that staged replace, as a
    newer staged one does. Otherwise the cluster stays refused (Schedule, Explain) behind a
    state that the replace already made obsolete, until --staged-replace-idle-seconds."""
    server, stub, _ = servers.start()
    sid = _abandoned_staged_replace(stub)
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster="c", replace=True, upsert_nodes=[pb_node("n0")]))
    out = stub.Schedule(pb.ScheduleRequest(cluster="c", pods=[pb_pod("p")]), timeout=WAIT)
    assert out.placements[0].node_name == "n0"
    assert stub.Explain(pb.ExplainRequest(cluster="c", pod=pb_pod("q"))).chosen_node == "n0"
    late = pb.UpdateSnapshotRequest(cluster="c", stage=True, staged_replace=sid, commit=True)
    with pytest.raises(grpc.RpcError) as err:  # the older staged replace cannot commit after it
        stub.UpdateSnapshot(late)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert snapshot_pods(server, "c") == {"p": "n0"}


def test_a_client_taking_over_after_a_client_died_mid_replay_can_schedule(
    servers: Servers,
) -> None:
    """The owner of a cluster dies mid-replay; its successor pushes its state (small: one
    message) and schedules. It must not get ResyncError for a minute: its own replace is
    newer than the dead client's staged one."""
    server, stub, _ = servers.start()
    _abandoned_staged_replace(stub)
    client = SchedClient(f"127.0.0.1:{server.port}", cluster="c",
                         retry=RetryPolicy(budget_seconds=WAIT, max_backoff=0.01))
    try:
        client.update_snapshot(replace=True, upsert_nodes=[pb_node("n0")])
        out = client.schedule([pb_pod("p")])
        assert out[0].node_name == "n0"
        assert client.explain(pb_pod("q")).chosen_node == "n0"
    finally:
        client.close()


def test_a_cluster_deleted_under_its_client_is_replayed_not_a_resync_error(
    servers: Servers,
) -> None:
    """DeleteCluster keeps the epoch, and a cluster created afresh starts its generations
    again from 0: every answer it gives is below the client's floor (the generation of its
    last replace), which the client took for "placed on a state since replaced" and re-sent
    without replaying, until ResyncError, while the server kept each placement. Generation
    going backwards within an epoch with no replace of ours since the request means the state
    is gone: replay it, as after a restart."""
    server, stub, _ = servers.start()
    client = SchedClient(f"127.0.0.1:{server.port}", cluster="c",
                         retry=RetryPolicy(budget_seconds=WAIT, max_backoff=0.01))
    try:
        client.update_snapshot(upsert_nodes=[pb_node("n0", cpu="4")])
        for i in range(5):
            client.update_snapshot(upsert_pods=[pb_pod(f"b{i}", node_name="n0")])
        client.resync()  # floor: this epoch, generation > 5
        stub.DeleteCluster(pb.DeleteClusterRequest(cluster="c"))  # an operator; same epoch
        out = client.schedule([pb_pod("p")])
        assert out[0].node_name == "n0"
        held = snapshot_pods(server, "c")
        assert held == {**{f"b{i}": "n0" for i in range(5)}, "p": "n0"}
        assert set(client.desired_pods()) == set(held)
    finally:
        client.close()


def test_an_idle_staged_replace_is_freed_by_the_next_update_of_its_cluster(
    servers: Servers,
) -> None:
    """An idle staged replace is dropped only when something asks for it: Schedule and
    Explain did, UpdateSnapshot did not, so a cluster fed patches but not scheduled on kept a
    dead client's half-built snapshot (a second copy of the cluster) forever."""
    server, stub, _ = servers.start()
    _abandoned_staged_replace(stub)
    staged = server.engine.cluster("c").staged
    opened = staged.current()
    assert opened is not None
    now = [opened.touched + staged.idle_seconds + 1]
    staged.clock = lambda: now[0]
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster="c", upsert_nodes=[pb_node("n0")]))
    assert staged.open is None
