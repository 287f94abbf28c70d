"""A Schedule response with pod groups (server/schedule_call.py, convert_results.py), from
placements an engine would make (set by hand here: no scheduling runs, so only the server's
part is under test). With GenericWorkload on, a group's members are gathered at its first
member's place, yet the placements answer in the request's order; ScheduleResponse.pod_groups
holds one PodGroupResult per group, in the order of its first member, converted field by
field; a group past the deadline is answered whole, OUTCOME_UNSPECIFIED."""

from __future__ import annotations

from schedsvc.config import default_config
from schedsvc.engine.pod_group_result import GroupOutcome, PodGroupResult
from schedsvc.engine.preemption import Victim
from schedsvc.engine.schedule_one import Placement
from schedsvc.engine.scheduler import Engine
from schedsvc.model import Outcome
from schedsvc.model_pod_group import PodGroupCondition
from schedsvc.server.request_handler import RequestHandler
from schedsvc.server.schedule_call import NOT_ATTEMPTED, ScheduleCall
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_pod
from tests.builders.pod_groups import gang_config


class _Caller:
    def time_remaining(self) -> None:
        return None

    def is_active(self) -> bool:
        return True


def _member(uid: str, group: str) -> pb.Pod:
    return pb_pod(uid, scheduling_group=pb.PodSchedulingGroup(pod_group_name=group))


# a, then x's first member, b, y's only member, x's second member
REQUEST = pb.ScheduleRequest(pods=[
    pb_pod("a"), _member("x1", "x"), pb_pod("b"), _member("y1", "y"), _member("x2", "x"),
])

X = PodGroupResult(
    pod_group="default/x", outcome=GroupOutcome.WAITING_ON_PREEMPTION,
    condition=PodGroupCondition("PodGroupInitiallyScheduled", "False", "Unschedulable",
                                "waiting", 3),
    min_count=2, already_scheduled=0, scheduled=0, evaluated=2,
    victims=(Victim("v1", "default", "low-1", -5), Victim("v2", "ns", "low-2", 0)),
    message="pod group preemption: found a placement for podgroup, preempting 2 victims",
)


def _call(grouped: bool) -> ScheduleCall:
    engine = Engine(gang_config() if grouped else default_config(), seed=1)
    handler = RequestHandler(engine)
    assert handler.grouped is grouped
    call = ScheduleCall(handler, REQUEST, _Caller())
    call.close()
    return call


def test_members_are_gathered_at_their_first_member_when_the_gate_is_on() -> None:
    assert [p.uid for p in _call(True).pods] == ["a", "x1", "x2", "b", "y1"]
    assert [p.uid for p in _call(False).pods] == ["a", "x1", "b", "y1", "x2"]


def test_the_answer_keeps_the_request_order_and_has_one_result_per_group() -> None:
    call = _call(True)
    # the engine answered a, then x's cycle (both members sharing its one result); the
    # deadline came before b and y
    call.placements = [
        Placement("a", "n1", Outcome.SCHEDULED),
        Placement("x1", "", Outcome.UNSCHEDULABLE, message="m1", nominated_node_name="n2",
                  pod_group="default/x", group=X),
        Placement("x2", "", Outcome.UNSCHEDULABLE, message="m2", nominated_node_name="n3",
                  pod_group="default/x", group=X),
    ]
    resp = call.response()
    assert resp is not None
    assert [(p.pod_uid, p.pod_group, p.message) for p in resp.placements] == [
        ("a", "", ""), ("x1", "default/x", "m1"), ("b", "", NOT_ATTEMPTED),
        ("y1", "default/y", NOT_ATTEMPTED), ("x2", "default/x", "m2"),
    ]
    assert [p.outcome for p in resp.placements] == [
        pb.Placement.SCHEDULED, pb.Placement.UNSCHEDULABLE, pb.Placement.OUTCOME_UNSPECIFIED,
        pb.Placement.OUTCOME_UNSPECIFIED, pb.Placement.UNSCHEDULABLE,
    ]
    assert list(resp.pod_groups) == [
        pb.PodGroupResult(
            pod_group="default/x", outcome=pb.PodGroupResult.WAITING_ON_PREEMPTION,
            condition=pb.PodGroupCondition(
                type="PodGroupInitiallyScheduled", status="False", reason="Unschedulable",
                message="waiting", observed_generation=3),
            min_count=2, already_scheduled=0, scheduled=0, evaluated=2,
            victims=[pb.Victim(uid="v1", namespace="default", name="low-1", priority=-5),
                     pb.Victim(uid="v2", namespace="ns", name="low-2", priority=0)],
            message="pod group preemption: found a placement for podgroup, preempting 2 "
                    "victims",
        ),
        pb.PodGroupResult(pod_group="default/y", message=NOT_ATTEMPTED),
    ]


def test_a_group_kube_writes_no_condition_for_has_none() -> None:
    call = _call(True)
    gated = PodGroupResult(
        pod_group="default/y", outcome=GroupOutcome.GATED, min_count=3,
        message="waiting for minCount pods from a gang to appear in scheduling queue",
    )
    scheduled = PodGroupResult(
        pod_group="default/x", outcome=GroupOutcome.SCHEDULED,
        condition=PodGroupCondition("PodGroupInitiallyScheduled", "True", "Scheduled"),
        min_count=2, scheduled=2, evaluated=2,
    )
    call.placements = [
        Placement("a", "n1", Outcome.SCHEDULED),
        Placement("x1", "n1", Outcome.SCHEDULED, pod_group="default/x", group=scheduled),
        Placement("x2", "n2", Outcome.SCHEDULED, pod_group="default/x", group=scheduled),
        Placement("b", "n1", Outcome.SCHEDULED),
        Placement("y1", "", Outcome.UNSCHEDULABLE, pod_group="default/y", group=gated),
    ]
    resp = call.response()
    assert resp is not None
    assert [(g.pod_group, g.outcome, g.HasField("condition")) for g in resp.pod_groups] == [
        ("default/x", pb.PodGroupResult.SCHEDULED, True),
        ("default/y", pb.PodGroupResult.GATED, False),
    ]
    assert resp.pod_groups[0].scheduled == 2 and resp.pod_groups[1].min_count == 3
    assert [p.pod_uid for p in resp.placements] == ["a", "x1", "b", "y1", "x2"]
    assert [p.node_name for p in resp.placements] == ["n1", "n1", "n1", "", "n2"]


def test_with_the_gate_off_a_group_is_carried_but_answered_as_plain_pods() -> None:
    call = _call(False)
    call.placements = [Placement("a", "n1", Outcome.SCHEDULED)]
    resp = call.response()
    assert resp is not None
    assert [p.pod_uid for p in resp.placements] == ["a", "x1", "b", "y1", "x2"]
    assert all(p.pod_group == "" for p in resp.placements) and not resp.pod_groups
    assert [p.pod_group for p in call.pods] == ["", "x", "", "y", "x"]
