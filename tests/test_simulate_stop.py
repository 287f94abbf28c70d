"""A simulation cut short (issue 27, design §3): should_continue saying no after k calls, for
every k, ends the run with a prefix of the full run's results, complete=False and the index
of the step cut short; a MemoryError inside the fork midway propagates. Either way the
cluster is as before (fingerprint), not damaged, unlocked, and its next Schedule is that of a
cluster that never simulated."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedsvc.engine.simulate import steps as sst
from schedsvc.engine.simulate.fill import ASK_EVERY
from schedsvc.framework.fork import ForkSnapshot
from tests.builders.fingerprint import fingerprint
from tests.builders.fork_world import World, node_of, pod_of, worlds
from tests.builders.simulate_twin import Simulation, key, results_key, simulations, twin_of


def _after(k: int, calls: list[int]) -> Callable[[], bool]:
    """Yes to the first `k` calls, then no; counts the calls in calls[0]."""

    def go_on() -> bool:
        calls[0] += 1
        return calls[0] <= k

    return go_on


@settings(max_examples=15, deadline=None)
@given(sim=simulations(worlds(max_nodes=4)), batching=st.booleans())
def test_a_stop_after_any_number_of_calls_answers_a_prefix_and_changes_nothing(
    sim: Simulation, batching: bool
) -> None:
    _, a = twin_of(sim, batching)
    total = [0]
    full = a.simulate(sim.steps, _after(10**9, total))
    assert full.complete
    expected = [results_key(r) for r in full.results]
    before = fingerprint(a)
    stopped_at = []
    for k in range(total[0]):
        calls = [0]
        res = a.simulate(sim.steps, _after(k, calls))
        assert calls[0] == k + 1  # nothing asked after the first no
        assert not res.complete and res.stopped_at_step == len(res.results)
        assert [results_key(r) for r in res.results] == expected[: len(res.results)]
        assert fingerprint(a) == before and a.damaged == "" and not a.lock.locked()
        stopped_at.append(res.stopped_at_step)
    # each step asks at least once, and a later no never stops at an earlier step
    assert stopped_at == sorted(stopped_at) and set(stopped_at) == set(range(len(sim.steps)))
    _, c = twin_of(sim, batching)
    later = pending_pods()
    assert [key(p) for p in a.schedule(later)[0]] == [key(p) for p in c.schedule(later)[0]]


def pending_pods() -> list[Any]:
    return [pod_of("spread", f"t{j}", "abc"[j % 3], 300) for j in range(6)]


def _roomy() -> Simulation:
    """Four 64-CPU nodes of 110 pods: room for 440 100m copies."""
    nodes = tuple(
        dataclasses.replace(n, allocatable={**n.allocatable, "pods": 110})
        for n in (node_of(i, 2, 64000) for i in range(4))
    )
    return Simulation(World(nodes, (), ()), [], [], [])


@pytest.mark.parametrize(
    ("max_pods", "asks"),
    [(1, 2), (ASK_EVERY, 2), (ASK_EVERY + 1, 3), (2 * ASK_EVERY + 1, 4)],
    ids=["one copy", "64 copies", "65 copies", "129 copies"],
)
def test_a_fill_asks_before_its_step_and_every_64_copies(max_pods: int, asks: int) -> None:
    """Once between steps, then before copies 0, 64, 128, ...: ceil(max_pods / 64) times."""
    _, a = twin_of(_roomy(), True)
    calls = [0]
    res = a.simulate([sst.Fill(pod_of("plain", "f", "a", 100), max_pods)], _after(99, calls))
    assert calls[0] == asks
    fill = res.results[0]
    assert isinstance(fill, sst.FillResult) and fill.placed == max_pods


def test_a_fill_stopped_midway_is_cut_short_and_its_copies_dropped() -> None:
    _, a = twin_of(_roomy(), True)
    before = fingerprint(a)
    steps: list[sst.Step] = [
        sst.AddNodes(node_of(7, 1, 4000), 1), sst.Fill(pod_of("plain", "f", "a", 100), 500)
    ]
    res = a.simulate(steps, _after(3, [0]))  # the step, copy 0 and copy 64 asked; 128 not
    assert (res.complete, res.stopped_at_step, len(res.results)) == (False, 1, 1)
    assert fingerprint(a) == before


@settings(max_examples=15, deadline=None)
@given(sim=simulations(worlds(max_nodes=4)), batching=st.booleans(), data=st.data())
def test_a_memory_error_in_the_fork_midway_leaves_the_cluster_whole(
    sim: Simulation, batching: bool, data: st.DataObject
) -> None:
    """The fork's add_pod (assume) fails on its n-th call: the error reaches the caller, and
    the cluster is as before, not marked damaged (nothing of it was written)."""
    _, a = twin_of(sim, batching)
    _, c = twin_of(sim, batching)
    before = fingerprint(a)
    fail_at = data.draw(st.integers(1, 20))
    seen = [0]
    real = ForkSnapshot.add_pod

    def failing(self: ForkSnapshot, *args: Any, **kwargs: Any) -> Any:
        seen[0] += 1
        if seen[0] == fail_at:
            raise MemoryError
        return real(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(ForkSnapshot, "add_pod", failing)
        try:
            a.simulate(sim.steps, lambda: True)
        except MemoryError:
            pass
        else:
            assert seen[0] < fail_at  # the simulation placed fewer pods than that
    assert fingerprint(a) == before and a.damaged == "" and not a.lock.locked()
    later = pending_pods()
    assert [key(p) for p in a.schedule(later)[0]] == [key(p) for p in c.schedule(later)[0]]
