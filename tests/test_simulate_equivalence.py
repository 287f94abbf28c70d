"""Issue 27's acceptance: a simulation's every step places as the same pods' real calls on a
twin of the cluster (tests/builders/simulate_twin.py: UpdateSnapshot for node steps, Schedule
for schedule steps and fill's copies one by one, an all_or_nothing step tried on a rebuilt
twin), batching on and off, with preemption and WaitForFirstConsumer claims; and the
simulated cluster is left as it was: same fingerprint, and its next real Schedule is that of
a cluster that never simulated."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedsvc.engine.simulate import steps as sst
from schedsvc.model import Outcome
from tests.builders.fingerprint import fingerprint
from tests.builders.fork_world import World, node_of, pending, pod_of, worlds
from tests.builders.simulate_twin import Simulation, key, results_key, simulations, twin_of


@settings(max_examples=60, deadline=None)
@given(sim=simulations(worlds()), batching=st.booleans(), data=st.data())
def test_a_simulation_places_as_the_real_calls_and_leaves_its_cluster_as_it_was(
    sim: Simulation, batching: bool, data: st.DataObject
) -> None:
    _, a = twin_of(sim, batching)
    twin, b = twin_of(sim, batching)
    _, c = twin_of(sim, batching)
    before = fingerprint(a)
    res = a.simulate(sim.steps, lambda: True)
    assert res.complete and res.generation == a.snapshot.generation
    assert [results_key(r) for r in res.results] == twin.run(b, sim.steps)
    assert fingerprint(a) == before
    later = data.draw(pending("t", 6))
    assert [key(p) for p in a.schedule(later)[0]] == [key(p) for p in c.schedule(later)[0]]


@pytest.mark.parametrize("batching", [False, True], ids=["batching off", "batching on"])
def test_preempting_pods_in_a_simulation_nominate_and_name_victims_as_schedule_does(
    batching: bool,
) -> None:
    """Nodes full of low-priority pods, then urgent pods (priority 100) in a schedule step, a
    fill that cannot preempt, an all_or_nothing step that fails: the urgent pods are
    nominated with victims, exactly as the twin's Schedule, and the fill stops at once."""
    nodes = tuple(node_of(i, 2, 1000) for i in range(3))
    low = tuple(
        pod_of("spread" if k else "plain", f"low{i}-{k}", "a", 400, f"n{i}", prio=k)
        for i in range(3) for k in range(2)
    )
    urgent = tuple(pod_of("urgent", f"u{j}", "b", 500) for j in range(3))
    steps: list[sst.Step] = [
        sst.ScheduleStep(urgent[:2]), sst.Fill(pod_of("plain", "f", "c", 300), 5),
        sst.ScheduleStep(urgent[2:] + (pod_of("plain", "big", "c", 900),), True),
    ]
    sim = Simulation(World(nodes, low, ()), [], steps, list(urgent))
    _, a = twin_of(sim, batching)
    twin, b = twin_of(sim, batching)
    before = fingerprint(a)
    got = [results_key(r) for r in a.simulate(steps, lambda: True).results]
    assert got == twin.run(b, steps)
    nominated = [k[3] for k in got[0][1] if k[6]]  # nominated, with victims
    assert len(set(nominated)) == 2 and "" not in nominated
    assert got[1][1] == 0 and got[1][3][2] is Outcome.UNSCHEDULABLE
    assert got[2][2] is False
    assert fingerprint(a) == before
