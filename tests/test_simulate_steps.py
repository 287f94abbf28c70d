"""Each simulation step's own rules, with answers worked out by hand: the names and labels of
added nodes, remove_nodes' errors and removed pods, fill's counts and stop, all_or_nothing's
commit and discard, explain on the steps' state, and a step type with no runner."""

from __future__ import annotations

import dataclasses

import pytest

from schedsvc.engine.cluster import Cluster
from schedsvc.engine.explain import Explanation
from schedsvc.engine.simulate import steps as sst
from schedsvc.engine.simulate.names import pod_copies
from schedsvc.engine.simulate.node_steps import HOSTNAME, add_nodes
from schedsvc.errors import InvalidArgument
from schedsvc.model import Outcome, Taint
from tests.builders.fork_world import World, cluster_of_world, node_of, pod_of

GO = lambda: True  # noqa: E731


def _cluster(nodes: int = 2, cpu: int = 1000) -> Cluster:
    return cluster_of_world(World(tuple(node_of(i, 2, cpu) for i in range(nodes)), (), ()), True)


def _two_nodes_one_pod() -> Cluster:
    world = World((node_of(0, 1, 1000), node_of(1, 1, 1000)),
                  (pod_of("plain", "b0", "a", 200, "n0"),), ())
    return cluster_of_world(world, False)


def test_added_nodes_are_named_after_the_template_skipping_names_held_labelled_as_a_group(
) -> None:
    c = _two_nodes_one_pod()
    tmpl = dataclasses.replace(
        node_of(0, 1, 2000), name="n",  # "n-0".."n-2" free; the template's hostname is n0
        taints=(Taint("ToBeDeletedByClusterAutoscaler", "1"), Taint("gpu", "yes"),
                Taint("DeletionCandidateOfClusterAutoscaler", "1", "PreferNoSchedule")),
        unschedulable=True,
    )
    add = sst.AddNodes(tmpl, 2)
    res = c.simulate([add, add, sst.RemoveNodes(("n-0",)), add], GO)
    names = [r.node_names for r in res.results if isinstance(r, sst.AddNodesResult)]
    # the second step skips n-0, n-1 (held); after n-0 is removed, its name is free again
    assert names == [("n-0", "n-1"), ("n-2", "n-3"), ("n-0", "n-4")]
    with c.fork() as f:
        add_nodes(f, add, GO)
        node = f.snapshot.nodes[f.snapshot.index["n-0"]]
    assert node is not None
    assert dict(node.labels) == {**tmpl.labels, HOSTNAME: "n-0"}
    assert node.taints == (Taint("gpu", "yes"),) and node.unschedulable
    assert node.allocatable == tmpl.allocatable
    assert set(c.snapshot.index) == {"n0", "n1"}


@pytest.mark.parametrize(
    ("names", "field", "why"),
    [
        (("n0", "nope"), "steps[1].remove_nodes.names[1]", "no such node here: 'nope'"),
        (("n1", "n1"), "steps[1].remove_nodes.names[1]", "named twice: 'n1'"),
    ],
    ids=["an unknown node", "a node named twice"],
)
def test_remove_nodes_refuses_a_name_it_cannot_remove_naming_the_field(
    names: tuple[str, ...], field: str, why: str
) -> None:
    c = _two_nodes_one_pod()
    with pytest.raises(InvalidArgument) as e:
        c.simulate([sst.AddNodes(node_of(5, 1, 1000), 1), sst.RemoveNodes(names)], GO)
    assert (e.value.field, e.value.description) == (field, why)
    assert not c.lock.locked()


def test_removed_nodes_take_their_pods_with_them_and_pods_then_fit_elsewhere_or_not() -> None:
    c = _two_nodes_one_pod()
    pods = (pod_of("plain", "x", "a", 900), pod_of("plain", "y", "a", 900))
    res = c.simulate([sst.RemoveNodes(("n0",)), sst.ScheduleStep(pods)], GO)
    assert res.results[0] == sst.RemoveNodesResult(("b0",))
    sched = res.results[1]
    assert isinstance(sched, sst.ScheduleStepResult)
    assert [(p.node_name, p.outcome) for p in sched.placements] == [
        ("n1", Outcome.SCHEDULED), ("", Outcome.UNSCHEDULABLE)]
    assert "b0" in c.snapshot.pods  # the cluster still holds it


def test_fill_counts_copies_per_node_and_stops_at_the_first_that_fits_nowhere() -> None:
    """Two 1000m nodes: 300m copies fit three to a node (900m), the seventh fits nowhere."""
    c = _cluster()
    res = c.simulate([sst.Fill(pod_of("plain", "web", "a", 300), 100)], GO)
    fill = res.results[0]
    assert isinstance(fill, sst.FillResult)
    assert (fill.placed, dict(fill.per_node)) == (6, {"n0": 3, "n1": 3})
    assert fill.stopped_by is not None
    assert (fill.stopped_by.pod_uid, fill.stopped_by.outcome, fill.stopped_by.message) == (
        "web~6", Outcome.UNSCHEDULABLE, "0/2 nodes are available: 2 Insufficient cpu.")


def test_fill_stops_at_max_pods_and_a_second_fill_skips_the_first_ones_uids() -> None:
    c = _cluster()
    tmpl = pod_of("plain", "web", "a", 100)
    res = c.simulate([sst.Fill(tmpl, 4), sst.Fill(tmpl, 3), sst.ExplainStep(tmpl)], GO)
    first, second = res.results[0], res.results[1]
    assert isinstance(first, sst.FillResult) and isinstance(second, sst.FillResult)
    assert (first.placed, first.stopped_by, sum(first.per_node.values())) == (4, None, 4)
    assert (second.placed, second.stopped_by) == (3, None)
    expl = res.results[2]
    assert isinstance(expl, Explanation)
    # 7 copies of 100m on 2000m: both nodes feasible still, and the cluster holds none
    assert all(n.feasible for n in expl.nodes) and not c.snapshot.pods


def test_fill_does_not_preempt_a_lower_priority_pod() -> None:
    world = World((node_of(0, 1, 1000),), (pod_of("plain", "low", "a", 800, "n0"),), ())
    c = cluster_of_world(world, False)
    res = c.simulate([sst.Fill(pod_of("urgent", "u", "b", 500), 5)], GO)
    fill = res.results[0]
    assert isinstance(fill, sst.FillResult) and fill.stopped_by is not None
    assert (fill.placed, fill.stopped_by.nominated_node_name, fill.stopped_by.victims) == (
        0, "", ())


def test_all_or_nothing_keeps_a_step_that_placed_every_pod_and_undoes_one_that_did_not(
) -> None:
    c = _cluster()
    ok = (pod_of("plain", "a0", "a", 600), pod_of("plain", "a1", "a", 600))
    bad = (pod_of("plain", "b0", "a", 300), pod_of("plain", "b1", "a", 900))
    res = c.simulate([sst.ScheduleStep(ok, True), sst.ScheduleStep(bad, True),
                      sst.Fill(pod_of("plain", "f", "a", 400), 10)], GO)
    kept, undone, fill = res.results
    assert isinstance(kept, sst.ScheduleStepResult) and kept.committed
    assert isinstance(undone, sst.ScheduleStepResult) and not undone.committed
    # b0 placed (shown), b1 fit nowhere: undone, so each node keeps 400m for one fill copy
    assert [p.outcome for p in undone.placements] == [Outcome.SCHEDULED, Outcome.UNSCHEDULABLE]
    assert isinstance(fill, sst.FillResult)
    assert (fill.placed, dict(fill.per_node)) == (2, {"n0": 1, "n1": 1})


def test_a_step_type_without_a_runner_is_refused_naming_the_step() -> None:
    @dataclasses.dataclass(frozen=True)
    class Wonder:
        pass

    c, calls = _cluster(), [0]

    def go_on() -> bool:
        calls[0] += 1
        return True

    with pytest.raises(InvalidArgument) as e:
        c.simulate([sst.Fill(pod_of("plain", "f", "a", 100), 1), Wonder()], go_on)  # type: ignore[list-item]
    assert e.value.field == "steps[1]" and "Wonder" in e.value.description
    assert calls == [0]  # refused before any step ran


@pytest.mark.parametrize("kind", ["plain", "spread", "anti", "ports", "claim", "urgent"])
def test_fill_copies_are_the_template_but_uid_and_name_and_share_its_shape(kind: str) -> None:
    """Copies 0, 1, 2 with uid web~0 held already: web~1..web~3 named web-1..web-3."""
    tmpl = dataclasses.replace(pod_of(kind, "web", "c", 300), shape=object())
    c = cluster_of_world(World((node_of(0, 1, 1000),), (pod_of("plain", "web~0", "a", 1, "n0"),),
                               ()), False)
    with c.fork() as f:
        copies = pod_copies(f.snapshot, tmpl)
        got = [next(copies) for _ in range(3)]
    assert [(p.uid, p.name) for p in got] == [("web~1", "web-1"), ("web~2", "web-2"),
                                              ("web~3", "web-3")]
    for p in got:
        assert p == dataclasses.replace(tmpl, uid=p.uid, name=p.name) and p.shape is tmpl.shape
