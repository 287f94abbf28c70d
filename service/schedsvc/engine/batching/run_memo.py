"""What a run of pods of one signature shares (see batch.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...framework.snapshot import Snapshot
from ..runtime import CycleState

__all__ = ["RunMemo"]


@dataclass(slots=True)
class RunMemo:
    """What a run of pods of one signature shares while the only snapshot changes are the
    assumes of such pods: PreFilter's CycleState (pre_filter_assume_stable) and the PreScore
    of the one-row rescore (pre_score_assume_stable)."""

    signature: bytes
    generation: int
    cycle_state: CycleState
    pre_scored: tuple[dict[str, Any], set[str]] | None = None

    def serves(self, signature: bytes, snap: Snapshot) -> bool:
        """Whether the run's CycleState holds for a pod of `signature` on `snap`: nothing but
        the assumes of the run's pods changed it since (see `assumed`)."""
        return self.signature == signature and self.generation == snap.generation

    def assumed(self, before: int, after: int) -> None:
        """A pod was assumed, taking the generation from `before` to `after`: a state valid
        before stays valid for the next pod of the same signature."""
        if self.generation == before:
            self.generation = after
