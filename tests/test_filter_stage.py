"""The filter stage and the cycle around it (DESIGN §4-§5), in process, no gRPC.

Expected numbers are worked from kube's formulas (numFeasibleNodesToFind, the FitError
histogram sorted as strings), not read from our output.
"""

from __future__ import annotations

import pytest

from schedsvc.engine.schedule_pod import num_feasible_nodes_to_find
from schedsvc.engine.scheduler import Cluster, SnapshotUpdate
from schedsvc.model import Node, Outcome, Taint
from tests.builders import GiB, cluster_of, node, pod


@pytest.mark.parametrize(
    ("num_nodes", "percentage", "expected"),
    [
        pytest.param(10, 0, 10, id="fewer than 100 nodes are all evaluated"),
        pytest.param(99, 10, 99, id="99 nodes at 10 percent are still all evaluated"),
        pytest.param(100, 0, 100, id="adaptive 50 percent of 100 is floored at 100"),
        pytest.param(150, 10, 100, id="15 is below the minimum of 100"),
        pytest.param(1000, 0, 420, id="adaptive: 50 - 1000/125 = 42 percent of 1000"),
        pytest.param(1000, 40, 400, id="configured 40 percent of 1000"),
        pytest.param(5000, 0, 500, id="adaptive: 50 - 40 = 10 percent of 5000"),
        pytest.param(6000, 0, 300, id="adaptive 2 percent is raised to the 5 percent floor"),
        pytest.param(10000, 0, 500, id="adaptive floor of 5 percent of 10000"),
        pytest.param(5000, 100, 5000, id="100 percent evaluates every node"),
        pytest.param(5000, 50, 2500, id="configured 50 percent of 5000"),
    ],
)
def test_num_feasible_nodes_to_find_follows_kube(
    num_nodes: int, percentage: int, expected: int
) -> None:
    assert num_feasible_nodes_to_find(num_nodes, percentage) == expected


def cluster(nodes: list[Node], pct: int = 100, seed: int = 5, **cfg: object) -> Cluster:
    """Every node scored unless `pct` says otherwise; batching off, so each pod runs the stage."""
    return cluster_of(nodes, seed=seed, percentageOfNodesToScore=pct, **cfg)


def test_round_robin_start_moves_by_the_nodes_processed() -> None:
    c = cluster([node(f"n{i:04d}") for i in range(1000)], pct=10)
    for k in range(4):
        out, _ = c.schedule([pod(f"p{k}")])
        p = out[0]
        assert p.nodes_evaluated == 100 and p.nodes_feasible == 100
        # every node ties on an empty cluster: the choice is inside this cycle's window
        assert 100 * k <= int(p.node_name[1:]) < 100 * (k + 1)
        assert c.cursor.next_start_index == 100 * (k + 1)


def test_evaluation_stops_at_the_nth_feasible_node_and_diagnoses_only_those_visited() -> None:
    # every other node is too small: the 100th feasible node is the 200th visited
    nodes = [node(f"n{i:04d}", cpu=4000 if i % 2 else 100) for i in range(1000)]
    c = cluster(nodes, pct=10)
    out, _ = c.schedule([pod("p", cpu=500)])
    assert out[0].nodes_feasible == 100
    assert out[0].nodes_evaluated == 200
    assert c.cursor.next_start_index == 200


def test_the_same_seed_gives_the_same_placements() -> None:
    def run(seed: int) -> list[str]:
        c = cluster([node(f"n{i}") for i in range(50)], seed=seed)
        return [p.node_name for p in c.schedule([pod(f"p{i}") for i in range(30)])[0]]

    assert run(11) == run(11)
    assert run(11) != run(12)  # ties are broken at random, not by order


def test_fit_error_counts_each_nodes_first_rejecting_plugin_sorted_as_strings() -> None:
    nodes = [node(f"small{i}", cpu=200) for i in range(10)] + [
        node("cordoned", unschedulable=True),
        node("tainted1", taints=(Taint("dedicated", "gpu", "NoSchedule"),)),
        node("tainted2", taints=(Taint("dedicated", "gpu", "NoExecute"),)),
    ]
    c = cluster(nodes)
    out, _ = c.schedule([pod("p", cpu=1000)])
    p = out[0]
    assert p.outcome is Outcome.UNSCHEDULABLE
    # kube sorts "count reason" strings byte-wise: "1 n..." < "10 I..." (space 0x20 sorts
    # before '0' 0x30) and "10 ..." < "2 ...". DefaultPreemption then finds every node
    # UnschedulableAndUnresolvable (1000m > 200m allocatable, cordon, taints): not helpful.
    assert p.message == (
        "0/13 nodes are available: 1 node(s) were unschedulable, 10 Insufficient cpu, "
        "2 node(s) had untolerated taint(s). "
        "preemption: 0/13 nodes are available: 13 Preemption is not helpful for scheduling."
    )
    assert p.reasons == {
        "Insufficient cpu": 10,
        "node(s) were unschedulable": 1,
        "node(s) had untolerated taint(s)": 2,
    }


def test_a_node_failing_several_resources_reports_each_reason_once() -> None:
    c = cluster([node("n0", cpu=100, memory=GiB), node("n1", cpu=100, memory=8 * GiB)])
    out, _ = c.schedule([pod("p", cpu=500, memory=2 * GiB)])
    # 500m cpu > 100m allocatable on both: unresolvable, preemption cannot help
    assert out[0].message == (
        "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_a_single_feasible_node_is_chosen_without_scoring() -> None:
    c = cluster([node("big", cpu=4000), node("small", cpu=100)])
    out, _ = c.schedule([pod("p", cpu=1000)])
    assert out[0].node_name == "big" and out[0].score == 0 and out[0].nodes_feasible == 1


def test_dry_run_decides_but_assumes_nothing() -> None:
    c = cluster([node("n0", cpu=1000)])
    a, _ = c.schedule([pod("a", cpu=800)], dry_run=True)
    b, _ = c.schedule([pod("b", cpu=800)])
    assert a[0].node_name == b[0].node_name == "n0"
    assert "a" not in c.snapshot.pods and "b" in c.snapshot.pods


def test_each_placed_pod_is_assumed_so_the_next_pod_sees_it() -> None:
    c = cluster([node("n0", cpu=1000), node("n1", cpu=1000)])
    out, _ = c.schedule([pod(f"p{i}", cpu=600) for i in range(3)])
    assert sorted(p.node_name for p in out[:2]) == ["n0", "n1"]
    assert out[2].outcome is Outcome.UNSCHEDULABLE
    # both nodes are Unschedulable, but their pods have the pod's priority: nothing to evict
    assert out[2].message == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )


def test_the_cycle_counter_is_shared_by_profiles_and_rejected_pods() -> None:
    c = cluster(
        [node("n0")],
        profiles=[{"schedulerName": "default-scheduler"}, {"schedulerName": "b"}],
    )
    out, _ = c.schedule(
        [pod("p1"), pod("p2", scheduler_name="b"), pod("p3", scheduler_name="nobody")]
    )
    assert [p.cycle for p in out] == [1, 2, 3]
    assert out[2].outcome is Outcome.REJECTED and "nobody" in out[2].message


def test_a_retried_pod_is_not_assumed_twice() -> None:
    c = cluster([node("n0", cpu=1000), node("n1", cpu=1000)])
    first, _ = c.schedule([pod("p", cpu=600)])
    again, _ = c.schedule([pod("p", cpu=600)])
    assert again[0].node_name == first[0].node_name
    assert again[0].message == "already placed"
    assert int(c.snapshot.requested[:, 0].sum()) == 600


def test_nominated_pods_of_higher_priority_hold_their_node_in_the_first_pass() -> None:
    c = cluster([node("n0", cpu=1000), node("n1", cpu=1000)])
    c.update(SnapshotUpdate(upsert_pods=[
        pod("nom", cpu=800, priority=100, nominated_node_name="n0")
    ]))
    low, _ = c.schedule([pod("low", cpu=500, priority=10)])
    assert low[0].node_name == "n1"  # n0 is held for the nominated pod
    # an equal-or-higher priority pod does not see lower-priority nominations as held...
    c2 = cluster([node("n0", cpu=1000)])
    c2.update(SnapshotUpdate(upsert_pods=[
        pod("nom", cpu=800, priority=10, nominated_node_name="n0")
    ]))
    high, _ = c2.schedule([pod("high", cpu=500, priority=100)])
    assert high[0].node_name == "n0"


def test_a_node_rejected_only_with_nominated_pods_reports_the_first_pass_reason() -> None:
    c = cluster([node("n0", cpu=1000)])
    c.update(SnapshotUpdate(upsert_pods=[
        pod("nom", cpu=800, priority=100, nominated_node_name="n0")
    ]))
    out, _ = c.schedule([pod("low", cpu=500, priority=10)])
    # a nominated pod is no victim: only pods on the node are (there are none)
    assert out[0].message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


def test_a_pod_nominated_to_a_node_tries_it_first() -> None:
    c = cluster([node(f"n{i}") for i in range(20)])
    out, _ = c.schedule([pod("p", cpu=100, nominated_node_name="n13")])
    assert out[0].node_name == "n13" and out[0].nodes_evaluated == 1


def test_nodes_to_find_are_counted_from_the_nodes_prefilter_left() -> None:
    """kube's findNodesThatPassFilters: numFeasibleNodesToFind(len(narrowed nodes))."""
    from schedsvc.model import Affinity, NodeAffinity, NodeSelectorRequirement, NodeSelectorTerm

    c = cluster([node(f"n{i}") for i in range(300)], pct=50)
    terms = tuple(
        NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", (f"n{i}",)),))
        for i in range(250)
    )
    out, _ = c.schedule([pod("p", affinity=Affinity(node_affinity=NodeAffinity(required=terms)))])
    assert out[0].nodes_feasible == 125  # 250 * 50 / 100, not 300 * 50 / 100
    assert c.cursor.next_start_index == 125


def test_a_profile_without_score_plugins_wants_one_feasible_node() -> None:
    c = cluster(
        [node(f"n{i}") for i in range(10)],
        profiles=[{"plugins": {"score": {"disabled": [{"name": "*"}]}}}],
    )
    out, _ = c.schedule([pod(f"p{i}") for i in range(4)])
    assert [(p.node_name, p.nodes_evaluated) for p in out] == [
        ("n0", 1), ("n1", 1), ("n2", 1), ("n3", 1)
    ]


def test_a_node_failing_with_its_nominated_pods_reports_that_passs_reasons() -> None:
    c = cluster([node("n0", cpu=1000, memory=GiB)])
    c.update(SnapshotUpdate(upsert_pods=[
        pod("N", cpu=900, memory=None, priority=10, nominated_node_name="n0")
    ]))
    out, _ = c.schedule([pod("p", cpu=500, memory=2 * GiB)])
    # 2Gi > 1Gi allocatable: unresolvable, preemption cannot help
    assert out[0].message == (
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_an_empty_cluster_answers_as_kube_does() -> None:
    c = cluster([])
    out, _ = c.schedule([pod("p")])
    assert out[0].outcome is Outcome.UNSCHEDULABLE
    assert out[0].message == "no nodes available to schedule pods"
