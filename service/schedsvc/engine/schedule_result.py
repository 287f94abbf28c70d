"""What one cycle decided (kube's ScheduleResult), as a value: schedule_pod makes it, the batch
state keeps what it needs of it (kube's StoreScheduleResults) and schedule_one acts on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto

from ..framework import Rows
from .filtering import Diagnosis
from .runtime import CycleState, ScoreResult

__all__ = ["Path", "ScheduleResult"]


class Path(Enum):
    """How the cycle reached its result: what the batch state hears of it."""

    HINT = auto()  # a batching hint stood for the cycle
    FAILED = auto()  # no node: none at all (no diagnosis), PreFilter rejected, nothing fits
    UNSCORED = auto()  # one feasible node, or the nominated node: nothing sorted to keep
    SCORED = auto()  # a full scored cycle: its state may serve the next pod
    NARROWED = auto()  # scored, but PreFilter narrowed the nodes (pod_not_batchable)
    NOMINATED = auto()  # scored, nominated pods counted for this pod (nominated_pods)


@dataclass(slots=True)
class ScheduleResult:
    """kube's ScheduleResult (the suggested host, nodes evaluated, nodes feasible), what a
    failed cycle's FitError and PostFilter need, and what the batch state keeps of a scored
    cycle (its feasible rows in visiting order, their scores, the first row visited, and
    whether every node was visited: no percentageOfNodesToScore cut)."""

    path: Path
    row: int = -1  # the suggested host; -1 when nothing fits
    score: int = 0
    evaluated: int = 0
    feasible: int = 0
    diagnosis: Diagnosis | None = None  # FAILED with nodes: why
    error: str = ""  # FAILED by a plugin's Error: kube's error message (no FitError)
    cs: CycleState | None = None
    # SCORED, NARROWED, NOMINATED only
    feasible_rows: Rows | None = None
    sr: ScoreResult | None = None
    start_row: int = -1
    complete: bool = False
