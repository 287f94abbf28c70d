"""A failed cycle's answer reused for the equal pods after it (engine/simulate/
equivalent_failures.py): the same placements, cycle numbers included, as each pod's own
cycle on a twin fork, and the fork left in the same state (cursor, rng, batch bookkeeping),
so every later pod places the same; and the answer is reused only while nothing moved."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedsvc.engine.cluster import Cluster
from schedsvc.engine.schedule_one import Placement, schedule_one
from schedsvc.engine.simulate import equivalent_failures as ef
from schedsvc.engine.simulate.equivalent_failures import EquivalentFailures
from schedsvc.engine.simulate.fork import ClusterFork
from schedsvc.engine.simulate.on_fork import pending_with_shapes
from schedsvc.engine.simulate.schedule_step import schedule_pods
from schedsvc.model import (
    Affinity,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Outcome,
    Pod,
)
from tests.builders.clusters import cluster_of
from tests.builders.domain import node, pod
from tests.builders.fork_world import World, cluster_of_world, pending, pod_of, storage_for, worlds


def _state(f: ClusterFork) -> tuple[object, ...]:
    """What a cycle leaves the next one on the fork."""
    c = f.cursor
    lasts = tuple(
        (n, b.last.cycle, b.last.row, b.last.name, b.last.succeeded)
        for n, b in sorted(f.env.batch.items())
    )
    return (c.cycle, c.next_start_index, str(c.rng.bit_generator.state), lasts,
            f.snapshot.generation)


def _copies(base: list[Pod], picks: list[int]) -> list[Pod]:
    """Copies of base pods (uid and name changed), equal ones sharing a shape token."""
    out = [dataclasses.replace(base[k], uid=f"c{i}", name=f"c{i}") for i, k in enumerate(picks)]
    return pending_with_shapes(out)


@settings(max_examples=40, deadline=None)
@given(world=worlds(), batching=st.booleans(), data=st.data())
def test_answers_and_state_equal_each_pods_own_cycle(
    world: World, batching: bool, data: st.DataObject
) -> None:
    base = data.draw(pending("p", 4))
    base.append(pod_of("plain", "huge", "a", 10**6))  # fits nowhere: its copies are reused
    picks = data.draw(st.lists(st.integers(0, len(base) - 1), min_size=1, max_size=12))
    pods = _copies(base, [*picks, len(base) - 1, len(base) - 1])
    later = data.draw(pending("t", 6))
    extra = storage_for(base + later, world.nodes)
    a, b = cluster_of_world(world, batching, extra), cluster_of_world(world, batching, extra)
    with a.fork() as fa, b.fork() as fb:
        fa.set_preemption(False)
        fb.set_preemption(False)
        reused = EquivalentFailures(fa.env, fa.cursor)
        got = [reused.schedule_one(p) for p in pods]
        want = [schedule_one(fb.env, fb.cursor, p, False) for p in pods]
        assert got == want
        assert reused.answered >= 1  # the last huge copy at least
        assert _state(fa) == _state(fb)
        after = [schedule_one(fa.env, fa.cursor, p, False) for p in later]
        assert after == [schedule_one(fb.env, fb.cursor, p, False) for p in later]


def _full() -> Cluster:
    """Three 1000m nodes with 900m used each: a 500m pod fits none, a 50m pod fits."""
    nodes = [node(f"n{i}", cpu=1000) for i in range(3)]
    return cluster_of(nodes, [pod(f"b{i}", cpu=900, node_name=f"n{i}") for i in range(3)])


def _count_cycles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The uids of the pods that ran a cycle of their own, in order."""
    cycles: list[str] = []

    def counted(env: object, cursor: object, p: Pod, dry_run: bool) -> Placement:
        cycles.append(p.uid)
        return schedule_one(env, cursor, p, dry_run)  # type: ignore[arg-type]

    monkeypatch.setattr(ef, "schedule_one", counted)
    return cycles


def test_a_run_of_equal_pods_that_fit_nowhere_runs_one_cycle_until_a_pod_lands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cycles = _count_cycles(monkeypatch)
    big = [pod(f"big{i}", cpu=500) for i in range(6)]
    pods = pending_with_shapes([*big[:4], pod("small", cpu=50), *big[4:]])
    c = _full()
    with c.fork() as f:
        f.set_preemption(False)
        out = schedule_pods(f, pods, lambda: True)
    # a pod landing moves the snapshot: the next big pod runs its own cycle
    assert cycles == ["big0", "small", "big4"]
    msg = "0/3 nodes are available: 3 Insufficient cpu."
    assert [(p.pod_uid, p.outcome, p.message, p.reasons, p.cycle) for p in out if p.node_name == ""
            ] == [(f"big{i}", Outcome.UNSCHEDULABLE, msg, {"Insufficient cpu": 3}, cy)
                  for i, cy in ((0, 1), (1, 2), (2, 3), (3, 4), (4, 6), (5, 7))]
    assert (out[4].pod_uid, out[4].outcome, out[4].cycle) == ("small", Outcome.SCHEDULED, 5)


def test_no_reuse_with_preemption_on_or_for_a_pod_already_placed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cycles = _count_cycles(monkeypatch)
    pods = pending_with_shapes([pod(f"big{i}", cpu=500) for i in range(3)])
    c = _full()
    with c.fork() as f:  # preemption on, as a schedule step runs
        schedule_pods(f, pods, lambda: True)
        assert cycles == ["big0", "big1", "big2"]
        f.set_preemption(False)
        cycles.clear()
        # b0 is placed: its own uid makes its cycle "already placed", never a copy's answer
        out = schedule_pods(f, [pods[0], dataclasses.replace(pods[0], uid="b0", name="b0")],
                            lambda: True)
        assert cycles == ["big0", "b0"]
        assert (out[1].outcome, out[1].message) == (Outcome.SCHEDULED, "already placed")


def _narrowed(uid: str, node_name: str, cpu: int) -> Pod:
    """A pod whose PreFilter (NodeAffinity matchFields) leaves one node to visit."""
    term = NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In",
                                                                  (node_name,)),))
    return pod(uid, cpu=cpu, affinity=Affinity(node_affinity=NodeAffinity(required=(term,))))


def test_a_failed_cycle_that_moved_the_start_index_answers_for_nobody() -> None:
    """Each narrowed cycle visits one node of three, so the start index goes 0, 1, 2, 0, 1:
    the second a0 starts where the first did, on the same snapshot, but must move it again."""
    a = pending_with_shapes([_narrowed(f"a{i}", "n0", 500) for i in range(2)])
    x = pending_with_shapes([_narrowed(f"x{i}", "n1", 400) for i in range(2)])
    pods = [a[0], x[0], x[1], a[1]]
    c, twin = _full(), _full()
    with c.fork() as f, twin.fork() as g:
        f.set_preemption(False)
        g.set_preemption(False)
        out = schedule_pods(f, pods, lambda: True)
        assert out == [schedule_one(g.env, g.cursor, p, False) for p in pods]
        assert all(p.outcome is Outcome.UNSCHEDULABLE for p in out)
        assert f.cursor.next_start_index == 1
        assert _state(f) == _state(g)
