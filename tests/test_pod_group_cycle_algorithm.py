"""The pod group algorithm: kube v1.37.2's TestPodGroupSchedulingAlgorithm
(schedule_one_podgroup_test.go), its rows with TopologyAwareWorkloadScheduling and
CompositePodGroup off.

kube's table drives a fake Filter plugin (a status per pod) and a fake PlacementFeasible plugin
(a code per evaluated count: `placementFeasibleStatuses[total - Remaining]`, nil when the list
is empty or shorter) and reads runRootSchedulingAlgorithm's podGroupAlgorithmResult: the
group's status code and each evaluated pod's status. Here:
- the fake PlacementFeasible is the same function put in place of GangScheduling's
  `placement_feasible` where the cycle calls it (the real one cannot return Wait after the
  last pod, nor Unschedulable right after a pod fit; those rows need the fake);
- the fake Filter is real pods on one node "node1": a nil status is a pod that fits, an
  Unschedulable one a pod requesting more cpu than node1 has, UnschedulableAndUnresolvable a
  pod whose nodeSelector node1 lacks; kube's filter Error (no real plugin errs for one pod and
  not another) is a wrapper of the cycle's schedule_one answering that pod with an error;
- the result is read from run_group_algorithm (wrapped to keep its GroupRun): its status code
  and its `tried` placements, in order (kube's podResults).
kube's "Any placementFeasible returned Error" and "First placementFeasible call returned Error"
are not ported: our GangScheduling, like kube's, never returns an Error, and the engine has no
other PlacementFeasible plugin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from schedsvc.engine import pod_group_cycle
from schedsvc.engine.pod_group_cycle import GroupRun
from schedsvc.engine.pod_group_status import GroupCode
from schedsvc.engine.schedule_one import Placement
from schedsvc.model import Outcome, Pod
from schedsvc.plugins.gang_scheduling import Feasibility
from tests.builders.domain import node
from tests.builders.group_cycles import NO_PREEMPTION, basic, gang_cluster, member, schedule_request

S, W, U = Feasibility.SUCCESS, Feasibility.WAIT, Feasibility.UNSCHEDULABLE
OK, UNSCHED, UNRESOLVABLE, ERROR = "nil", "Unschedulable", "UnschedulableAndUnresolvable", "Error"


def _pod(name: str, filter_status: str) -> Pod:
    if filter_status == UNSCHED:
        return member(name, "pg", cpu=64000)  # more than node1's 4 cpus
    if filter_status == UNRESOLVABLE:
        return member(name, "pg", node_selector={"disk": "ssd"})
    return member(name, "pg")


def _run(
    monkeypatch: pytest.MonkeyPatch, filters: dict[str, str], feasible: Sequence[Feasibility]
) -> GroupRun:
    total = len(filters)

    def fake_feasible(min_count: int, scheduled: int, remaining: int) -> tuple[Feasibility, str]:
        evaluated = total - remaining
        if evaluated < len(feasible) and feasible[evaluated] is not S:
            return feasible[evaluated], "injected placementFeasible status"
        return S, ""

    real_one = pod_group_cycle.schedule_one

    def fake_one(env: Any, cursor: Any, pod: Pod, dry_run: bool, log: Any = None) -> Placement:
        if filters[pod.uid] == ERROR:
            return Placement(pod.uid, "", Outcome.UNSCHEDULABLE, message="injected", error=True)
        return real_one(env, cursor, pod, dry_run, log)

    runs: list[GroupRun] = []
    real_run = pod_group_cycle.run_group_algorithm

    def keep(*args: Any) -> GroupRun:
        runs.append(real_run(*args))
        return runs[-1]

    monkeypatch.setattr(pod_group_cycle, "placement_feasible", fake_feasible)
    monkeypatch.setattr(pod_group_cycle, "schedule_one", fake_one)
    monkeypatch.setattr(pod_group_cycle, "run_group_algorithm", keep)
    c = gang_cluster([node("node1")], groups=[basic("pg")], **NO_PREEMPTION)
    schedule_request(c, [_pod(name, f) for name, f in filters.items()])
    assert len(runs) == 1
    return runs[0]


def _code(p: Placement) -> str:
    if p.error:
        return ERROR
    if p.outcome is Outcome.SCHEDULED:
        assert p.node_name == "node1"
        return OK
    assert p.node_name == ""
    return UNSCHED


ALL_FIT = {"p1": OK, "p2": OK, "p3": OK}

CASES = [
    ("All pods feasible", ALL_FIT, [], GroupCode.SUCCESS, {"p1": OK, "p2": OK, "p3": OK}),
    ("All pods feasible, podGroup already meeting quorum before any pod is evaluated",
     ALL_FIT, [S, S, S, S], GroupCode.SUCCESS, {"p1": OK, "p2": OK, "p3": OK}),
    ("All pods feasible, podGroup schedulable with 3 schedulable pods",
     ALL_FIT, [W, W, W, S], GroupCode.SUCCESS, {"p1": OK, "p2": OK, "p3": OK}),
    ("All pods feasible, podGroup waiting",
     ALL_FIT, [W, W, W, W], GroupCode.UNSCHEDULABLE, {"p1": OK, "p2": OK, "p3": OK}),
    ("All pods feasible, podGroup unschedulable",
     ALL_FIT, [W, U], GroupCode.UNSCHEDULABLE, {"p1": OK}),
    ("All pods feasible, podGroup unschedulable with 2 pods",
     ALL_FIT, [W, W, U], GroupCode.UNSCHEDULABLE, {"p1": OK, "p2": OK}),
    ("PodGroup schedulable with 2 schedulable pods",
     {"p1": UNSCHED, "p2": OK, "p3": OK}, [W, W, W, S], GroupCode.SUCCESS,
     {"p1": UNSCHED, "p2": OK, "p3": OK}),
    ("All pods unschedulable",
     {"p1": UNRESOLVABLE, "p2": UNSCHED, "p3": UNSCHED}, [W, S, S, S], GroupCode.UNSCHEDULABLE,
     {"p1": UNSCHED, "p2": UNSCHED, "p3": UNSCHED}),
    ("Any filter returned Error",
     {"p1": OK, "p2": ERROR, "p3": OK}, [], GroupCode.ERROR, {"p1": OK, "p2": ERROR}),
    ("First placementFeasible call returned Unschedulable",
     ALL_FIT, [U], GroupCode.UNSCHEDULABLE, {}),
]


@pytest.mark.parametrize(
    ("filters", "feasible", "want_code", "want_pods"),
    [pytest.param(*row[1:], id=row[0]) for row in CASES],
)
def test_pod_group_scheduling_algorithm(
    monkeypatch: pytest.MonkeyPatch, filters: dict[str, str], feasible: list[Feasibility],
    want_code: GroupCode, want_pods: dict[str, str],
) -> None:
    run = _run(monkeypatch, filters, feasible)
    assert run.status.code is want_code
    assert {p.pod_uid: _code(p) for p in run.tried} == want_pods
    assert [p.pod_uid for p in run.tried] == list(want_pods)  # in the group's order


def test_a_group_wait_after_the_last_pod_becomes_unschedulable_behind_kubes_error() -> None:
    """podGroupSchedulingDefaultAlgorithm: a Wait left after the loop becomes
    NewStatus(Unschedulable, reasons...).WithError(errPodGroupUnschedulable); with the fake,
    the reasons are the injected message."""
    with pytest.MonkeyPatch.context() as mp:
        run = _run(mp, ALL_FIT, [W, W, W, W])
    assert run.status.message() == "pod group is unschedulable, injected placementFeasible status"


def test_success_with_no_pod_scheduled_is_unschedulable() -> None:
    """runRootSchedulingAlgorithm: "The framework requires at least 1 pod to be scheduled":
    fwk.NewStatus(Unschedulable).WithError(errPodGroupUnschedulable), no reasons."""
    with pytest.MonkeyPatch.context() as mp:
        run = _run(mp, {"p1": UNSCHED, "p2": UNSCHED, "p3": UNSCHED}, [W, S, S, S])
    assert run.status.message() == "pod group is unschedulable"
    assert not run.any_scheduled
