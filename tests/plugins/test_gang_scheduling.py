"""GangScheduling: table tests after kube v1.37.2's gangscheduling_test.go.

`TestPlacementFeasible`: each row's minCount (0 is kube's basic policy, whose minimum is 1),
childrenCount, initial scheduled count and the per-step pod statuses; the test feeds
PlacementProgress{Remaining: childrenCount-(i+1), Scheduled} after each step and checks the
codes. Only the rows with CompositePodGroup and TopologyAwareWorkloadScheduling off are ported
(they are not modelled); the CPG=true duplicates expect the same codes anyway.

`TestGangSchedulingFlow`: its PreEnqueue expectations with CompositePodGroup off (Permit is
not modelled: a group that passes PlacementFeasible is allowed in the same cycle). kube's
PreEnqueue counts every member the cache knows (the pod itself and `initialPods` of the same
group), so `all_pods` below is that count.
"""

from __future__ import annotations

import pytest

from schedsvc.model_pod_group import PodGroup
from schedsvc.plugins.gang_scheduling import Feasibility, placement_feasible, pre_enqueue

S, W, U = Feasibility.SUCCESS, Feasibility.WAIT, Feasibility.UNSCHEDULABLE
FIT, NOFIT = True, False

# (name, minCount (0: basic), childrenCount, initialScheduledCount, pod fits?, expected codes)
PLACEMENT_FEASIBLE = [
    ("All pods succeed, minCount met at end", 2, 2, 0, [FIT, FIT], [W, S]),
    ("First pod fails, minCount not satisfiable", 3, 3, 0, [NOFIT], [U]),
    ("Second pod fails, minCount not satisfiable", 2, 2, 0, [FIT, NOFIT], [W, U]),
    ("Non-gang pod group with 0 scheduled pods fails", 0, 1, 0, [NOFIT], [U]),
    ("Non-gang pod group with succeeds once 1 pod is scheduled", 0, 1, 0, [FIT], [S]),
    ("Non-gang pod group with 1 initially scheduled pod succeeds", 0, 1, 1, [NOFIT], [S]),
    ("More than minCount pods, all succeed", 2, 3, 0, [FIT, FIT, FIT], [W, S, S]),
    ("More than minCount pods, first fails", 2, 3, 0, [NOFIT, FIT, FIT], [W, W, S]),
    ("More than minCount pods, minCount not satisfiable", 2, 3, 0, [NOFIT, NOFIT], [W, U]),
    ("1 pod scheduled, 2 unscheduled pods succeed, minCount 3 met", 3, 2, 1, [FIT, FIT], [W, S]),
    ("minCount already met by scheduled pods", 2, 1, 2, [NOFIT], [S]),
    ("1 pod scheduled, minCount 3, first unscheduled fails, not enough remaining",
     3, 2, 1, [NOFIT], [U]),
    ("1 pod scheduled, minCount 4, first unscheduled succeeds, not enough remaining",
     4, 2, 1, [FIT], [U]),
]


@pytest.mark.parametrize(
    ("min_count", "children", "initial", "fits", "want"),
    [pytest.param(*row[1:], id=row[0]) for row in PLACEMENT_FEASIBLE],
)
def test_placement_feasible(
    min_count: int, children: int, initial: int, fits: list[bool], want: list[Feasibility]
) -> None:
    pg = PodGroup("test-pg", min_count=min_count or None)
    scheduled = initial
    got = []
    for i, fit in enumerate(fits):
        scheduled += fit
        code, _ = placement_feasible(pg.placement_min_count, scheduled, children - (i + 1))
        got.append(code)
    assert got == want


@pytest.mark.parametrize(
    ("min_count", "scheduled", "remaining", "want"),
    [
        pytest.param(3, 1, 1, "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining",
                     id="cannot be satisfied"),
        pytest.param(3, 1, 2, "minCount (3) is not yet satisfied: 1 scheduled, 2 remaining",
                     id="not yet satisfied"),
        pytest.param(3, 3, 0, "", id="satisfied: a nil status"),
    ],
)
def test_placement_feasible_messages_are_kubes(
    min_count: int, scheduled: int, remaining: int, want: str
) -> None:
    """gangscheduling.go PlacementFeasible's fmt.Sprintf strings."""
    assert placement_feasible(min_count, scheduled, remaining)[1] == want


GANG1 = PodGroup("pg1", namespace="ns1", min_count=3, workload_name="gang-wl", template_name="t1")
GANG2 = PodGroup("pg2", namespace="ns1", min_count=4, workload_name="gang-wl", template_name="t2")
BASIC = PodGroup("pg3", namespace="ns1", workload_name="basic-wl", template_name="1")
NO_GROUP = 'waiting for pods\'s pod group "pg1" to appear in scheduling queue'
NO_QUORUM = "waiting for minCount pods from a gang to appear in scheduling queue"


@pytest.mark.parametrize(
    ("name", "pg", "all_pods", "want"),
    [
        # p1 of pg1; initialPods p2, p3, p4, p5 (p4, p5 are pg2's): pg1 has 3 members
        pytest.param("pg3", BASIC, 1, "", id="basic policy pod succeeds immediately"),
        pytest.param("pg1", None, 3, NO_GROUP,
                     id="gang pod fails PreEnqueue when pod group is not yet created"),
        pytest.param("pg1", GANG1, 2, NO_QUORUM,
                     id="gang pod fails PreEnqueue when quorum is not met"),
        pytest.param("pg1", GANG1, 3, "", id="gang pod passes PreEnqueue, but waits at Permit"),
        pytest.param("pg1", GANG1, 3, "",
                     id="final gang pod arrives at Permit and allows all waiting pods"),
        # pg-basic-2 (minCount 2, its parent CompositePodGroup ignored with the gate off):
        # p2_1 alone, p1_1 and p1_2 are pg-basic-1's
        pytest.param("pg-basic-2", PodGroup("pg-basic-2", namespace="ns1", min_count=2), 1,
                     NO_QUORUM,
                     id="CPG Basic With Gang Stage 1: pg1 ready, root ready (CPG=false)"),
        pytest.param("pg1-cpg", PodGroup("pg1-cpg", namespace="ns1", min_count=1), 1, "",
                     id="CPG Hierarchical Stage 1: No pods, tree not ready (CPG=false)"),
    ],
)
def test_pre_enqueue(name: str, pg: PodGroup | None, all_pods: int, want: str) -> None:
    assert pre_enqueue(name, pg, all_pods) == want


def test_pre_enqueue_of_a_gang_whose_second_group_lacks_members() -> None:
    """pg2 (minCount 4) with p4 and p5 only: gated, as p1's pg1 is not."""
    assert pre_enqueue("pg2", GANG2, 2) == NO_QUORUM
    assert pre_enqueue("pg1", GANG1, 3) == ""
