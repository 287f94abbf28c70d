"""A stand-in for the engine's Cluster.simulate (issue 27's engine half), for the tests of the
contract, server and client around it: it records what it was given, asks should_continue as
the engine does (before each step), and answers what the test scripts. It writes nothing."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pytest

from schedsvc.engine.cluster import Cluster
from schedsvc.engine.simulate import steps as st

__all__ = ["FakeSimulate", "fake_simulate"]

Answer = Callable[[int, st.Step], st.StepResult]


def _empty(_i: int, step: st.Step) -> st.StepResult:
    if isinstance(step, st.AddNodes):
        return st.AddNodesResult(tuple(f"{step.template.name}-{k}" for k in range(step.count)))
    if isinstance(step, st.ScheduleStep):
        return st.ScheduleStepResult((), True)
    if isinstance(step, st.Fill):
        return st.FillResult(0)
    if isinstance(step, st.Drain):
        return st.DrainResult(())
    if isinstance(step, st.ScaleUp):
        return st.ScaleUpResult((), ())
    return st.RemoveNodesResult(())


@dataclass
class FakeSimulate:
    answer: Answer = _empty
    calls: list[tuple[str, tuple[st.Step, ...]]] = field(default_factory=list)
    # set to hold every simulation inside the cluster's lock until released (races)
    gate: threading.Event | None = None
    entered: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    # the index of a step that runs until should_continue says no (a long fill)
    long_step: int = -1

    def __call__(
        self, cluster: Cluster, steps: Sequence[st.Step], should_continue: Callable[[], bool]
    ) -> st.SimulationResult:
        with cluster.lock:
            self.calls.append((cluster.name, tuple(steps)))
            self.entered.release()
            if self.gate is not None:
                self.gate.wait(30)
            generation = cluster.snapshot.generation
            results: list[st.StepResult] = []
            for i, step in enumerate(steps):
                if i == self.long_step:
                    while should_continue():
                        time.sleep(0.001)
                if not should_continue():
                    return st.SimulationResult(tuple(results), generation, False, i)
                results.append(self.answer(i, step))
            return st.SimulationResult(tuple(results), generation)


def fake_simulate(
    monkeypatch: pytest.MonkeyPatch, fake: FakeSimulate | None = None
) -> FakeSimulate:
    """Install `fake` as Cluster.simulate for this test (raising=False: the engine may not
    have one yet)."""
    fake = fake or FakeSimulate()

    def simulate(
        self: Cluster, steps: Sequence[st.Step], should_continue: Callable[[], bool]
    ) -> st.SimulationResult:
        return fake(self, steps, should_continue)

    monkeypatch.setattr(Cluster, "simulate", simulate, raising=False)
    return fake
