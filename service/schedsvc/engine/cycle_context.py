"""What one scheduling cycle carries to the next (the cursor) and what it tells the observer
(its record), passed in explicitly: kube keeps the cursor on its Scheduler struct and buffers
the cycle's durations in its metricsRecorder; here the cluster owns the cursor and schedule_one
makes the record, hands it to the observer once, at the cycle's end.

The stages append to the record of the cycle running on their thread (`CURRENT.rec`); work
outside a cycle (Explain, an UpdateSnapshot's flushes, a filter piece on a worker thread) finds
none there and reports to the observer directly.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from ..framework.podinfo import PodInfo

__all__ = ["CURRENT", "CycleCursor", "CycleRecord"]


@dataclass(slots=True)
class CycleCursor:
    """What one cycle leaves the next: the cycle counter (batching keys its state by it), the
    round-robin start index of the filter stage (kube's nextStartNodeIndex), the seeded
    generator of selectHost and preemption, and the last pod's info (a run of equal pods
    shares its PodInfo facts)."""

    rng: np.random.Generator
    cycle: int = 0
    next_start_index: int = 0
    last_info: PodInfo | None = None


@dataclass(slots=True)
class CycleRecord:
    """One pod's attempt: appended to by the stages, read by the observer once, at the end."""

    profile: str  # the pod's schedulerName
    pod_uid: str
    started: float  # perf_counter when the attempt began
    # (extension point, status, seconds, perf_counter when it ended): PreFilter, Filter, ...
    points: list[tuple[str, str, float, float]] = field(default_factory=list)
    # (plugin, extension point, status, seconds), in sampled cycles only (kube samples 10%)
    plugins: list[tuple[str, str, str, float]] = field(default_factory=list)
    # (what, profile, value) in order: batch_attempt (value: kube's attempt result),
    # batch_flush and batch_skipped (value: the reason), nomination_refused (value "")
    events: list[tuple[str, str, str]] = field(default_factory=list)
    hint: tuple[bool, float, float] | None = None  # GetNodeHint: (hinted, seconds, ended)
    store: tuple[float, float] | None = None  # StoreScheduleResults: (seconds, ended)
    result: str = ""  # scheduled or unschedulable once a verdict is reached ("" for none)
    seconds: float = 0.0  # the attempt up to its verdict (algorithm + assume)
    outcome: str = "ERROR"  # SCHEDULED, UNSCHEDULABLE, REJECTED or ERROR
    cycle: int = 0
    nodes_evaluated: int = 0
    nodes_feasible: int = 0
    batched: bool = False


class _Current(threading.local):
    rec: CycleRecord | None = None


# the record of the cycle running on this thread, if any (set and cleared by schedule_one)
CURRENT = _Current()
