"""The drain step (engine/simulate/drain.py): the autoscaler's scale-down simulation on a fork
with kube's cycle for the re-placement. Its placements are those of the real calls on a twin
cluster (an update that taints the node and removes its pods, Schedule in the drain order,
an update that removes the node); budgets are spent across the step's nodes; the ghost node
keeps its topology domain; the cluster is never changed."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedsvc.engine.cluster import Cluster
from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.engine.simulate.drain import TO_BE_DELETED_TAINT, drain
from schedsvc.engine.simulate.steps import (
    BlockingPodReason,
    Drain,
    DrainResult,
    UnremovableReason,
)
from schedsvc.engine.simulate.stopped import Stopped
from schedsvc.model import (
    LabelSelector,
    Outcome,
    Pod,
    PodDisruption,
    PodDisruptionBudget,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from tests.builders.clusters import cluster_of
from tests.builders.domain import node, pod
from tests.builders.fingerprint import fingerprint

RS = PodDisruption(controller_kind="ReplicaSet")
DS = PodDisruption(controller_kind="DaemonSet")
ZONE = "topology.kubernetes.io/zone"


def _rs(uid: str, on: str, cpu: int = 100, app: str = "a", prio: int = 0, **kw: object) -> Pod:
    return pod(uid, cpu=cpu, node_name=on, labels={"app": app}, priority=prio, disruption=RS, **kw)


def _run(c: Cluster, names: tuple[str, ...]) -> DrainResult:
    before = fingerprint(c)
    with c.fork() as f:
        res = drain(f, Drain(names), lambda: True)
    assert fingerprint(c) == before
    return res


def test_budgets_are_spent_across_the_steps_nodes() -> None:
    nodes = [node(f"n{i}", cpu=2000) for i in range(4)]
    pods = [_rs("a0", "n0"), _rs("a1", "n0"), _rs("a2", "n1"), _rs("b0", "n1", app="b")]
    pdb = PodDisruptionBudget("a", selector=LabelSelector(match_labels=(("app", "a"),)),
                              disruptions_allowed=2)
    c = cluster_of(nodes, pods)
    c.update(SnapshotUpdate(upsert_pod_disruption_budgets=[pdb]))
    both = _run(c, ("n0", "n1"))
    assert [v.drainable for v in both.nodes] == [True, False]
    blocked = both.nodes[1]
    assert blocked.reason is UnremovableReason.BLOCKED_BY_POD
    assert blocked.blocking_reason is BlockingPodReason.NOT_ENOUGH_PDB
    assert blocked.blocking_pod is not None and blocked.blocking_pod.uid == "a2"
    assert blocked.message == "not enough pod disruption budget to move default/a2"
    alone = _run(c, ("n1",))  # the budget was only spent inside the other simulation
    assert alone.nodes[0].drainable


def test_the_ghost_node_keeps_its_spread_domain() -> None:
    # n0 (z0) holds s0, n1 (z1) holds s1; with maxSkew 1 on zones, s0 moved to z1 makes
    # z1=2 against the ghost's z0=0: skew 2. Without the ghost (node gone first) it would fit.
    sel = LabelSelector(match_labels=(("app", "s"),))
    tsc = (TopologySpreadConstraint(1, ZONE, "DoNotSchedule", sel),)
    nodes = [node("n0", labels={ZONE: "z0"}), node("n1", labels={ZONE: "z1"})]
    pods = [_rs(f"s{i}", f"n{i}", app="s", topology_spread_constraints=tsc) for i in range(2)]
    v = _run(cluster_of(nodes, pods), ("n0",)).nodes[0]
    assert (v.drainable, v.reason) == (False, UnremovableReason.NO_PLACE_TO_MOVE_PODS)
    assert v.blocking_pod is not None and v.blocking_pod.uid == "s0"
    assert v.reasons == {
        "node(s) didn't match pod topology spread constraints": 1,
        "node(s) had untolerated taint(s)": 1,
    }
    twin = cluster_of(nodes, pods)
    twin.update(SnapshotUpdate(remove_nodes=["n0"]))
    placed, _ = twin.schedule([replace(pods[0], node_name="")])
    assert placed[0].node_name == "n1"  # the domain is what blocks, not the room


def test_a_pod_moved_by_an_earlier_node_moves_again_with_its_equals() -> None:
    """a0 leaves n0 for n1 (the least allocated: 1000m of 2000m used, n2 1200m, n3 1100m);
    draining n1 then moves a1, a0 (equal pods together, though a0 came with the shape token
    of n0's drain and a1 with none) and b1. By the least allocated node that fits: a1 to n3
    (1100m < 1200m), a0 to n2 (1200m < 1600m), b1 to n3 (1600m < 1700m). Taken in node order
    instead (a1, b1, a0), b1 would go to n2. The twin's real calls agree."""
    nodes = [node(f"n{i}", cpu=2000) for i in range(4)]
    pods = [_rs("a0", "n0", 500), _rs("a1", "n1", 500), _rs("b1", "n1", app="b"),
            _rs("f2", "n2", 1200, app="x"), _rs("f3", "n3", 1100, app="x")]
    first, second = _run(cluster_of(nodes, pods), ("n0", "n1")).nodes
    assert [(m.pod_uid, m.node_name) for m in first.moved] == [("a0", "n1")]
    assert [(m.pod_uid, m.node_name) for m in second.moved] == [
        ("a1", "n3"), ("a0", "n2"), ("b1", "n3"),
    ]
    twin, taint = cluster_of(nodes, pods), Taint(TO_BE_DELETED_TAINT, "1", "NoSchedule")
    for name, moving in (("n0", [pods[0]]), ("n1", [pods[1], pods[0], pods[2]])):
        ghost = replace(nodes[int(name[1])], taints=(taint,))
        twin.update(SnapshotUpdate(upsert_nodes=[ghost], remove_pods=[p.uid for p in moving]))
        real, _ = twin.schedule([replace(p, node_name="") for p in moving])
        twin.update(SnapshotUpdate(remove_nodes=[name]))
    assert [(p.pod_uid, p.node_name) for p in real] == [
        (m.pod_uid, m.node_name) for m in second.moved
    ]


def test_replicas_whose_labels_came_in_another_order_move_together() -> None:
    """A client may send a map's entries in any order (Go's protobuf does): a1 is a0's equal
    though its labels came hash first. Drain order a0, a1, b0; each to the least allocated
    node that fits: a0 (500m) to n1 (1100m < 1200m), a1 to n2 (1200m < 1600m), b0 (100m) to
    n1 (1600m < 1700m). Taken as a0, b0, a1, b0 would go to n2. The twin's real calls
    agree."""
    nodes = [node(f"n{i}", cpu=2000) for i in range(3)]
    a0 = pod("a0", cpu=500, node_name="n0", labels={"app": "a", "hash": "h1"}, disruption=RS)
    b0 = pod("b0", node_name="n0", labels={"app": "b", "hash": "h2"}, disruption=RS)
    a1 = pod("a1", cpu=500, node_name="n0", labels={"hash": "h1", "app": "a"}, disruption=RS)
    pods = [a0, b0, a1, _rs("f1", "n1", 1100, app="x"), _rs("f2", "n2", 1200, app="x")]
    v = _run(cluster_of(nodes, pods), ("n0",)).nodes[0]
    assert [(m.pod_uid, m.node_name) for m in v.moved] == [
        ("a0", "n1"), ("a1", "n2"), ("b0", "n1"),
    ]
    twin = cluster_of(nodes, pods)
    ghost = replace(nodes[0], taints=(Taint(TO_BE_DELETED_TAINT, "1", "NoSchedule"),))
    twin.update(SnapshotUpdate(upsert_nodes=[ghost], remove_pods=["a0", "b0", "a1"]))
    real, _ = twin.schedule([replace(p, node_name="") for p in (a0, a1, b0)])
    assert [(p.pod_uid, p.node_name) for p in real] == [(m.pod_uid, m.node_name) for m in v.moved]


def test_an_unknown_node_has_no_node_info_and_the_others_are_drained() -> None:
    c = cluster_of([node("n0"), node("n1")], [_rs("p", "n0")])
    res = _run(c, ("gone", "n0"))
    assert [(v.node_name, v.drainable, v.reason) for v in res.nodes] == [
        ("gone", False, UnremovableReason.NO_NODE_INFO), ("n0", True, None),
    ]
    assert [(m.pod_uid, m.node_name) for m in res.nodes[1].moved] == [("p", "n1")]


def test_a_drained_node_is_gone_for_the_next_node_of_the_step() -> None:
    c = cluster_of([node("n0"), node("n1")], [_rs("p", "n0"), _rs("q", "n1")])
    res = _run(c, ("n0", "n1"))
    assert res.nodes[0].drainable
    assert res.nodes[1].reason is UnremovableReason.NO_PLACE_TO_MOVE_PODS
    assert res.nodes[1].message == "0/1 nodes are available: 1 node(s) had untolerated taint(s)."


def test_a_blocking_pod_is_named_and_daemonset_pods_go_with_the_node() -> None:
    ds = pod("ds", node_name="n0", disruption=DS)
    c = cluster_of([node("n0"), node("n1")], [ds, _rs("p", "n0")])
    v = _run(c, ("n0",)).nodes[0]
    assert (v.drainable, v.daemonset_pod_uids, [m.pod_uid for m in v.moved]) == (
        True, ("ds",), ["p"],
    )
    bare = pod("bare", node_name="n1", namespace="web")
    c2 = cluster_of([node("n0"), node("n1")], [_rs("p", "n1"), bare])
    b = _run(c2, ("n1",)).nodes[0]
    assert (b.reason, b.blocking_reason, b.message) == (
        UnremovableReason.BLOCKED_BY_POD, BlockingPodReason.NOT_REPLICATED,
        "web/bare is not replicated",
    )
    assert b.blocking_pod is not None and (b.blocking_pod.uid, b.blocking_pod.namespace) == (
        "bare", "web",
    )


def _drain_order(pods: list[Pod]) -> list[Pod]:
    """Priority descending, then equal pods (here: same cpu and app) by first appearance."""
    first: dict[tuple[int, str, int], int] = {}
    for i, p in enumerate(pods):
        first.setdefault(_same(p), i)
    return sorted(pods, key=lambda p: (-p.priority, first[_same(p)]))


def _same(p: Pod) -> tuple[int, str, int]:
    return (p.containers[0].requests["cpu"], p.labels["app"], p.priority)


_on_node = st.lists(
    st.tuples(st.sampled_from([100, 300, 700]), st.sampled_from("ab"), st.sampled_from([0, 5])),
    min_size=1, max_size=8,
)


@settings(max_examples=25, deadline=None)
@given(_on_node, st.integers(2, 5), st.lists(st.integers(0, 1500), min_size=5, max_size=5),
       st.booleans())
def test_a_drain_places_as_the_real_calls_on_a_twin(
    drained: list[tuple[int, str, int]], n: int, used: list[int], batching: bool,
) -> None:
    soft = TopologySpreadConstraint(1, ZONE, "ScheduleAnyway",
                                    LabelSelector(match_labels=(("app", "a"),)))
    nodes = [node(f"n{i}", cpu=2000, labels={ZONE: f"z{i % 2}"}) for i in range(n)]
    pods = [_rs(f"d{i}", "n0", cpu, app, prio, topology_spread_constraints=(soft,))
            for i, (cpu, app, prio) in enumerate(drained)]
    pods += [_rs(f"o{i}", f"n{i}", used[i]) for i in range(1, n) if used[i]]
    a = cluster_of(nodes, pods, batching=batching)
    twin = cluster_of(nodes, pods, batching=batching)
    v = _run(a, ("n0",)).nodes[0]
    moving = [p for p in pods if p.node_name == "n0"]
    ghost = replace(nodes[0], taints=(Taint(TO_BE_DELETED_TAINT, "1", "NoSchedule"),))
    twin.update(SnapshotUpdate(upsert_nodes=[ghost], remove_pods=[p.uid for p in moving]))
    real, _ = twin.schedule([replace(p, node_name="") for p in _drain_order(moving)])
    first_fail = next((i for i, p in enumerate(real) if p.outcome is not Outcome.SCHEDULED), None)
    if first_fail is None:
        assert v.drainable
        assert [(m.pod_uid, m.node_name) for m in v.moved] == [
            (p.pod_uid, p.node_name) for p in real
        ]
    else:
        assert v.reason is UnremovableReason.NO_PLACE_TO_MOVE_PODS
        assert v.blocking_pod is not None and v.blocking_pod.uid == real[first_fail].pod_uid
        # the twin's Schedule then runs PostFilter, which a drain does not (no preemption)
        assert v.message == real[first_fail].message.split(" preemption: ")[0]


@pytest.mark.parametrize("batching", [False, True])
def test_a_stop_midway_raises_stopped_and_leaves_the_cluster(batching: bool) -> None:
    c = cluster_of([node("n0"), node("n1")], [_rs(f"p{i}", "n0") for i in range(5)],
                   batching=batching)
    before = fingerprint(c)
    asked = iter([True, True, True, False])
    with c.fork() as f, pytest.raises(Stopped):
        drain(f, Drain(("n0",)), lambda: next(asked))
    assert fingerprint(c) == before


@pytest.mark.parametrize(("n1_used", "expect"), [(900, None), (0, "n1")],
                         ids=["no room elsewhere: not drainable", "room on n1: moves there"])
def test_a_pod_tolerating_every_taint_never_moves_back_to_its_own_node(
    n1_used: int, expect: str | None
) -> None:
    """A ReplicaSet pod with an Exists toleration without a key tolerates the ghost's taint;
    the autoscaler still never counts the removed node as a place (isCandidateNode), so the pod
    needs room elsewhere: none on n1 (1 CPU, 900m used) -> NoPlaceToMovePods naming it."""
    rs = PodDisruption(controller_kind="ReplicaSet")
    pods = [pod("p", cpu=500, node_name="n0", disruption=rs,
                tolerations=(Toleration(operator="Exists"),))]
    if n1_used:
        pods.append(pod("fill", cpu=n1_used, node_name="n1", disruption=rs))
    c = cluster_of([node("n0", cpu=4000), node("n1", cpu=1000)], pods)
    v = c.simulate([Drain(("n0",))], lambda: True).results[0]
    assert isinstance(v, DrainResult)
    verdict = v.nodes[0]
    if expect is None:
        assert not verdict.drainable
        assert verdict.reason is UnremovableReason.NO_PLACE_TO_MOVE_PODS
        assert verdict.blocking_pod is not None and verdict.blocking_pod.uid == "p"
    else:
        assert verdict.drainable
        assert [(m.pod_uid, m.node_name) for m in verdict.moved] == [("p", expect)]
