"""A pod group's members placed in rounds (engine/pod_group_rounds.py) decide as their own
cycles: on clusters big enough for sampled cycles (tests/builders/fill_world.py), members of
every template kind sharing a shape token, gangs that fit and gangs that do not, dry runs,
members of a second shape in the middle; with the rounds and member by member, the same
placements (node, score, cycle, batched, the group's result), the same snapshot afterwards,
the same cursor (cycle, start index, generator), the same answers for the pods sent next, and
the same attempts told to the observer. The rounds are shown to run, and to stop where a
member needs its own cycle."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.config import parse_config
from schedsvc.engine import pod_group_cycle
from schedsvc.engine.cycle_context import CycleRecord
from schedsvc.engine.observer import NullObserver
from schedsvc.engine.pod_group_result import GroupOutcome
from schedsvc.engine.schedule_one import Placement
from schedsvc.engine.scheduler import Cluster, Engine, SnapshotUpdate
from schedsvc.model import Outcome, Pod
from schedsvc.model_pod_group import PodGroup
from tests.builders.fill_world import KEPT_AN_HOUR, FillWorld, fill_worlds, node, pod, template
from tests.builders.group_cycles import NO_PREEMPTION, group_of, state_of
from tests.builders.pod_groups import GANG_FEATURES

_CHECKS = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


class _Records(NullObserver):
    """The attempts told to the observer, as what a metric or a span reads of them, and the
    extension points reported (in a cycle's record or outside any), counted."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []
        self.points: Counter[tuple[str, str]] = Counter()

    def cycle(self, rec: CycleRecord) -> None:
        self.seen.append((
            rec.profile, rec.pod_uid, rec.result, rec.outcome, rec.cycle, rec.batched,
            rec.nodes_evaluated, rec.nodes_feasible, [tuple(e) for e in rec.events],
            rec.hint[0] if rec.hint is not None else None,
        ))
        self.points.update((point, status) for point, status, _, _ in rec.points)

    def extension_point(self, profile: str, point: str, status: str, seconds: float) -> None:
        self.points[(point, status)] += 1


def _members(tmpl: Pod, group: str, count: int, token: object, prefix: str = "") -> list[Pod]:
    """`count` pods of `group`, equal to `tmpl` but for uid and name, sharing `token` as the
    server's conversion cache makes pods sent as equal messages share one."""
    p = prefix or group
    return [replace(tmpl, uid=f"{p}-{i}", name=f"{p}-{i}", pod_group=group, shape=token)
            for i in range(count)]


@dataclass(frozen=True)
class _Run:
    placements: list[Placement]
    state: dict[str, Any]
    cursor: tuple[Any, ...]
    after: list[Placement]  # the pods sent next
    records: list[tuple[Any, ...]]
    points: Counter[tuple[str, str]]


def _cluster(world: FillWorld, groups: list[PodGroup], observer: _Records,
             preemption: bool, **batching: Any) -> Cluster:
    """Batches kept for an hour unless `batching` says otherwise (KEPT_AN_HOUR: the rounds
    and the member-by-member cycles compare decisions, not timings)."""
    profile: dict[str, Any] = {
        **KEPT_AN_HOUR, "batching": {**KEPT_AN_HOUR["batching"], **batching},
    }
    if not preemption:
        profile["plugins"] = NO_PREEMPTION["profiles"][0]["plugins"]
    config: dict[str, Any] = {"profiles": [profile], "percentageOfNodesToScore": world.pct}
    engine = Engine(parse_config(config, features=GANG_FEATURES), seed=3,
                    batching_enabled=True, observer=observer)
    c = engine.cluster("t")
    c.update(SnapshotUpdate(upsert_nodes=list(world.nodes), upsert_pods=list(world.pods),
                            upsert_pod_groups=groups))
    return c


def _run(
    world: FillWorld, requests: list[list[Pod]], after: list[Pod], groups: list[PodGroup],
    rounds: bool, monkeypatch: pytest.MonkeyPatch, dry_run: bool = False,
    preemption: bool = False, **batching: Any,
) -> _Run:
    """The requests (each as the server runs it, Engine.order_pods first) on a fresh cluster,
    with the rounds or member by member; then `after`, a request scheduled for real."""
    obs = _Records()
    c = _cluster(world, groups, obs, preemption, **batching)
    with monkeypatch.context() as m:
        if not rounds:
            m.setattr(pod_group_cycle, "members_in_rounds", lambda *a: [])
        out: list[Placement] = []
        for req in requests:
            out += c.schedule(list(c.engine.order_pods(req)), dry_run)[0]
        state = state_of(c)
        cur = c.cursor
        cursor = (cur.cycle, cur.next_start_index, cur.rng.bit_generator.state)
        then = c.schedule(list(c.engine.order_pods(after)))[0]
    return _Run(out, state, cursor, then, obs.seen, obs.points)


def _agree(a: _Run, b: _Run) -> None:
    assert b.placements == a.placements
    assert b.cursor == a.cursor
    assert b.state == a.state
    assert b.after == a.after
    assert b.records == a.records
    assert b.points == a.points


@settings(max_examples=25, deadline=None, suppress_health_check=_CHECKS)
@given(world=fill_worlds(), size=st.integers(2, 400), extra=st.integers(-3, 40),
       split=st.integers(0, 30), preemption=st.booleans())
def test_members_in_rounds_place_as_their_own_cycles(
    world: FillWorld, size: int, extra: int, split: int, preemption: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A gang of `size` members (minCount size - extra when extra is negative, else size:
    a gang too big for the cluster fails whole), a member of another shape `split` members
    in when split < size, then a second gang of the template, then more members of the
    first."""
    tmpl = world.template
    token, other = object(), object()
    a = _members(tmpl, "ga", size, token)
    if split < size:
        odd = replace(tmpl, uid="ga-odd", name="ga-odd", pod_group="ga", shape=other,
                      containers=(replace(tmpl.containers[0], requests={
                          "cpu": 150, "memory": 100 << 20}),))
        a = a[:split] + [odd] + a[split:]
    min_a = len(a) if extra >= 0 else max(1, len(a) + extra)
    groups = [PodGroup("ga", min_count=min_a), PodGroup("gb", min_count=max(1, extra + 1))]
    b = _members(tmpl, "gb", max(extra + 1, 1), object())
    # then more members of the first gang, sent as its members were (one shape): their
    # group's run goes on from the batch state the first request left
    more = _members(tmpl, "ga", 5, token, prefix="ga-more")
    requests = [a, b]
    one = _run(world, requests, more, groups, False, monkeypatch, preemption=preemption)
    two = _run(world, requests, more, groups, True, monkeypatch, preemption=preemption)
    _agree(one, two)


@settings(max_examples=10, deadline=None, suppress_health_check=_CHECKS)
@given(world=fill_worlds(), size=st.integers(2, 300))
def test_a_dry_run_in_rounds_answers_as_member_by_member_and_changes_nothing(
    world: FillWorld, size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmpl = world.template
    a = _members(tmpl, "ga", size, object())
    groups = [PodGroup("ga", min_count=size)]
    plain = [replace(tmpl, uid=f"p{i}", name=f"p{i}") for i in range(3)]
    one = _run(world, [a], plain, groups, False, monkeypatch, dry_run=True)
    two = _run(world, [a], plain, groups, True, monkeypatch, dry_run=True)
    _agree(one, two)


def _world(n: int = 400, pct: int = 10, kind: str = "tolerating") -> FillWorld:
    nodes = tuple(node(i, 2000 if i % 2 else 4000, 8, i % 7 == 0, i % 5 == 0) for i in range(n))
    pods = tuple(pod(f"b{i}", 300, 256, f"n{i}") for i in range(0, n, 3))
    return FillWorld(nodes, pods, pct, template(kind, 200, 256), 0)


class _Counted:
    """members_in_rounds passed through, its placements counted per call."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.placed: list[int] = []
        real = pod_group_cycle.members_in_rounds

        def counted(*a: Any) -> list[Placement]:
            out = real(*a)
            self.placed.append(len(out))
            return out

        monkeypatch.setattr(pod_group_cycle, "members_in_rounds", counted)


@pytest.mark.parametrize("kind", ["tolerating", "plain"])
def test_a_big_gang_is_placed_mostly_in_rounds_and_agrees(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """400 members on 400 nodes of 10 % sampled cycles: after the first members (a full
    cycle, then the hints that complete the cache) every member comes from the rounds, read
    a lap at once (tolerating) or window by window (plain: TaintToleration normalized per
    window); the group is SCHEDULED as member by member."""
    world = _world(kind=kind)
    a = _members(world.template, "ga", 400, object())
    groups = [PodGroup("ga", min_count=400)]
    one = _run(world, [a], [], groups, False, monkeypatch)
    counted = _Counted(monkeypatch)
    c = _cluster(world, groups, _Records(), False)
    out = c.schedule(list(c.engine.order_pods(a)))[0]
    assert group_of(out, "default/ga").outcome is GroupOutcome.SCHEDULED
    assert out == one.placements
    assert sum(counted.placed) >= 390
    assert all(p.batched for p in out[5:])


def test_the_rounds_stop_at_a_member_of_another_shape_and_at_a_full_cluster(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """Members of two shapes alternating in runs of 50: each run after its first members
    comes from the rounds; a gang larger than the cluster's room stops the rounds where no
    node is left, its next member's own cycle fails, and the gang is taken back whole."""
    world = _world(n=200)
    t1, t2 = object(), object()
    big = replace(world.template, containers=(replace(
        world.template.containers[0], requests={"cpu": 900, "memory": 256 << 20}),))
    a: list[Pod] = []
    for k in range(4):
        a += _members(world.template if k % 2 == 0 else big, "ga", 50, t1 if k % 2 == 0 else t2,
                      prefix=f"ga{k}")
    groups = [PodGroup("ga", min_count=200), PodGroup("gb", min_count=10_000)]
    too_many = _members(big, "gb", 10_000, object())
    one = _run(world, [a, too_many], [], groups, False, monkeypatch)
    counted = _Counted(monkeypatch)
    two = _run(world, [a, too_many], [], groups, True, monkeypatch)
    _agree(one, two)
    assert group_of(two.placements, "default/ga").outcome is GroupOutcome.SCHEDULED
    failed = group_of(two.placements, "default/gb")
    assert failed.outcome is GroupOutcome.UNSCHEDULABLE
    assert not any(p.outcome is Outcome.SCHEDULED for p in two.placements[200:])
    assert sum(n > 0 for n in counted.placed) >= 5  # four runs of a, and gb's
    assert 0 < failed.evaluated < 10_000


@pytest.mark.parametrize("kind", ["tolerating", "plain"])
def test_with_rescoring_off_no_round_runs_and_members_get_their_full_cycles(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """batching.rescore false: a hint whose last node still fits flushes the state (kube's
    node_not_full), so the members go back to full cycles; the rounds never start."""
    world = _world(n=150, kind=kind)
    a = _members(world.template, "ga", 40, object())
    groups = [PodGroup("ga", min_count=40)]
    one = _run(world, [a], [], groups, False, monkeypatch, rescore=False)
    counted = _Counted(monkeypatch)
    two = _run(world, [a], [], groups, True, monkeypatch, rescore=False)
    _agree(one, two)
    assert not any(counted.placed)
    assert any(not p.batched for p in two.placements[2:])


def test_a_run_past_its_age_never_continues_in_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every batch's clock moves a second per read (maxBatchAge 500ms): each hint finds the
    cache expired and flushes it, every member runs a full cycle; the rounds, reading the
    age before they start, never place one and read the clock no more than the hints do."""
    world = _world(n=200)
    a = _members(world.template, "ga", 30, object())
    groups = [PodGroup("ga", min_count=30)]

    def ticking(c: Cluster) -> None:
        reads = iter(range(10**6))
        for b in c.batches.values():
            b.clock = lambda: float(next(reads))

    runs = []
    for rounds in (False, True):
        counted = _Counted(monkeypatch)
        c = _cluster(world, groups, _Records(), False, maxBatchAge="500ms")
        ticking(c)
        with monkeypatch.context() as m:
            if not rounds:
                m.setattr(pod_group_cycle, "members_in_rounds", lambda *a: [])
            out = c.schedule(list(c.engine.order_pods(a)))[0]
            runs.append((out, c.batches["default-scheduler"].clock()))
        assert not any(counted.placed)
    assert runs[1] == runs[0]
    assert not any(p.batched for p in runs[0][0])


def test_a_run_that_outlives_its_age_midway_stops_its_rounds_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The batches' clock jumps past maxBatchAge once the rounds have begun: the next round
    reads it and stops, the next member's own cycle finds the cache expired and runs a full
    cycle (batched False), and the run goes on in rounds from the cache that cycle keeps.
    Nodes, scores and cycles are those of member-by-member cycles under the same jump (which
    member first sees it depends on how often each path reads the clock: docs/differences.md)."""
    world = _world(n=300)
    a = _members(world.template, "ga", 200, object())
    groups = [PodGroup("ga", min_count=200)]

    def run(rounds: bool) -> list[Placement]:
        c = _cluster(world, groups, _Records(), False, maxBatchAge="500ms")
        reads = iter(range(10**6))
        for b in c.batches.values():
            b.clock = lambda: 0.0 if next(reads) < 12 else 100.0
        with monkeypatch.context() as m:
            if not rounds:
                m.setattr(pod_group_cycle, "members_in_rounds", lambda *a: [])
            return c.schedule(list(c.engine.order_pods(a)))[0]

    one, two = run(False), run(True)
    assert [(p.node_name, p.score, p.cycle) for p in two] == [
        (p.node_name, p.score, p.cycle) for p in one]
    full = [i for i, p in enumerate(two) if not p.batched]
    assert len(full) == 2 and full[0] == 0 and 5 < full[1] < 150  # the first, then the expiry
    assert all(p.batched for p in two[full[1] + 1:])


@pytest.mark.parametrize("kind", ["plain", "tolerating", "preferring"])
@pytest.mark.parametrize("n", [203, 230, 320])
def test_members_that_fill_their_nodes_report_as_their_hints(
    kind: str, n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each node takes one member (1500m of 2000m): a hint's recheck finds the pick before it
    full and scores nothing, so it reports no PreScore or Score (and keeps no PreScore);
    the rounds report per member exactly what its hint would, near two windows of nodes
    (where rounds start and soon stop) and well above."""
    nodes = tuple(node(i, 2000, 8, False, False) for i in range(n))
    world = FillWorld(nodes, (), 0, template(kind, 1500, 256), 0)
    a = _members(world.template, "ga", 60, object())
    more = _members(world.template, "ga", 5, a[0].shape, prefix="ga-more")
    groups = [PodGroup("ga", min_count=60)]
    one = _run(world, [a], more, groups, False, monkeypatch)
    counted = _Counted(monkeypatch)
    two = _run(world, [a], more, groups, True, monkeypatch)
    assert sum(counted.placed) > 0
    _agree(one, two)
