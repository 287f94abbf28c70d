"""A simulation's run loop: each step in order on the fork, dispatched by its type to its
runner, `should_continue` asked before each step (and by the runners before each pod). A no
ends the run there: the results of the steps completed before, `complete=False`.

A runner is `runner(fork, step, should_continue) -> result`; it raises `Stopped` when
`should_continue` says no midway, and InvalidArgument with a field path relative to its step
("remove_nodes.names[0]"), which the loop prefixes with the step's index."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...errors import InvalidArgument
from ..cycle_env import generic_workload
from ..explain import explain
from .drain import drain
from .fill import fill, fill_last
from .fork import ClusterFork
from .node_steps import add_nodes, remove_nodes
from .scale_up import scale_up
from .schedule_step import schedule
from .steps import (
    AddNodes,
    Drain,
    ExplainStep,
    Fill,
    RemoveNodes,
    ScaleUp,
    ScheduleStep,
    SimulationResult,
    Step,
    StepResult,
)
from .stopped import Stopped

__all__ = ["LAST_RUNNERS", "RUNNERS", "Runner", "Stopped", "run"]

Runner = Callable[[ClusterFork, Any, Callable[[], bool]], StepResult]


def _explain(fork: ClusterFork, step: ExplainStep, _go_on: Callable[[], bool]) -> StepResult:
    """Explain on the fork's state here: consumes no cycle, assumes nothing."""
    return explain(fork.env, step.pod)


# step type -> its runner
RUNNERS: dict[type, Runner] = {
    AddNodes: add_nodes,
    RemoveNodes: remove_nodes,
    ScheduleStep: schedule,
    Fill: fill,
    Drain: drain,
    ScaleUp: scale_up,
    ExplainStep: _explain,
}

# the runner of a simulation's last step, where it differs: nothing reads the fork after it
LAST_RUNNERS: dict[type, Runner] = {Fill: fill_last}


def _runner(i: int, step: Step, last: bool) -> Runner:
    runner = (last and LAST_RUNNERS.get(type(step))) or RUNNERS.get(type(step))
    if runner is None:
        raise InvalidArgument(f"steps[{i}]", f"no runner for {type(step).__name__}")
    return runner


def _refuse_groups(i: int, step: Step) -> None:
    """Under GenericWorkload a fill's or a scale-up's PodGroup members would be scheduled in
    pod group cycles, which those steps do not model (their shortcuts reason pod by pod):
    refused, never answered as if the pods were alone."""
    if isinstance(step, Fill) and step.template.pod_group:
        raise InvalidArgument(
            f"steps[{i}].fill.template.scheduling_group",
            "a fill of PodGroup members is not modelled (GenericWorkload is on)",
        )
    if isinstance(step, ScaleUp):
        for j, p in enumerate(step.pods):
            if p.pod_group:
                raise InvalidArgument(
                    f"steps[{i}].scale_up.pods[{j}].scheduling_group",
                    "a scale-up for PodGroup members is not modelled (GenericWorkload is on)",
                )


def run(
    fork: ClusterFork, steps: Sequence[Step], should_continue: Callable[[], bool],
    generation: int,
) -> SimulationResult:
    """The steps on `fork`, in order; `generation` is the cluster's, reported back. A step
    of a type with no runner is refused before any step runs."""
    runners = [_runner(i, s, i == len(steps) - 1) for i, s in enumerate(steps)]
    if generic_workload(fork.env.frameworks):
        for i, s in enumerate(steps):
            _refuse_groups(i, s)
    results: list[StepResult] = []
    for i, (step, runner) in enumerate(zip(steps, runners, strict=True)):
        if not should_continue():
            return SimulationResult(tuple(results), generation, False, i)
        try:
            results.append(runner(fork, step, should_continue))
        except Stopped:
            return SimulationResult(tuple(results), generation, False, i)
        except InvalidArgument as e:
            raise InvalidArgument(f"steps[{i}].{e.field}", e.description) from None
    return SimulationResult(tuple(results), generation)
