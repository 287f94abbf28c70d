"""Before a pod group cycle runs: kube v1.37.2's TestValidatePodGroup,
TestSkipPodGroupPodSchedule, TestScheduleOnePodGroup_FinishesAttemptWhenAllPoppedPodsAreAssumed,
TestScheduleOnePodGroup_PodGroupNotFound and
TestScheduleOnePodGroup_SchedulerNameMismatchUpdatesStatus (schedule_one_podgroup_test.go).

TestValidatePodGroup's rows with CompositePodGroup and PodGroupPreemptionPolicy off (both are
refused here); kube's pods there have no schedulerName and its default profile map holds "",
so the rows' "" is our "default-scheduler".
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from schedsvc.engine.pod_group_result import GroupOutcome
from schedsvc.engine.pod_group_validate import validate_pod_group
from schedsvc.model import Outcome, Pod, PreemptionPolicy
from schedsvc.model_pod_group import PodGroup, PodGroupCondition
from tests.builders.domain import node
from tests.builders.group_cycles import (
    NO_PREEMPTION,
    basic,
    gang,
    gang_cluster,
    group_of,
    member,
    schedule_request,
    state_of,
)

DEFAULT = "default-scheduler"
NEVER, LOWER = PreemptionPolicy.NEVER, PreemptionPolicy.PREEMPT_LOWER_PRIORITY


def _p(name: str, sched: str = DEFAULT, prio: int = 0, policy: PreemptionPolicy = LOWER,
       node_name: str = "") -> Pod:
    return member(name, "pg", scheduler_name=sched, priority=prio, preemption_policy=policy,
                  node_name=node_name)


VALIDATE_CASES = [
    ("success for same scheduler name", PodGroup("pg"), [],
     [_p("p1", "sched1"), _p("p2", "sched1")], ["sched1"], False),
    ("failure for different scheduler names", PodGroup("pg"), [],
     [_p("p1", "sched1"), _p("p2", "sched2")], ["sched1", "sched2"], True),
    ("failure when profile not found", PodGroup("pg"), [],
     [_p("p1", "sched1"), _p("p2", "sched1")], ["other"], True),
    ("success when priorities match", PodGroup("pg", priority=10), [],
     [_p("p1", prio=10), _p("p2", prio=10)], [DEFAULT], False),
    ("failure when different priorities across pods", PodGroup("pg", priority=10), [],
     [_p("p1", prio=9), _p("p2", prio=10)], [DEFAULT], True),
    ("failure when different priorities across pods and pod group", PodGroup("pg", priority=9), [],
     [_p("p1", prio=10), _p("p2", prio=10)], [DEFAULT], True),
    ("success when new pods match scheduled pods scheduler name and priority",
     PodGroup("pg", priority=10), [_p("p2", "sched1", 10, node_name="node1")],
     [_p("p1", "sched1", 10)], ["sched1"], False),
    ("failure when new pod has different scheduler name than scheduled pod",
     PodGroup("pg", priority=10), [_p("p2", "sched2", 10, node_name="node1")],
     [_p("p1", "sched1", 10)], ["sched1"], True),
    ("failure when new pod has different priority than scheduled pod",
     PodGroup("pg", priority=10), [_p("p2", "sched1", 9, node_name="node1")],
     [_p("p1", "sched1", 10)], ["sched1"], True),
    ("success when preemption policies between pods and podgroup do not match but "
     "PodGroupPreemptionPolicy is disabled", PodGroup("pg", preemption_policy=NEVER), [],
     [_p("p1"), _p("p2")], [DEFAULT], False),
    ("failure when preemption policies do not match across pods and PodGroupPreemptionPolicy "
     "is disabled", PodGroup("pg", preemption_policy=NEVER), [],
     [_p("p1", policy=LOWER), _p("p2", policy=NEVER)], [DEFAULT], True),
]


@pytest.mark.parametrize(
    ("pg", "scheduled", "pods", "profiles", "want_error"),
    [pytest.param(*row[1:], id=row[0]) for row in VALIDATE_CASES],
)
def test_validate_pod_group(
    pg: PodGroup, scheduled: list[Pod], pods: list[Pod], profiles: list[str], want_error: bool
) -> None:
    assert bool(validate_pod_group(pg, pods, scheduled, profiles)) is want_error


def test_validate_pod_group_failure_when_no_pods_to_evaluate() -> None:
    """kube's validatePodGroup with no pods keeps schedulerName "" (no request reaches this:
    the engine validates only groups with pending members)."""
    assert validate_pod_group(PodGroup("pg"), [], [], ["sched1"]) == (
        'profile not found for scheduler name ""'
    )


def test_validate_messages_are_kubes() -> None:
    """validatePodGroup's fmt.Errorf texts: the offending pod's value first."""
    assert validate_pod_group(PodGroup("pg"), [_p("p1", "sched1"), _p("p2", "sched2")], [],
                              ["sched1", "sched2"]) == (
        "all pods in a single pod group should have the same .spec.schedulerName set, "
        'got: "sched2" and "sched1"')
    assert validate_pod_group(PodGroup("pg", priority=9), [_p("p1", prio=10)], [], [DEFAULT]) == (
        "all pods in a single pod group should have the same priority as the pod group's "
        "priority, got 10 and 9")
    assert validate_pod_group(PodGroup("pg"), [_p("p1"), _p("p2", policy=NEVER)], [],
                              [DEFAULT]) == (
        "all pods in a single pod group should have the same preemption policy, got Never and "
        "PreemptLowerPriority")
    assert validate_pod_group(PodGroup("pg"), [_p("p1", "sched1")], [], ["other"]) == (
        'profile not found for scheduler name "sched1"')


def _uids(out: Sequence[object]) -> list[str]:
    return [p.pod_uid for p in out]  # type: ignore[attr-defined]


def test_skip_pod_group_pod_schedule_drops_a_terminating_member() -> None:
    """kube's skipPodSchedule drops a member being deleted (deletionTimestamp set): it is not
    evaluated (the group's cycle tries p1 alone) and is answered with the skip's words."""
    c = gang_cluster([node("node1")], groups=[basic("pg")], **NO_PREEMPTION)
    out = schedule_request(c, [member("p1", "pg"), member("p2", "pg", terminating=True)])
    assert [(p.pod_uid, p.outcome, p.node_name, p.message) for p in out] == [
        ("p1", Outcome.SCHEDULED, "node1", ""),
        ("p2", Outcome.UNSCHEDULABLE, "", "skip schedule deleting pod: default/p2")]
    assert group_of(out, "default/pg").evaluated == 1
    assert set(c.snapshot.pods) == {"p1"}


def test_skip_pod_group_pod_schedule_drops_an_assumed_member() -> None:
    """p3 assumed before: not scheduled again, answered "already placed" on its node, and it
    counts as scheduled (a gang of 2 with p1 is feasible)."""
    c = gang_cluster([node("node1"), node("node2")], groups=[gang("pg", 2)], **NO_PREEMPTION)
    schedule_request(c, [member("p3", "pg", node_selector={"kubernetes.io/hostname": "node2"}),
                         member("p0", "pg")])
    cycle = c.cursor.cycle
    out = schedule_request(c, [member("p1", "pg"), member("p3", "pg")])
    assert [(p.pod_uid, p.outcome, p.message) for p in out] == [
        ("p1", Outcome.SCHEDULED, ""), ("p3", Outcome.SCHEDULED, "already placed")]
    assert out[1].node_name == "node2"
    assert c.cursor.cycle == cycle + 1  # one pod cycle: p1's
    res = group_of(out, "default/pg")
    assert (res.already_scheduled, res.evaluated, res.scheduled) == (2, 1, 1)


def test_finishes_attempt_when_all_popped_pods_are_assumed() -> None:
    """Every member already assumed: no cycle, nothing written, each answered as placed."""
    c = gang_cluster([node("node1")], groups=[gang("pg", 2)], **NO_PREEMPTION)
    first = schedule_request(c, [member("p1", "pg"), member("p2", "pg")])
    before = state_of(c)
    again = schedule_request(c, [member("p1", "pg"), member("p2", "pg")])
    assert [(p.pod_uid, p.node_name, p.message) for p in again] == [
        (p.pod_uid, p.node_name, "already placed") for p in first]
    assert state_of(c) == before


def test_pod_group_not_found_leaves_the_pods_waiting() -> None:
    """kube puts them back among incompletePodGroupPods: here GATED with PreEnqueue's words,
    nothing placed, no cycle, the snapshot untouched."""
    c = gang_cluster([node("node1")], **NO_PREEMPTION)
    before = state_of(c)
    out = schedule_request(c, [member("p1", "pg"), member("p2", "pg")])
    msg = 'waiting for pods\'s pod group "pg" to appear in scheduling queue'
    assert [(p.pod_uid, p.outcome, p.node_name, p.message) for p in out] == [
        ("p1", Outcome.UNSCHEDULABLE, "", msg), ("p2", Outcome.UNSCHEDULABLE, "", msg)]
    assert group_of(out, "default/pg").outcome is GroupOutcome.GATED
    assert state_of(c) == before


def test_scheduler_name_mismatch_updates_status() -> None:
    no_preemption = {"multiPoint": {"disabled": [{"name": "DefaultPreemption"}]}}
    profiles = {"profiles": [
        {"schedulerName": s, "plugins": no_preemption} for s in ("sched1", "sched2")]}
    bound = member("p", "pg", scheduler_name="sched1", node_name="node1")
    c = gang_cluster([node("node1")], [bound], [PodGroup("pg", uid="pg")], **profiles)
    out = schedule_request(c, [member("p1", "pg", scheduler_name="sched1"),
                               member("p2", "pg", scheduler_name="sched2")])
    msg = ('all pods in a single pod group should have the same .spec.schedulerName set, '
           'got: "sched2" and "sched1"')
    assert c.snapshot.pod_groups["default/pg"].condition("PodGroupInitiallyScheduled") == (
        PodGroupCondition("PodGroupInitiallyScheduled", "False", "SchedulerError", msg))
    assert [(p.outcome, p.node_name, p.message) for p in out] == [
        (Outcome.UNSCHEDULABLE, "", msg)] * 2
    assert set(c.snapshot.pods) == {"p"}
