"""ForkSnapshot (framework/fork.py): a fork given a sequence of changes holds exactly what an
independent snapshot given the same changes holds (every column, map and its order, every
row's pod order, every index's tables), and its base is never written. Nested forks commit
as if the changes had been made to the parent, or are dropped leaving it as it was."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedsvc.engine.preemption.victim_table import VictimTable
from schedsvc.framework.affinity_index import AffinityIndex
from schedsvc.framework.fork import ForkSnapshot
from schedsvc.framework.pod_volumes import PodVolumeIndex
from schedsvc.framework.selector_counts import SelectorCounts
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import LabelSelector, Namespace
from tests.builders.fingerprint import snapshot_state
from tests.builders.fork_world import APPS, KINDS, World, cluster_of_world, node_of, pod_of, worlds

FORKABLE = ("SelectorCounts", "AffinityIndex", "PodVolumeIndex")

_op = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(KINDS), st.sampled_from(APPS), st.integers(0, 9)),
    st.tuples(st.just("move"), st.integers(0, 99), st.integers(0, 9)),
    st.tuples(st.just("remove"), st.integers(0, 99)),
    st.tuples(st.just("nominate"), st.sampled_from(APPS), st.integers(0, 9)),
    st.tuples(st.just("unnominate"), st.integers(0, 9)),
    st.tuples(st.just("node_add"), st.integers(0, 3)),
    st.tuples(st.just("node_change"), st.integers(0, 9), st.integers(0, 3)),
    st.tuples(st.just("node_remove"), st.integers(0, 9)),
    st.tuples(st.just("two_pass"), st.integers(0, 9), st.sampled_from(APPS)),
    st.tuples(st.just("preempt_shape"), st.integers(0, 9)),
    st.tuples(st.just("read"), st.sampled_from(APPS + ("tier",))),
    st.tuples(st.just("namespace"), st.sampled_from(APPS)),
    st.tuples(st.just("storage"), st.integers(0, 9)),
)
_ops = st.lists(_op, max_size=25)
_grow = st.booleans()


class _Uids:
    """Fresh uids shared by the two sides, so both name the same new pods."""

    def __init__(self, prefix: str) -> None:
        self.prefix, self.n = prefix, 0

    def next(self) -> str:
        self.n += 1
        return f"{self.prefix}{self.n}"


def _nodes(s: Snapshot) -> list[str]:
    return sorted(s.index)


def _read(s: Snapshot, key: str) -> None:
    """Reads that build lazily: a new selector's counts, a new conjunction's matches."""
    sel = LabelSelector(match_labels=(("tier", "x"),) if key == "tier" else (("app", key),))
    SelectorCounts.for_snapshot(s).counts("default", sel)
    AffinityIndex.for_snapshot(s).matching(frozenset({(frozenset({"default"}), sel)}))
    PodVolumeIndex.for_snapshot(s)


def _preempt_shape(s: Snapshot, row: int) -> None:
    """What general preemption does to a node (select_victims._general_one): its pods out,
    some back, all back, the row's first order and the generation restored."""
    on_row = s.pods_on_row[row]
    original = list(on_row)
    recs = list(on_row.values())
    gen = s.generation
    for rec in recs:
        s.remove_pod(rec.pod.uid)
    _read(s, "a")
    for rec in recs[::-1]:
        s.add_pod(rec.pod, rec.node_name, assumed=rec.assumed, info=rec.info)
    now = s.pods_on_row[row]
    s.pods_on_row[row] = {uid: now[uid] for uid in original}
    s.generation = gen


def _apply(s: Snapshot, op: tuple[Any, ...], uids: _Uids) -> None:  # noqa: C901 - one op each
    nodes = _nodes(s)
    kind = op[0]
    if kind == "add" and nodes:
        _, pk, app, ni = op
        s.add_pod(pod_of(pk, uids.next(), app, 200), nodes[ni % len(nodes)])
    elif kind == "move" and s.pods and nodes:
        uid = sorted(s.pods)[op[1] % len(s.pods)]
        s.add_pod(s.pods[uid].pod, nodes[op[2] % len(nodes)])
    elif kind == "remove" and s.pods:
        s.remove_pod(sorted(s.pods)[op[1] % len(s.pods)])
    elif kind == "nominate" and nodes:
        pod = pod_of("plain", uids.next(), op[1], 300, prio=50)
        s.add_nominated(dataclasses.replace(pod, nominated_node_name=nodes[op[2] % len(nodes)]))
    elif kind == "unnominate" and s.nominated:
        s.remove_pod(sorted(s.nominated)[op[1] % len(s.nominated)])
    elif kind == "node_add":
        count = 70 if op[1] == 3 else 1  # 70 rows past the initial 64: every column grows
        for i in range(count):
            s.upsert_node(node_of(1000 + uids.n * 100 + i, 3, 1500, i % 2 == 1, i % 3 == 0))
        uids.next()
    elif kind == "node_change" and nodes:
        name = nodes[op[1] % len(nodes)]
        old = s.node(s.index[name])
        zone = f"z{op[2]}"
        s.upsert_node(dataclasses.replace(
            old, labels={**old.labels, "topology.kubernetes.io/zone": zone, "new": zone},
            taints=() if old.taints else node_of(0, 1, 1, True).taints,
            images=() if old.images else node_of(0, 1, 1, False, True).images,
            unschedulable=not old.unschedulable,
        ))
    elif kind == "node_remove" and nodes:
        s.remove_node(nodes[op[1] % len(nodes)])
    elif kind == "two_pass" and s.nominated:
        rec = s.nominated[sorted(s.nominated)[op[1] % len(s.nominated)]]
        if rec.nominated_node_name in s.index:
            gen = s.generation
            t = s.add_temporary(rec, rec.nominated_node_name)
            _read(s, op[2])  # an index built while a temporary is counted
            s.remove_temporary(t)
            s.generation = gen
    elif kind == "preempt_shape" and nodes:
        _preempt_shape(s, s.index[nodes[op[1] % len(nodes)]])
    elif kind == "read":
        _read(s, op[1])
    elif kind == "namespace":
        s.upsert_namespace(Namespace(name=f"ns-{op[1]}", labels={"team": op[1]}))
    elif kind == "storage":
        st_ = s.storage
        keys = sorted(st_.pvcs)
        if keys:
            del st_.pvcs[keys[op[1] % len(keys)]]
        st_.derived[("test", op[1])] = op[1]
        st_.generation += 1


def _state(s: Snapshot) -> dict[str, Any]:
    """What a reader sees, the forkable indexes by kind (a fork leaves the others out)."""
    out = snapshot_state(s, derived=False)
    out["listeners"] = {li[0]: li for li in out["listeners"] if li[0] in FORKABLE}
    return out


def _trio(world: World) -> tuple[Snapshot, Snapshot, Snapshot]:
    """Three snapshots with one history, each with every index registered and read (none
    with its visiting order built: a fork must take that laziness as it is)."""
    out = []
    for _ in range(3):
        s = cluster_of_world(world, batching=False).snapshot
        _read(s, "a")
        VictimTable.for_snapshot(s)
        out.append(s)
    return out[0], out[1], out[2]


@settings(max_examples=60, deadline=None)
@given(world=worlds(), ops=_ops, child_ops=_ops, dropped_ops=_ops)
def test_a_fork_holds_what_a_snapshot_given_the_same_changes_holds(
    world: World, ops: list[tuple[Any, ...]], child_ops: list[tuple[Any, ...]],
    dropped_ops: list[tuple[Any, ...]],
) -> None:
    base, twin, untouched = _trio(world)
    fork = ForkSnapshot.of(base)
    uids, twin_uids = _Uids("f"), _Uids("f")
    for op in ops:
        _apply(fork, op, uids)
        _apply(twin, op, twin_uids)
    assert _state(fork) == _state(twin)
    # a child dropped leaves its parent as it was
    parent_state = _state(fork)
    dropped = fork.fork()
    for op in dropped_ops:
        _apply(dropped, op, _Uids("d"))
    dropped.discard()
    assert _state(fork) == parent_state
    # a child committed: as if its changes had been made to the parent
    child = fork.fork()
    for op in child_ops:
        _apply(child, op, uids)
        _apply(twin, op, twin_uids)
    assert _state(child) == _state(twin)
    child.commit()
    assert _state(fork) == _state(twin)
    # the parent goes on as the twin does after the commit
    for op in ops[:5]:
        _apply(fork, op, uids)
        _apply(twin, op, twin_uids)
    assert _state(fork) == _state(twin)
    assert snapshot_state(base) == snapshot_state(untouched)  # the base was never written


def test_a_fork_copies_only_what_it_writes() -> None:
    world = World(tuple(node_of(i, 2, 2000) for i in range(4)), (), ())
    base = cluster_of_world(world, batching=False).snapshot
    _read(base, "a")
    fork = ForkSnapshot.of(base)
    assert fork.allocatable is base.allocatable and fork.labels is base.labels
    fork.add_pod(pod_of("plain", "x", "a", 200), "n1")
    assert fork.allocatable is base.allocatable and fork.alive is base.alive
    assert fork.nonzero_requested is not base.nonzero_requested
    assert fork.pods_on_row[0] is base.pods_on_row[0]
    assert fork.pods_on_row[1] is not base.pods_on_row[1]
    counts = SelectorCounts.for_snapshot(fork)
    sel = LabelSelector(match_labels=(("app", "a"),))
    assert counts.counts("default", sel)[1] == 1
    assert SelectorCounts.for_snapshot(base).counts("default", sel)[1] == 0


def test_a_fork_commits_only_into_a_fork() -> None:
    base = cluster_of_world(World((node_of(0, 1, 1000),), (), ()), batching=False).snapshot
    with pytest.raises(TypeError):
        ForkSnapshot.of(base).commit()
