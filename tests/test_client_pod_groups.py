"""SchedClient and gang scheduling: PodGroups and Workloads pushed, removed and part of the
state a replay after a restart sends back; a Schedule's pod_groups handed to the caller; and
the client pairing placements with its pods by position while the server gathers groups."""

from __future__ import annotations

from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.client import SchedClient
from tests.builders import pb_node, pb_pod
from tests.builders.pod_groups import gang_config, pb_gang, pb_template, pb_workload
from tests.support import Servers


def test_pod_groups_and_workloads_are_part_of_the_replayed_state(servers: Servers) -> None:
    server, _, _ = servers.start()
    with SchedClient(f"127.0.0.1:{server.port}", cluster="c1") as c:
        c.update_snapshot(upsert_nodes=[pb_node("n0")], upsert_pod_groups=[pb_gang("g", 2)],
                          upsert_workloads=[pb_workload("w", pb_template("t", 2))])
        server.engine.cluster("c1").update(SnapshotUpdate(replace=True))  # a restart
        c._epoch = "an-older-server"
        c.update_snapshot(upsert_nodes=[pb_node("n1")])
        assert c.resyncs == 1
        snap = server.engine.cluster("c1").snapshot
        assert (list(snap.pod_groups), list(snap.workloads)) == (["default/g"], ["default/w"])
        c.update_snapshot(remove_pod_groups=["default/g"], remove_workloads=["default/w"])
        assert not snap.pod_groups and not snap.workloads
        c.resync()  # nothing of them comes back
        snap = server.engine.cluster("c1").snapshot
        assert not snap.pod_groups and not snap.workloads


def test_an_unknown_list_is_a_type_error() -> None:
    c = SchedClient("127.0.0.1:1")
    try:
        c.update_snapshot(upsert_pod_group=[pb_gang("g", 1)])
    except TypeError as exc:
        assert "unknown object lists ['upsert_pod_group']" in str(exc)
    else:
        raise AssertionError("no TypeError")
    finally:
        c.close()


def test_members_gathered_by_the_server_come_back_paired_with_their_pods(
    servers: Servers,
) -> None:
    """With GenericWorkload on the server schedules x's members together; the answer is in
    the request's order all the same, so each placement is its own pod's."""
    server, _, _ = servers.start(config=gang_config())
    members = [pb_pod(f"x{i}", scheduling_group=pb.PodSchedulingGroup(pod_group_name="x"))
               for i in range(2)]
    pods = [members[0], pb_pod("a"), members[1]]
    with SchedClient(f"127.0.0.1:{server.port}") as c:
        c.update_snapshot(upsert_nodes=[pb_node("n0")], upsert_pod_groups=[pb_gang("x", 2)])
        groups: list[pb.PodGroupResult] = []
        placed = c.schedule(pods, pod_groups=groups)
        assert [p.pod_uid for p in placed] == ["x0", "a", "x1"]
        assert all(p.outcome != pb.Placement.OUTCOME_UNSPECIFIED for p in placed)
        # one result per group whose cycle answered (none if the engine ran no group cycle)
        assert [g.pod_group for g in groups] in ([], ["default/x"])


def test_a_group_sent_again_after_a_deadline_gets_its_later_answer() -> None:
    """The first answer reached only `a`: x's members came back not attempted, x's result
    OUTCOME_UNSPECIFIED; the client sends them again and keeps the second answer's result."""
    x = [pb_pod(f"x{i}", scheduling_group=pb.PodSchedulingGroup(pod_group_name="x"))
         for i in range(2)]
    answers = [
        pb.ScheduleResponse(epoch="e", generation=1, placements=[
            pb.Placement(pod_uid="a", node_name="n0", outcome=pb.Placement.SCHEDULED),
            pb.Placement(pod_uid="x0", pod_group="default/x"),
            pb.Placement(pod_uid="x1", pod_group="default/x"),
        ], pod_groups=[pb.PodGroupResult(pod_group="default/x", message="not attempted")]),
        pb.ScheduleResponse(epoch="e", generation=2, placements=[
            pb.Placement(pod_uid=f"x{i}", node_name="n0", outcome=pb.Placement.SCHEDULED,
                         pod_group="default/x") for i in range(2)
        ], pod_groups=[pb.PodGroupResult(pod_group="default/x", min_count=2, scheduled=2,
                                         outcome=pb.PodGroupResult.SCHEDULED)]),
    ]
    sent: list[list[str]] = []

    def schedule(req: pb.ScheduleRequest, **_: object) -> pb.ScheduleResponse:
        sent.append([p.uid for p in req.pods])
        return answers[len(sent) - 1]

    c = SchedClient("127.0.0.1:1")
    try:
        c._stub.Schedule = schedule
        groups: list[pb.PodGroupResult] = []
        placed = c.schedule([pb_pod("a"), *x], pod_groups=groups)
    finally:
        c.close()
    assert sent == [["a", "x0", "x1"], ["x0", "x1"]]
    assert [p.outcome for p in placed] == [pb.Placement.SCHEDULED] * 3
    assert [(g.pod_group, g.outcome, g.scheduled) for g in groups] == [
        ("default/x", pb.PodGroupResult.SCHEDULED, 2)]
