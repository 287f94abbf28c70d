"""What one scheduling cycle tells the observer, gathered as the cycle runs and handed over once
by schedule_one (kube's framework buffers its durations in a metricsRecorder the same way,
instead of observing each as it happens).

The stages append to the record of the cycle running on their thread (`CURRENT.rec`); work
outside a cycle (Explain, an UpdateSnapshot's flushes, a filter piece on a worker thread) finds
none there and reports to the observer directly.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

__all__ = ["CURRENT", "CycleRecord"]


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
