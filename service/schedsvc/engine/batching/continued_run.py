"""What rounds (engine/run_rounds.py: a fill's copies, a pod group's members) read of a
profile's batch state, and what they leave in it: the run they continue from its
WindowCache, and afterwards the state the pods' own cycles would have left, so that the next
pod of the signature is hinted (and a parked run resumed) as after the pod-by-pod cycles.

The batch's friend module: it reads and sets the run's private fields (its RunMemo, churn and
last cycle) as its own methods would, kept apart so that batch.py stays the cycle's wrapper."""

from __future__ import annotations

from collections.abc import Sequence

from ...framework.snapshot import Snapshot
from ..runtime import CycleState
from .batch import OpportunisticBatch
from .cluster_batches import ClusterBatches
from .window_cache import WindowCache

__all__ = ["continued_run", "run_continued"]


def continued_run(
    batch: OpportunisticBatch, snap: Snapshot, cycle: int
) -> tuple[WindowCache, CycleState, int] | None:
    """(cache, CycleState, its last pick) a run continues from after the pod of `cycle` was
    placed from a complete WindowCache, nothing else changed since: the next pod of the
    signature would be hinted from them, the last pick rechecked first. None when anything
    more is needed: rescoring off (each hint whose last node still fits flushes the state,
    kube's node_not_full), nominated pods, a cache not complete or window-scored (spreading's kept
    counts move with every placement, across domains), churn, a CycleState that does not
    hold across the run's assumes."""
    st, memo, last = batch.state, batch._run, batch.last
    if not (
        batch.enabled and batch.rescore and isinstance(st, WindowCache) and not st.pending
        and st.complete
        and not st.windowed and st.order is snap.order and last.cycle == cycle
        and last.succeeded and memo is not None and memo.generation == snap.generation
        and batch.fw.pre_filter_assume_stable and batch._churn.empty() and not snap.nominated
    ):
        return None
    return st, memo.cycle_state, last.row


def run_continued(
    batches: ClusterBatches, batch: OpportunisticBatch, snap: Snapshot, cycle: int,
    rows: Sequence[int],
) -> None:
    """The state the copies' cycles leave, the copies of `rows` (their rows in placement
    order, the last of cycle `cycle`) placed by the rounds from `batch`'s cache, which
    rechecked every row it took after its round (the next hint's recheck of the last finds
    it as it is): that last hint succeeded, the run's CycleState holds at this generation
    (a copy's assume moves it, as pod_assumed does), and every profile's parked caches
    journal each copy's row, as each assume tells them (a copy has no pod affinity)."""
    row = rows[-1]
    batch._set_cycle(cycle, row, snap.node(row).name, True)
    memo = batch._run
    assert memo is not None  # continued_run found it
    memo.generation = snap.generation
    batch.batched_pods += len(rows)
    for b in batches.values():
        if len(b.parked):
            for r in rows:  # one by one: the journal drops what it cannot hold as it grows
                b.parked.changed((r,))
