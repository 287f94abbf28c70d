"""What a pod group cycle answers for each member and writes on the PodGroup: kube v1.37.2's
TestSubmitPodGroupAlgorithmResult (schedule_one_podgroup_test.go) and TestUpdatePodGroupCondition.

kube's submit table injects each pod's algorithm result and the group's status; here the same
per-pod outcomes come from real pods on one node "node1" (4 cpus): a pod that fits, one that
asks for 64 cpus (a FitError, kube's Unschedulable), the group's status from GangScheduling and
PodGroupPostFilter (DefaultPreemption left out: NO_PREEMPTION; its waiting-on-preemption row
is workload-aware preemption's, not ported here). kube's expectBound is our SCHEDULED members,
expectFailed the others; the condition is the one kube patches (LastTransitionTime is not
modelled). Where kube injected a status text the group's real text is asserted instead, worked
out from schedule_one_podgroup.go (podGroupSchedulingDefaultAlgorithm keeps PlacementFeasible's
status on a break, applyPodGroupPostFilterResult appends DynamicResources' message).
"""

from __future__ import annotations

import pytest

from schedsvc.engine.pod_group_result import GroupOutcome
from schedsvc.engine.pod_group_status import GroupCode, GroupStatus, condition_to_write
from schedsvc.model import Outcome, Pod
from schedsvc.model_pod_group import PodGroup, PodGroupCondition
from tests.builders.clusters import cluster_of
from tests.builders.domain import node
from tests.builders.group_cycles import (
    DRA_MESSAGE,
    NO_PREEMPTION,
    basic,
    gang,
    gang_cluster,
    group_of,
    member,
    schedule_request,
)

PGIS = "PodGroupInitiallyScheduled"
SCHEDULED_TRUE = PodGroupCondition(PGIS, "True", "Scheduled", "")
ALREADY = PodGroupCondition(PGIS, "True", "Scheduled", "All pods scheduled")
NO_FIT = "0/1 nodes are available: 1 Insufficient cpu."


def _fits(name: str, group: str = "pg") -> Pod:
    return member(name, group)


def _too_big(name: str, group: str = "pg") -> Pod:
    return member(name, group, cpu=64000)


def _run(pg: PodGroup, pods: list[Pod]) -> tuple[dict[str, tuple[str, str]], PodGroup]:
    c = gang_cluster([node("node1")], groups=[pg], **NO_PREEMPTION)
    out = schedule_request(c, pods)
    return {p.pod_uid: (p.node_name, p.message) for p in out}, c.snapshot.pod_groups[pg.key]


def test_all_pods_feasible() -> None:
    got, pg = _run(basic("pg"), [_fits("p1"), _fits("p2"), _fits("p3")])
    assert got == {f"p{i}": ("node1", "") for i in (1, 2, 3)}
    assert pg.condition(PGIS) == SCHEDULED_TRUE


def test_all_pods_feasible_but_pod_group_unschedulable() -> None:
    """kube's row injects an Unschedulable group status over three feasible pods. Real: a gang
    of 3 whose third member does not fit: the two that fit are failed with the group's
    message behind errPodGroupUnschedulable, the third keeps its FitError."""
    group_msg = f"minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, {DRA_MESSAGE}"
    got, pg = _run(gang("pg", 3), [_fits("p1"), _fits("p2"), _too_big("p3")])
    assert got == {
        "p1": ("", f"pod group is unschedulable, {group_msg}"),
        "p2": ("", f"pod group is unschedulable, {group_msg}"),
        "p3": ("", NO_FIT),
    }
    assert pg.condition(PGIS) == PodGroupCondition(PGIS, "False", "Unschedulable", group_msg)


def test_one_unschedulable() -> None:
    """minCount met without p2: p1 and p3 are bound, p2 fails on its own, the group is
    Scheduled."""
    got, pg = _run(gang("pg", 2), [_fits("p1"), _too_big("p2"), _fits("p3")])
    assert got == {"p1": ("node1", ""), "p2": ("", NO_FIT), "p3": ("node1", "")}
    assert pg.condition(PGIS) == SCHEDULED_TRUE


@pytest.mark.parametrize("policy", [None, 3], ids=["basic", "gang of 3"])
def test_all_pods_unschedulable(policy: int | None) -> None:
    """Every pod its own FitError; the group: a basic group stops when its minimum of 1 can no
    longer be met (after the last pod), a gang of 3 after the first pod."""
    pods = [_too_big("p1"), _too_big("p2"), _too_big("p3")]
    got, pg = _run(PodGroup("pg", min_count=policy), pods)
    if policy is None:
        group_msg = f"minCount (1) cannot be satisfied: 0 scheduled, 0 remaining, {DRA_MESSAGE}"
        assert got == {f"p{i}": ("", NO_FIT) for i in (1, 2, 3)}
    else:
        # p1 tried; p2 and p3 never evaluated: completePodGroupAlgorithmResult gave them a
        # clone of the group's status before PodGroupPostFilter appended its message to the
        # group's own (podGroupCycle), so theirs lacks it (kube-oracle's recordings agree)
        never_tried = "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining"
        group_msg = f"{never_tried}, {DRA_MESSAGE}"
        assert got == {"p1": ("", NO_FIT), "p2": ("", never_tried), "p3": ("", never_tried)}
    assert pg.condition(PGIS) == PodGroupCondition(PGIS, "False", "Unschedulable", group_msg)


def test_error_for_one_pod() -> None:
    """kube's row: a plugin Error for p2 after p1 fit; every pod fails, SchedulerError. Real:
    a profile whose NodeResourcesFit Filter runs without its PreFilter errs for every pod, so
    the first pod errs: the group's status is "failed to schedule other pod from a pod group:
    <the pod's error>"; the pod keeps its own error, the others get the group's."""
    err = 'running "NodeResourcesFit" filter plugin: error reading "PreFilterNodeResourcesFit" ' \
          "from cycleState: not found"
    profile = {"profiles": [{"schedulerName": "default-scheduler", "plugins": {
        "preFilter": {"disabled": [{"name": "NodeResourcesFit"}]},
        "multiPoint": {"disabled": [{"name": "DefaultPreemption"}]}}}]}
    c = gang_cluster([node("node1")], groups=[basic("pg")], **profile)
    out = schedule_request(c, [_fits("p1"), _fits("p2"), _fits("p3")])
    group_msg = f"failed to schedule other pod from a pod group: {err}"
    assert {p.pod_uid: (p.outcome, p.message) for p in out} == {
        "p1": (Outcome.UNSCHEDULABLE, err),
        "p2": (Outcome.UNSCHEDULABLE, group_msg),
        "p3": (Outcome.UNSCHEDULABLE, group_msg),
    }
    assert group_of(out, "default/pg").outcome is GroupOutcome.ERROR
    assert c.snapshot.pod_groups["default/pg"].condition(PGIS) == PodGroupCondition(
        PGIS, "False", "SchedulerError", group_msg
    )
    assert not c.snapshot.pods


def test_already_scheduled_successful_cycle_keeps_condition() -> None:
    """The condition is rewritten with the new (empty) message, still True."""
    got, pg = _run(basic("pg", conditions=(ALREADY,)), [_fits("p1"), _fits("p2"), _fits("p3")])
    assert got == {f"p{i}": ("node1", "") for i in (1, 2, 3)}
    assert pg.condition(PGIS) == SCHEDULED_TRUE


def test_already_scheduled_rejected_cycle_does_not_regress_condition() -> None:
    got, pg = _run(basic("pg", conditions=(ALREADY,)),
                   [_too_big("p1"), _too_big("p2"), _too_big("p3")])
    assert all(node_name == "" for node_name, _ in got.values())
    assert pg.condition(PGIS) == ALREADY


def test_already_scheduled_error_cycle_does_not_regress_condition() -> None:
    """A SchedulerError (validatePodGroup's: a member's priority is not the group's)."""
    pods = [_fits("p1"), _fits("p2", ), member("p3", "pg", priority=5)]
    got, pg = _run(basic("pg", conditions=(ALREADY,)), pods)
    assert all(node_name == "" for node_name, _ in got.values())
    assert pg.condition(PGIS) == ALREADY


# TestUpdatePodGroupCondition: (existing condition, the status the cycle ends with, expected).
# kube's table passes a condition; ours is built from the group's status, so its reason is
# the one kube's submitPodGroupAlgorithmResult gives that status ("SomeReason" of kube's first
# row cannot be produced and is "Scheduled" here).
def _c(status: str, reason: str, message: str, gen: int = 0) -> PodGroupCondition:
    return PodGroupCondition(PGIS, status, reason, message, gen)


OK_MSG = "All required pods have been successfully scheduled"
UPDATE_CASES = [
    ("set Scheduled condition to True on empty status", None,
     GroupStatus(GroupCode.SUCCESS, [OK_MSG]), _c("True", "Scheduled", OK_MSG)),
    ("set Scheduled condition to False with Unschedulable reason", None,
     GroupStatus(GroupCode.UNSCHEDULABLE, ["0/3 nodes are available: insufficient cpu"]),
     _c("False", "Unschedulable", "0/3 nodes are available: insufficient cpu")),
    ("set Scheduled condition to False with SchedulerError reason", None,
     GroupStatus.error("Internal scheduling error"),
     _c("False", "SchedulerError", "Internal scheduling error")),
    ("transition from Unschedulable to Scheduled",
     _c("False", "Unschedulable", "previously unschedulable"),
     GroupStatus(GroupCode.SUCCESS, [OK_MSG]), _c("True", "Scheduled", OK_MSG)),
    ("transition from SchedulerError to Scheduled", _c("False", "SchedulerError", "internal error"),
     GroupStatus(GroupCode.SUCCESS, [OK_MSG]), _c("True", "Scheduled", OK_MSG)),
    ("do not regress Scheduled to Unschedulable", _c("True", "Scheduled", "All pods scheduled"),
     GroupStatus(GroupCode.UNSCHEDULABLE, ["extra pods could not be placed"]), None),
    ("do not regress Scheduled to SchedulerError", _c("True", "Scheduled", "All pods scheduled"),
     GroupStatus.error("internal error"), None),
    ("transition from Unschedulable to SchedulerError",
     _c("False", "Unschedulable", "not enough resources"), GroupStatus.error("internal error"),
     _c("False", "SchedulerError", "internal error")),
    ("transition from SchedulerError to Unschedulable",
     _c("False", "SchedulerError", "internal error"),
     GroupStatus(GroupCode.UNSCHEDULABLE, ["not enough resources"]),
     _c("False", "Unschedulable", "not enough resources")),
    ("Scheduled to Scheduled", _c("True", "Scheduled", "All pods scheduled"),
     GroupStatus(GroupCode.SUCCESS, ["New condition message"]),
     _c("True", "Scheduled", "New condition message")),
]


@pytest.mark.parametrize(
    ("existing", "status", "want"), [pytest.param(*row[1:], id=row[0]) for row in UPDATE_CASES]
)
def test_update_pod_group_condition(
    existing: PodGroupCondition | None, status: GroupStatus, want: PodGroupCondition | None
) -> None:
    """None: kube patches nothing (the condition stays as it was)."""
    pg = PodGroup("pg1", namespace="ns1", conditions=(existing,) if existing else ())
    assert condition_to_write(pg, status) == want


def test_observed_generation_is_set_from_pod_group_generation() -> None:
    pg = PodGroup("pg-gen", namespace="ns1", generation=7)
    got = condition_to_write(pg, GroupStatus(GroupCode.SUCCESS, ["All pods scheduled"]))
    assert got == _c("True", "Scheduled", "All pods scheduled", 7)


def test_an_unchanged_condition_is_not_written_again() -> None:
    """apimeta.SetStatusCondition reports no change: updatePodGroupCondition returns."""
    same = _c("False", "Unschedulable", "x")
    pg = PodGroup("pg", conditions=(same,))
    assert condition_to_write(pg, GroupStatus(GroupCode.UNSCHEDULABLE, ["x"])) is None


# TestPodGroupCycle_PodGroupPostFilter: whether a rejected group reaches workload-aware
# preemption (kube's fake DefaultPreemption records the call; here its words show it).
NO_VICTIMS = "pod group preemption: No preemption victims found for incoming preemptor"


def test_pod_group_post_filter_runs_with_generic_workload_and_default_preemption() -> None:
    """DefaultPreemption's UnschedulableAndUnresolvable ends RunPodGroupPostFilterPlugins with
    its message alone (DynamicResources' is dropped)."""
    c = gang_cluster([node("node1")], groups=[basic("pg")])
    out = schedule_request(c, [_too_big("p1"), _too_big("p2")])
    assert group_of(out, "default/pg").message == (
        f"minCount (1) cannot be satisfied: 0 scheduled, 0 remaining, {NO_VICTIMS}")


def test_pod_group_post_filter_is_not_run_without_default_preemption() -> None:
    c = gang_cluster([node("node1")], groups=[basic("pg")], **NO_PREEMPTION)
    out = schedule_request(c, [_too_big("p1"), _too_big("p2")])
    assert group_of(out, "default/pg").message == (
        f"minCount (1) cannot be satisfied: 0 scheduled, 0 remaining, {DRA_MESSAGE}")


def test_pod_group_post_filter_is_not_run_with_generic_workload_off() -> None:
    """No group cycle at all: each member is scheduled alone, its own PostFilter run, as a pod
    of no group would be."""
    members = cluster_of([node("node1")]).schedule([_too_big("p1"), _too_big("p2")])[0]
    loners = cluster_of([node("node1")]).schedule(
        [member("p1", "", cpu=64000), member("p2", "", cpu=64000)])[0]
    assert [(p.pod_group, p.group, p.message) for p in members] == [
        ("", None, p.message) for p in loners]
    assert all("preemption: " in p.message and NO_VICTIMS not in p.message for p in members)
