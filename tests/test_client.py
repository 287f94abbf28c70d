"""The typed client: state it remembers, replay on a stale epoch, streaming, explain."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.client import ResyncError, RetryPolicy, SchedClient
from tests.builders import pb_node, pb_pod
from tests.support import Servers, snapshot_pods


def test_stale_epoch_patch_replays_the_whole_desired_state(servers: Servers) -> None:  # noqa: F811
    server, _, _ = servers.start()
    with SchedClient(f"127.0.0.1:{server.port}", cluster="c1") as c:
        c.update_snapshot(upsert_nodes=[pb_node("n0"), pb_node("n1")])
        placed = c.schedule([pb_pod("a"), pb_pod("b")])
        assert all(p.outcome == pb.Placement.SCHEDULED for p in placed)
        # what a restart looks like from here: the server forgot us and has another epoch
        server.engine.cluster("c1").update(SnapshotUpdate(replace=True))
        c._epoch = "an-older-server"
        resp = c.update_snapshot(upsert_nodes=[pb_node("n2")])
        assert c.resyncs == 1
        assert (resp.nodes, resp.pods) == (3, 2)
        assert snapshot_pods(server, "c1") == {p.pod_uid: p.node_name for p in placed}


def test_stream_and_explain(servers: Servers) -> None:  # noqa: F811
    server, _, _ = servers.start()
    with SchedClient(f"127.0.0.1:{server.port}") as c:
        c.update_snapshot(upsert_nodes=[pb_node("n0", cpu="1")])
        batches = [[pb_pod(f"s{i}-{j}", cpu="300m") for j in range(2)] for i in range(2)]
        out = list(c.schedule_stream(batches))
        assert [[p.outcome for p in b] for b in out] == [
            [pb.Placement.SCHEDULED] * 2, [pb.Placement.SCHEDULED, pb.Placement.UNSCHEDULABLE]]
        assert set(c.desired_pods()) == {"s0-0", "s0-1", "s1-0"}
        verdict = c.explain(pb_pod("probe", cpu="200m")).nodes[0]
        assert verdict.feasible is False and verdict.name == "n0"
        dry = c.schedule([pb_pod("d", cpu="100m")], dry_run=True)
        assert dry[0].node_name == "n0" and "d" not in c.desired_pods()


def test_budgets_are_part_of_the_replayed_state(servers: Servers) -> None:  # noqa: F811
    server, _, _ = servers.start()
    budget = pb.PodDisruptionBudget(
        name="b", namespace="default", disruptions_allowed=1,
        selector=pb.LabelSelector(match_labels={"app": "x"}),
    )
    with SchedClient(f"127.0.0.1:{server.port}", cluster="c1") as c:
        c.update_snapshot(upsert_nodes=[pb_node("n0")], upsert_pod_disruption_budgets=[budget])
        server.engine.cluster("c1").update(SnapshotUpdate(replace=True))  # a restart, as above
        c._epoch = "an-older-server"
        c.update_snapshot(upsert_nodes=[pb_node("n1")])
        assert c.resyncs == 1
        assert set(server.engine.cluster("c1").snapshot.pdbs) == {"default/b"}
        c.update_snapshot(remove_pod_disruption_budgets=["default/b"])
        assert not server.engine.cluster("c1").snapshot.pdbs


def _restart_after_replace(server: Any, client: SchedClient, times: int) -> list[int]:
    """Make the server 'restart' (new epoch, cluster forgotten) right after each of the next
    `times` replace=true chunks is answered: what a kill -9 between replay chunks looks like."""
    orig = client._stub.UpdateSnapshot
    restarts = [0]

    def flaky(req: pb.UpdateSnapshotRequest, **kw: Any) -> pb.UpdateSnapshotResponse:
        resp = orig(req, **kw)
        if req.replace and restarts[0] < times:
            restarts[0] += 1
            server.engine.epoch = uuid.uuid4().hex
            server.engine.delete_cluster(client.cluster)
        return resp

    client._stub.UpdateSnapshot = flaky
    return restarts


def _restarted(server: Any, client: SchedClient) -> None:
    server.engine.epoch = uuid.uuid4().hex
    server.engine.delete_cluster(client.cluster)


def test_restart_during_a_multi_chunk_replay_starts_the_replay_over(servers: Servers) -> None:
    """Issue #13 defect 6: a restart between replay chunks escaped as FAILED_PRECONDITION."""
    server, _, _ = servers.start()
    policy = RetryPolicy(replay_chunk=3, budget_seconds=30)
    with SchedClient(f"127.0.0.1:{server.port}", cluster="r", retry=policy) as c:
        c.update_snapshot(replace=True, upsert_nodes=[pb_node(f"n{i}") for i in range(10)])
        first = c.schedule([pb_pod(f"p{i}") for i in range(8)])
        assert all(p.outcome == pb.Placement.SCHEDULED for p in first)
        _restarted(server, c)
        restarts = _restart_after_replace(server, c, times=2)
        out = c.schedule([pb_pod(f"q{i}") for i in range(4)])
        assert restarts == [2]
        assert all(p.outcome == pb.Placement.SCHEDULED for p in out)
        # the server holds exactly what the client believes: 10 nodes, its 12 placed pods
        held = snapshot_pods(server, "r")
        assert held == {p.pod_uid: p.node_name for p in [*first, *out]}
        assert {uid: p.node_name for uid, p in c.desired_pods().items()} == held
        assert server.engine.cluster("r").snapshot.num_nodes == 10


def test_a_server_restarting_during_every_replay_raises_resync_error(servers: Servers) -> None:
    server, _, _ = servers.start()
    policy = RetryPolicy(replay_chunk=3, budget_seconds=30, max_resyncs=3)
    with SchedClient(f"127.0.0.1:{server.port}", cluster="r", retry=policy) as c:
        c.update_snapshot(replace=True, upsert_nodes=[pb_node(f"n{i}") for i in range(10)])
        _restarted(server, c)
        restarts = _restart_after_replace(server, c, times=1000)
        with pytest.raises(ResyncError):
            c.schedule([pb_pod("q")])
        # one first replay and max_resyncs replays started over, then it gave up
        assert restarts == [1 + policy.max_resyncs]
