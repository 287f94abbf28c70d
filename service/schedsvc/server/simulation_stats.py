"""Counts of simulations for the metrics (observability/simulation_metrics.py reads them).

The server layer cannot import observability (it sits above), so, as the servicer's `counts`,
the handler keeps plain numbers here and a collector reads them at scrape time. Simulations
are counted once each, when they end, never per pod: a 50,000-copy fill adds one update.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass

from ..engine.explain import Explanation
from ..engine.simulate import steps as st
from ..errors import Cancelled, DeadlineExceeded, InvalidArgument, ResourceExhausted

__all__ = ["SECONDS_BUCKETS", "SimulationCounts", "SimulationStats", "outcome_of", "pods_by_step"]

# upper bounds of schedsvc_simulation_seconds' buckets (a drain ~20 ms, a fill of 50,000 ~2 s)
SECONDS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def outcome_of(exc: BaseException | None, complete: bool = True) -> str:
    """The `outcome` label: complete, partial (cut short after a step), or why it failed."""
    if exc is None:
        return "complete" if complete else "partial"
    for kind, name in (
        (InvalidArgument, "invalid_argument"), (ResourceExhausted, "resource_exhausted"),
        (DeadlineExceeded, "deadline_exceeded"), (Cancelled, "cancelled"),
        (MemoryError, "resource_exhausted"),
    ):
        if isinstance(exc, kind):
            return name
    return "error"


def pods_by_step(results: tuple[st.StepResult, ...]) -> dict[str, int]:
    """Pods each kind of step placed or tried, as its results show them."""
    out: dict[str, int] = {}

    def add(kind: str, n: int) -> None:
        out[kind] = out.get(kind, 0) + n

    for r in results:
        if isinstance(r, st.ScheduleStepResult):
            add("schedule", len(r.placements))
        elif isinstance(r, st.FillResult):
            add("fill", r.placed + (r.stopped_by is not None))
        elif isinstance(r, st.DrainResult):
            add("drain", sum(len(v.moved) + (v.reason is st.UnremovableReason.NO_PLACE_TO_MOVE_PODS)
                             for v in r.nodes))
        elif isinstance(r, st.ScaleUpResult):
            add("scale_up", len(r.scheduled_now) + sum(len(t.placements) for t in r.templates))
        elif isinstance(r, Explanation):
            add("explain", 1)
    return out


@dataclass(frozen=True, slots=True)
class SimulationCounts:
    outcomes: Mapping[str, int]
    pods: Mapping[str, int]  # by step kind
    buckets: tuple[int, ...]  # per SECONDS_BUCKETS bound, then +Inf (not cumulative)
    seconds_sum: float


class SimulationStats:
    """Thread-safe: simulations end on worker threads, scrapes read from the metrics thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._outcomes: dict[str, int] = {}
        self._pods: dict[str, int] = {}
        self._buckets = [0] * (len(SECONDS_BUCKETS) + 1)
        self._sum = 0.0

    def record(self, outcome: str, seconds: float, pods: Mapping[str, int]) -> None:
        with self._lock:
            self._outcomes[outcome] = self._outcomes.get(outcome, 0) + 1
            for kind, n in pods.items():
                self._pods[kind] = self._pods.get(kind, 0) + n
            self._buckets[bisect_left(SECONDS_BUCKETS, seconds)] += 1
            self._sum += seconds

    def counts(self) -> SimulationCounts:
        with self._lock:
            return SimulationCounts(
                dict(self._outcomes), dict(self._pods), tuple(self._buckets), self._sum)
