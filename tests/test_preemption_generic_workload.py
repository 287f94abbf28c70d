"""Single-pod preemption with GenericWorkload on (kube v1.37.2 Evaluator.GetVictimsOnNode ->
getCrossNodesVictims, SelectVictimsOnNode over DomainVictims, PodEligibleToPreemptOthers with
NewPodVictim): a member's priority is its PodGroup's, a member outranks a plain pod of equal
priority (MoreImportantVictim), a `disruptionMode: all` group is evicted whole, members on
other nodes too. With the gate off each pod is its own victim at its own priority, as before.

Each case is worked by hand from those functions; the gate-off answer is shown beside it so
the test fails if the gate stops mattering.
"""

from __future__ import annotations

import pytest

from schedsvc.model import Outcome, Pod
from schedsvc.model_pod_group import PodGroup
from schedsvc.plugins.default_preemption import NOT_ELIGIBLE_TERMINATING
from tests.builders import gang_cluster, group, node, sized

SECOND = 1_000_000_000


def _victims(
    gate: bool, nodes: list[tuple[str, int]], pods: list[Pod], groups: list[PodGroup],
    size: int = 1,
) -> tuple[str, list[str]]:
    """Where a plain pod `p` of priority 100 is nominated, and its victims."""
    c = gang_cluster([node(n, cpu=cpu * 1000) for n, cpu in nodes], pods, groups,
                     generic_workload=gate)
    before = {u: (r.node_name, list(c.snapshot.pods_on_row[c.snapshot.index[r.node_name]]))
              for u, r in c.snapshot.pods.items()}
    out, _ = c.schedule([sized("p", size, priority=100)])
    p = out[0]
    assert p.outcome is Outcome.UNSCHEDULABLE
    after = {u: (r.node_name, list(c.snapshot.pods_on_row[c.snapshot.index[r.node_name]]))
             for u, r in c.snapshot.pods.items()}
    assert after == before  # the dry run of preemption left every node as it was
    return p.nominated_node_name, [v.uid for v in p.victims]


@pytest.mark.parametrize(("gate", "want"), [(True, ["x1"]), (False, ["v1"])])
def test_a_member_outranks_a_plain_pod_of_equal_priority(gate: bool, want: list[str]) -> None:
    # x1 started first: without the gate it is the more important (reprieved), v1 goes; with
    # it, v1 is a PodGroup victim (rank 2 > 1) and is reprieved first, x1 goes
    pods = [sized("x1", 1, priority=10, node_name="n1", start_time=0),
            sized("v1", 1, priority=10, node_name="n1", start_time=5 * SECOND,
                  pod_group="pg1")]
    assert _victims(gate, [("n1", 2)], pods, [group("pg1", 10)]) == ("n1", want)


@pytest.mark.parametrize(("gate", "want"), [(True, ["x1"]), (False, ["v1"])])
def test_a_member_has_its_pod_groups_priority(gate: bool, want: list[str]) -> None:
    # v1's own priority is 5, its PodGroup's 50: with the gate v1 (50) is reprieved before
    # x1 (10); without it x1 (10) before v1 (5)
    pods = [sized("x1", 1, priority=10, node_name="n1", start_time=0),
            sized("v1", 1, priority=5, node_name="n1", start_time=0, pod_group="pg1")]
    assert _victims(gate, [("n1", 2)], pods, [group("pg1", 50)]) == ("n1", want)


@pytest.mark.parametrize(("gate", "want"), [(True, ["v1", "v2"]), (False, ["v1"])])
def test_a_disruption_mode_all_group_goes_whole(gate: bool, want: list[str]) -> None:
    # p needs 2 CPUs. On n1 (3): x1 (20) is reprieved first, then the group (10) does not
    # fit back: with the gate it is one victim of both members, v2 on n2 too. On n2 (3), y
    # (200) stays, and without v2 there is 1 CPU only: no candidate there.
    pods = [sized("x1", 1, priority=20, node_name="n1", start_time=0),
            sized("v1", 1, priority=10, node_name="n1", start_time=0, pod_group="pg1"),
            sized("v2", 1, priority=10, node_name="n2", start_time=0, pod_group="pg1"),
            sized("y", 2, priority=200, node_name="n2", start_time=0)]
    groups = [group("pg1", 10, whole=True)]
    node_name, victims = _victims(gate, [("n1", 3), ("n2", 3)], pods, groups, size=2)
    assert node_name == "n1" and sorted(victims) == want


@pytest.mark.parametrize(("gate", "eligible"), [(True, False), (False, True)])
def test_a_terminating_member_counts_at_its_groups_priority(gate: bool, eligible: bool) -> None:
    # v1 (own priority 1000, its PodGroup's 10) is being preempted on p's nominated node:
    # with the gate it is of lower priority than p (100), so p waits for it
    pods = [sized("v1", 2, priority=1000, node_name="n1", pod_group="pg1",
                  terminating_by_preemption=True)]
    c = gang_cluster([node("n1", cpu=2000)], pods, [group("pg1", 10)], generic_workload=gate)
    out, _ = c.schedule([sized("p", 1, priority=100, nominated_node_name="n1")])
    assert (NOT_ELIGIBLE_TERMINATING in out[0].message) is not eligible
