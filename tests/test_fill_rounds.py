"""Issue 27's fill in rounds (engine/simulate/fill_run.py) places as the copies' own cycles:
on clusters big enough for sampled cycles, every template kind, each percentage of nodes to
score, the same counts per node in the same order, the same copy stopping the fill, the same
fork afterwards (pod records, indexes, columns) and the same cursor (cycle, start index, the
generator's state). Each path of the rounds (a lap at once or window by window; rescoring by
usage or per round) is shown to run."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.engine import run_rounds as rounds_module
from schedsvc.engine.batching import window_lap
from schedsvc.engine.schedule_one import Placement
from schedsvc.engine.simulate import fill as fill_module
from schedsvc.engine.simulate.fill import fill
from schedsvc.engine.simulate.steps import (
    Drain,
    DrainResult,
    Fill,
    FillResult,
    ScheduleStep,
    ScheduleStepResult,
)
from schedsvc.engine.simulate.stopped import Stopped
from schedsvc.framework.fork import ForkSnapshot
from tests.builders.clusters import cluster_of
from tests.builders.fill_world import FillWorld, fill_worlds, filled, node, pod, template

_CHECKS = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


@settings(max_examples=30, deadline=None, suppress_health_check=_CHECKS)
@given(world=fill_worlds(), keep=st.booleans())
def test_a_fill_in_rounds_places_as_its_copies_cycles_and_leaves_the_same_fork(
    world: FillWorld, keep: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    one_by_one = filled(world, False, keep, monkeypatch)
    rounds = filled(world, True, keep, monkeypatch)
    a, b = one_by_one.result, rounds.result
    assert (b.placed, list(b.per_node.items())) == (a.placed, list(a.per_node.items()))
    assert b.stopped_by == a.stopped_by
    assert rounds.cursor == one_by_one.cursor
    assert rounds.state == one_by_one.state


class _Spy:
    """Counts the calls of module functions, passing them through."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: dict[str, int] = {}
        self.results: dict[str, list[Any]] = {}
        self._mp = monkeypatch

    def on(self, module: Any, name: str) -> None:
        real = getattr(module, name)

        def spied(*a: Any, **k: Any) -> Any:
            out = real(*a, **k)
            self.calls[name] = self.calls.get(name, 0) + 1
            self.results.setdefault(name, []).append(out)
            return out

        self._mp.setattr(module, name, spied)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Spy]:
    s = _Spy(monkeypatch)
    for name in ("lap_picks", "_window_picks", "recheck_by_usage", "recheck_taken"):
        s.on(rounds_module, name)
    yield s


def _world(kind: str, n: int = 400, max_pods: int = 2500, pct: int = 10) -> FillWorld:
    """n nodes of two sizes, a third holding a pod, some tainted softly (not tolerated by
    most templates: TaintToleration's scores then differ per node)."""
    nodes = tuple(node(i, 2000 if i % 2 else 4000, 8, i % 7 == 0, i % 5 == 0) for i in range(n))
    pods = tuple(pod(f"b{i}", 300, 256, f"n{i}") for i in range(0, n, 3))
    return FillWorld(nodes, pods, pct, template(kind, 200, 256), max_pods)


@pytest.mark.parametrize("keep", [True, False], ids=["kept", "last step"])
def test_a_lap_at_once_with_rescoring_by_usage_runs_and_agrees(
    spy: _Spy, keep: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tolerating the soft taint, all scores are per row (nothing normalized per window): a
    lap is read at once, rescoring goes by usage; 2500 copies on 400 nodes reach the last."""
    world = _world("tolerating")
    a = filled(world, False, keep, monkeypatch)
    b = filled(world, True, keep, spy._mp)
    assert (b.result, b.cursor, b.state) == (a.result, a.cursor, a.state)
    assert any(r is not None for r in spy.results["lap_picks"])
    assert spy.calls.get("recheck_by_usage", 0) > 10 and "recheck_taken" not in spy.calls
    assert b.result.placed == 2500


def test_windows_normalized_per_window_are_read_one_by_one_and_agree(
    spy: _Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A template that does not tolerate the soft taint: TaintToleration normalizes over each
    window, so a round is read window by window (_window_picks)."""
    world = _world("plain")
    a = filled(world, False, True, monkeypatch)
    b = filled(world, True, True, spy._mp)
    assert (b.result, b.cursor, b.state) == (a.result, a.cursor, a.state)
    assert all(r is None for r in spy.results["lap_picks"])
    assert spy.calls["_window_picks"] > 10


def test_without_rescoring_by_usage_each_round_records_its_copies_and_agrees(
    spy: _Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A profile whose usage readers read more than their row's usage (made so here) rescored
    per round, its copies recorded as they are placed."""
    monkeypatch.setattr(window_lap.UsageMemo, "of", classmethod(lambda cls, *a: None))
    world = _world("tolerating", max_pods=1500)
    a = filled(world, False, True, monkeypatch)
    b = filled(world, True, True, spy._mp)
    assert (b.result, b.cursor, b.state) == (a.result, a.cursor, a.state)
    assert spy.calls.get("recheck_taken", 0) > 10 and "recheck_by_usage" not in spy.calls


def test_a_fill_past_capacity_stops_at_the_same_copy_with_the_same_reasons(
    spy: _Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """150 nodes of 1 CPU, copies of 300m: three fit each; the 451st fits nowhere, and its
    name and FitError are those of the copy-by-copy fill."""
    nodes = tuple(node(i, 1000, 8, False, False) for i in range(150))
    world = FillWorld(nodes, (), 0, template("plain", 300, 64), 1000)
    a = filled(world, False, False, monkeypatch)
    b = filled(world, True, False, spy._mp)
    assert b.result == a.result and b.cursor == a.cursor
    assert b.result.placed == 450 and set(b.result.per_node.values()) == {3}
    assert b.result.stopped_by is not None and b.result.stopped_by.pod_uid == "fill~450"
    assert spy.calls.get("recheck_by_usage", 0) > 0


def _asked(world: FillWorld, answers: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """(questions asked, copies placed) by a fill of `world` in rounds whose should_continue
    says yes `answers` times, then no; placed -1 when the fill was stopped."""
    calls = [0]

    def go_on() -> bool:
        calls[0] += 1
        return calls[0] <= answers

    c = world.cluster()
    with c.fork() as f:
        try:
            placed = fill(f, Fill(world.template, world.max_pods), go_on).placed
        except Stopped:
            placed = -1
    return calls[0], placed


@pytest.mark.parametrize(
    ("max_pods", "asks"), [(64, 1), (65, 2), (128, 2), (129, 3), (640, 10)],
    ids=["64 copies", "65 copies", "128 copies", "129 copies", "640 copies"],
)
def test_a_fill_in_rounds_asks_before_copies_0_64_128_as_one_by_one(
    spy: _Spy, max_pods: int, asks: int
) -> None:
    """The copy-by-copy fill asks before copies 0, 64, 128, ... below max_pods (fill.py):
    ceil(max_pods / 64) questions, none after the last copy, several when a round passes
    several of those copies; the rounds ask the same questions."""
    world = _world("tolerating", max_pods=max_pods)
    assert _asked(world, 10**9, spy._mp) == (asks, max_pods)
    assert any(r is not None for r in spy.results["lap_picks"])


def test_a_no_after_the_last_question_leaves_a_fill_in_rounds_complete(spy: _Spy) -> None:
    """128 copies ask twice (copies 0 and 64); a no to a third question, which the
    copy-by-copy fill never asks, must not stop the step it completed."""
    world = _world("tolerating", max_pods=128)
    assert _asked(world, 2, spy._mp) == (2, 128)
    assert spy.calls.get("recheck_by_usage", 0) > 0


def test_a_fill_in_rounds_that_fills_the_cluster_at_copy_128_asks_three_times(
    spy: _Spy,
) -> None:
    """128 nodes of one pod each: copies 0..127 fit, copy 128 fits nowhere. One by one the
    fill asks before copies 0, 64 and 128: three questions, not four."""
    nodes = tuple(
        replace(n, allocatable={**n.allocatable, "pods": 1})
        for n in (node(i, 4000, 8, False, False) for i in range(128))
    )
    world = FillWorld(nodes, (), 0, template("tolerating", 100, 64), 1000)
    assert _asked(world, 10**9, spy._mp) == (3, 128)
    assert spy.calls.get("_window_picks", 0) + spy.calls.get("lap_picks", 0) > 0


def test_a_round_past_several_question_copies_asks_each_question(
    spy: _Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asking every 3 copies, rounds of several copies pass several of copies 0, 3, 6, ...:
    100 copies ask ceil(100 / 3) = 34 times, as one by one."""
    monkeypatch.setattr(fill_module, "ASK_EVERY", 3)
    world = _world("tolerating", max_pods=100)
    assert _asked(world, 10**9, spy._mp) == (34, 100)
    assert any(r is not None and len(r[0]) > 3 for r in spy.results["lap_picks"])


def _follow_up(
    rounds: bool, parked: bool, monkeypatch: pytest.MonkeyPatch
) -> tuple[Placement, ...]:
    """A fill of the tolerating template on the 400-node world, then two pods scheduled in
    the same simulation: of the template's signature, or (`parked`) of a run the fill
    interrupted (three such pods scheduled before it). Their placements whole (batched, the
    nodes evaluated), batches kept for an hour so that timing cannot flush them."""
    world = _world("tolerating", max_pods=700)
    c = cluster_of(
        world.nodes, world.pods, batching=True, percentageOfNodesToScore=world.pct,
        profiles=[{"schedulerName": "default-scheduler", "batching": {"maxBatchAge": "1h"}}],
    )
    if parked:
        # three pods: the second's hint builds the run's cache, which a run must have to park
        first = tuple(pod(f"p{i}", 500, 512) for i in range(3))
        later = tuple(pod(f"p{i}", 500, 512) for i in (3, 4))
    else:
        first, later = (), tuple(replace(world.template, uid=f"s{i}", name=f"s{i}") for i in (0, 1))
    steps = [ScheduleStep(first), Fill(world.template, 700), ScheduleStep(later)]
    with monkeypatch.context() as m:
        if not rounds:
            m.setattr(fill_module, "continue_fill", lambda *a, **k: a[5])
        res = c.simulate(steps, lambda: True)
    step = res.results[2]
    assert isinstance(step, ScheduleStepResult)
    return step.placements


@pytest.mark.parametrize("parked", [False, True], ids=["the fill's run", "a parked run"])
def test_after_a_fill_in_rounds_the_next_pods_are_batched_as_one_by_one(
    spy: _Spy, parked: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy-by-copy fill leaves its run going (the next pod of the template's signature
    is hinted: batched, one node evaluated) and a run it interrupted parked, its journal
    holding the copies' rows (the run resumes, hinted). The rounds leave the same batch
    state (run_continued), not invalidated batches that would give each a full cycle."""
    a = _follow_up(False, parked, monkeypatch)
    b = _follow_up(True, parked, spy._mp)
    assert spy.calls.get("recheck_by_usage", 0) > 0
    assert all(p.batched and p.nodes_evaluated == 1 for p in a)  # one by one: warm runs
    assert b == a


def test_only_a_simulations_last_fill_leaves_its_copies_without_records(
    spy: _Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run.py gives the last step's fill fill_last: its copies get no pod records (nothing
    reads the fork after it). A fill with a step after it keeps them: a drain of a node that
    took a copy finds it there, blocking (a copy has no controller: the autoscaler's
    NotReplicated), as after the copy-by-copy fill."""
    world = _world("tolerating", max_pods=700)
    made = [0]
    real = ForkSnapshot.add_records

    def counted(self: ForkSnapshot, *a: Any) -> None:
        made[0] += len(a[0])
        real(self, *a)

    monkeypatch.setattr(ForkSnapshot, "add_records", counted)
    c = world.cluster()
    last = c.simulate([Fill(world.template, 700)], lambda: True).results[0]
    assert isinstance(last, FillResult) and last.placed == 700 and made[0] == 0
    res = c.simulate([Fill(world.template, 700), Drain(("n1",))], lambda: True)
    fill_res, drain_res = res.results
    assert isinstance(fill_res, FillResult) and isinstance(drain_res, DrainResult)
    assert made[0] > 600 and fill_res.per_node["n1"] >= 1  # n1 took a copy
    verdict = drain_res.nodes[0]
    assert not verdict.drainable and verdict.blocking_pod is not None
    assert verdict.blocking_pod.uid.startswith("fill~")
    assert spy.calls.get("recheck_by_usage", 0) > 0
