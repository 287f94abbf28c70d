"""kube's StartMutations/EndMutations for a preemption that takes victims out of the snapshot
itself (workload-aware preemption re-runs the whole group algorithm without them): every pod
taken out is put back at the end, each touched node's pods in their first order, and the
preemption index's ranks as they were, so the evaluation leaves nothing behind.
"""

from __future__ import annotations

from ...framework.snapshot import PodRecord, Snapshot
from .victim_table import VictimTable

__all__ = ["SnapshotMutations"]


class SnapshotMutations:
    """Pods taken out of the snapshot (`remove`), some put back on the way (`add_back`),
    all restored by `end`. The generation moves forward (caches see a change and recompute),
    or, `keep_generation`, is put back as single-pod preemption's dry run does."""

    def __init__(self, snap: Snapshot, keep_generation: bool = False) -> None:
        self._snap = snap
        self._generation = snap.generation if keep_generation else None
        self._out: dict[str, PodRecord] = {}
        self._order: dict[int, list[str]] = {}  # row -> its pods' first order
        self._seq: dict[str, int] = {}
        self._table: VictimTable | None = next(
            (t for t in snap.listeners if isinstance(t, VictimTable)), None
        )

    def remove(self, rec: PodRecord) -> None:
        snap = self._snap
        uid = rec.pod.uid
        row = snap.index[rec.node_name]
        if row not in self._order:
            self._order[row] = list(snap.pods_on_row[row])
        if self._table is not None and uid not in self._seq:
            seq = self._table.seq_of(uid)
            if seq is not None:
                self._seq[uid] = seq
        snap.remove_pod(uid)
        self._out[uid] = rec

    def add_back(self, rec: PodRecord) -> None:
        uid = rec.pod.uid
        del self._out[uid]
        self._snap.add_pod(rec.pod, rec.node_name, assumed=rec.assumed, info=rec.info)

    def end(self) -> None:
        """Put every pod still out back; the rows and ranks as they first were."""
        for rec in list(self._out.values()):
            self.add_back(rec)
        snap = self._snap
        for row, order in self._order.items():
            now = snap.pods_on_row[row]
            kept = {uid: now[uid] for uid in order if uid in now}
            kept.update(now)  # none expected: anything added meanwhile stays, last
            snap.pods_on_row[row] = kept
        if self._table is not None:
            for uid, seq in self._seq.items():
                self._table.set_seq(uid, seq)
        self._order.clear()
        self._seq.clear()
        if self._generation is not None:
            snap.generation = self._generation
