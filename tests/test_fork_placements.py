"""ClusterFork and Cluster.fork (engine/simulate/fork.py): the unmodified cycle run on a fork
places pods exactly as the cluster's real Schedule would (batching on and off, preemption,
claims of a WaitForFirstConsumer class), and the cluster is left exactly as it was: its
next real Schedule equals that of a cluster that never forked."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedsvc.engine.cluster import Cluster
from schedsvc.engine.explain import explain
from schedsvc.engine.schedule_one import Placement, schedule_one
from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.engine.simulate import ClusterFork
from schedsvc.engine.update_apply import apply_update
from schedsvc.engine.update_check import validate_update
from schedsvc.errors import FailedPrecondition
from schedsvc.model import Pod
from tests.builders.fingerprint import fingerprint
from tests.builders.fork_world import (
    World,
    cluster_of_world,
    node_of,
    pending,
    pod_of,
    storage_for,
    worlds,
)


def _key(p: Placement) -> tuple[object, ...]:
    return (
        p.pod_uid, p.node_name, p.outcome, p.nominated_node_name, p.message, p.reasons,
        tuple(v.uid for v in p.victims), p.volume_bindings,
    )


def _run(f: ClusterFork, pods: Sequence[Pod]) -> list[tuple[object, ...]]:
    return [_key(schedule_one(f.env, f.cursor, p, False)) for p in pods]


def _real(c: Cluster, pods: Sequence[Pod]) -> list[tuple[object, ...]]:
    return [_key(p) for p in c.schedule(pods)[0]]


def _trio(world: World, pods: list[Pod], batching: bool, history: list[Pod]) -> list[Cluster]:
    """Three clusters with one history: the world, its claims and PVs, `history` scheduled."""
    out = []
    for _ in range(3):
        c = cluster_of_world(world, batching, storage_for(history + pods, world.nodes))
        c.schedule(history)
        out.append(c)
    return out


@settings(max_examples=25, deadline=None)
@given(world=worlds(), batching=st.booleans(), data=st.data())
def test_a_fork_places_as_the_cluster_would_and_leaves_it_as_it_was(
    world: World, batching: bool, data: st.DataObject
) -> None:
    history = data.draw(pending("h", 6))
    pods = data.draw(pending("s"))
    later = data.draw(pending("t", 6))
    a, b, c = _trio(world, pods + later, batching, history)
    before = fingerprint(a)
    with a.fork() as f:
        simulated = _run(f, pods)
    assert simulated == _real(b, pods)
    assert fingerprint(a) == before
    assert _real(a, later) == _real(c, later)  # as if the simulation had never run


@settings(max_examples=20, deadline=None)
@given(world=worlds(), batching=st.booleans(), data=st.data())
def test_a_child_committed_is_its_parent_having_placed_the_pods(
    world: World, batching: bool, data: st.DataObject
) -> None:
    first = data.draw(pending("s"))
    second = data.draw(pending("t"))
    dropped = data.draw(pending("d"))
    a, b, c = _trio(world, first + second + dropped, batching, [])
    before = fingerprint(a)
    with a.fork() as f:
        gone = f.child()
        _run(gone, dropped)
        gone.discard()
        child = f.child()
        placed = _run(child, first)
        child.commit()
        placed += _run(f, second)
    assert placed == _real(b, first + second)
    assert fingerprint(a) == before
    assert _real(a, second) == _real(c, second)


def _full_node_world() -> World:
    node = node_of(0, 1, 1000)
    low = pod_of("plain", "low", "a", 800, "n0", prio=0)
    return World((node,), (low,), ())


def test_preemption_off_leaves_an_unschedulable_pod_unnominated() -> None:
    """A pod of priority 100 that fits only by evicting `low`: with preemption it is
    nominated to n0 with `low` its victim, as the cluster's own Schedule does; with it off
    no PostFilter runs: kube's FitError message without its preemption part."""
    urgent = pod_of("urgent", "u", "b", 500)
    a, b = cluster_of_world(_full_node_world(), False), cluster_of_world(_full_node_world(), False)
    with a.fork() as f:
        off = f.child()
        off.set_preemption(False)
        p = schedule_one(off.env, off.cursor, urgent, False)
        assert (p.node_name, p.nominated_node_name, p.victims) == ("", "", ())
        assert p.message == "0/1 nodes are available: 1 Insufficient cpu."
        assert "u" not in off.snapshot.nominated
        off.discard()
        on = schedule_one(f.env, f.cursor, urgent, False)
    assert (on.nominated_node_name, [v.uid for v in on.victims]) == ("n0", ["low"])
    assert _key(on) == _real(b, [urgent])[0]


def test_a_fork_is_refused_like_schedule_on_a_damaged_or_staged_cluster() -> None:
    c = cluster_of_world(_full_node_world(), False)
    c.damaged = "an update ran out of memory halfway through changing it"
    with pytest.raises(FailedPrecondition, match="incomplete"):
        with c.fork():
            pass
    c.damaged = ""
    c.update(SnapshotUpdate(replace=True, stage=True, upsert_nodes=[node_of(1, 1, 1000)]))
    with pytest.raises(FailedPrecondition):
        with c.fork():
            pass
    assert not c.lock.locked()


def test_an_error_midway_leaves_the_cluster_whole_and_unlocked() -> None:
    """A MemoryError (or any error) inside a simulation: nothing to undo, no damage mark."""
    c = cluster_of_world(_full_node_world(), True)
    before = fingerprint(c)
    with pytest.raises(MemoryError):
        with c.fork() as f:
            _run(f, [pod_of("plain", f"x{i}", "a", 100) for i in range(2)])
            f.snapshot.upsert_node(node_of(5, 1, 4000))
            raise MemoryError
    assert fingerprint(c) == before and not c.lock.locked() and c.damaged == ""


@pytest.mark.parametrize("batching", [False, True], ids=["batching off", "batching on"])
def test_preemption_on_a_fork_nominates_and_picks_victims_as_the_cluster_does(
    batching: bool,
) -> None:
    """Full nodes of low-priority pods and a run of urgent ones: each urgent pod preempts
    (nominations, victims, the two-pass filter of later pods) exactly as on the cluster."""
    nodes = tuple(node_of(i, 2, 1000) for i in range(4))
    low = tuple(
        pod_of("spread" if k % 2 else "plain", f"low{i}-{k}", "a", 400, f"n{i}", prio=k)
        for i in range(4) for k in range(2)
    )
    world = World(nodes, low, ())
    history = [pod_of("urgent", f"h{j}", "b", 500) for j in range(2)]
    pods = [pod_of("urgent", f"u{j}", "b", 500) for j in range(4)]
    pods += [pod_of("plain", f"p{j}", "c", 200) for j in range(3)]
    # the history preempts on every cluster: the base holds nominations and its VictimTable
    a, b, c = _trio(world, pods, batching, history)
    assert len(a.snapshot.nominated) == 2
    before = fingerprint(a)
    with a.fork() as f:
        simulated = _run(f, pods)
    real = _real(b, pods)
    assert simulated == real
    assert sum(1 for k in real if k[3]) >= 2  # urgent pods were nominated
    assert fingerprint(a) == before
    assert _real(a, pods) == _real(c, pods)


@pytest.mark.parametrize("batching", [False, True], ids=["batching off", "batching on"])
def test_nodes_changed_on_a_fork_place_as_an_update_of_the_cluster_would(
    batching: bool,
) -> None:
    """UpdateSnapshot's own code on a fork (validate_update, apply_update, the batch states
    told, the env's sampling refreshed), then pods: as the cluster's update then Schedule."""
    world = World(tuple(node_of(i, 3, 1000) for i in range(5)), (), ())
    upd = SnapshotUpdate(
        upsert_nodes=[node_of(i, 2, 2000, tainted=i == 6) for i in range(4, 9)],
        remove_nodes=["n0"],
    )
    pods = [pod_of("spread" if j % 2 else "anti", f"s{j}", "abc"[j % 3], 300) for j in range(12)]
    a, b, c = _trio(world, pods, batching, [pod_of("plain", "h", "a", 300)])
    before = fingerprint(a)
    with a.fork() as f:
        infos = validate_update(f.snapshot, upd)
        dirty, rows = apply_update(f.snapshot, upd, infos)
        f.batches.updated(upd, dirty, rows)
        f.refresh_env()
        simulated = _run(f, pods)
    b.update(upd)
    assert simulated == _real(b, pods)
    assert fingerprint(a) == before
    assert _real(a, pods) == _real(c, pods)


def test_explain_on_a_fork_reads_the_fork_as_explain_on_the_cluster_reads_it() -> None:
    """Explain after pods placed on a fork: every node's verdict and the preemption
    candidates are those of the cluster that really placed them."""
    world = World(tuple(node_of(i, 2, 1000) for i in range(3)), (), ())
    pods = [pod_of("anti" if j % 2 else "plain", f"s{j}", "a", 400, prio=0) for j in range(5)]
    probe = pod_of("urgent", "probe", "a", 700)
    a, b, _ = _trio(world, pods, False, [])
    with a.fork() as f:
        _run(f, pods)
        simulated = explain(f.env, probe)
    b.schedule(pods)
    assert simulated == b.explain(probe)
    assert simulated.nominated_node  # the probe fits nowhere without preempting
