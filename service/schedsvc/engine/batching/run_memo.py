"""What a run of pods of one signature shares (see batch.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..runtime import CycleState

__all__ = ["RunMemo"]


@dataclass(slots=True)
class RunMemo:
    """What a run of pods of one signature shares while the only snapshot changes are the
    assumes of such pods: PreFilter's CycleState (pre_filter_assume_stable) and the PreScore
    of the one-row rescore (pre_score_assume_stable). It serves a pod of `signature` while
    `generation` is the snapshot's: the batch moves it past each assume of the run's pods."""

    signature: bytes
    generation: int
    cycle_state: CycleState
    pre_scored: tuple[dict[str, Any], set[str]] | None = None
