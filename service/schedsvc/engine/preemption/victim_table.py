"""Columnar view of the pods on nodes for preemption: per pod slot its row, priority, start
time and request vector, so the potential victims of many nodes are gathered, ordered and
summed with numpy instead of a Python walk over every node's pods.

Registered on a snapshot the first time a cycle preempts (clusters that never preempt pay
nothing), then kept current by the snapshot's pod listener calls.
"""

from __future__ import annotations

import weakref

import numpy as np
import numpy.typing as npt

from ...framework.snapshot import PodRecord, Snapshot

__all__ = ["VictimTable"]

IntArray = npt.NDArray[np.int64]


class VictimTable:
    """Slots of pods on nodes; a removed pod frees its slot (row -1) for the next one."""

    def __init__(self, snap: Snapshot) -> None:
        # weakly: the snapshot holds its listeners, and a cycle would leave a replaced
        # snapshot to the collector's full pass instead of freeing it at once
        self._snap: Snapshot = weakref.proxy(snap)
        cap = 256
        self.row: IntArray = np.full(cap, -1, dtype=np.int64)
        self.priority: IntArray = np.zeros(cap, dtype=np.int64)
        self.start: IntArray = np.zeros(cap, dtype=np.int64)
        self.started = np.zeros(cap, dtype=np.bool_)
        self.seq: IntArray = np.zeros(cap, dtype=np.int64)  # insertion order, ties last
        self.requests: IntArray = np.zeros((cap, len(snap.resource_index)), dtype=np.int64)
        self.records: list[PodRecord | None] = [None] * cap
        self._slot: dict[str, int] = {}
        self._free: list[int] = []
        self._high = 0  # slots ever used
        self._next_seq = 0
        # nominated pods' request vectors (pods column included) and whether they have
        # inter-pod terms, by uid, valid while the record is the same object
        self.nominated_vectors: dict[str, tuple[PodRecord, IntArray, bool]] = {}

    @classmethod
    def for_snapshot(cls, snap: Snapshot) -> VictimTable:
        return snap.listener_of(cls, lambda: cls(snap))

    @property
    def used(self) -> int:
        """Slots [0, used) may hold pods (free ones have row -1)."""
        return self._high

    def _grow(self) -> None:
        cap = len(self.row) * 2
        self.row = np.concatenate([self.row, np.full(cap - len(self.row), -1, np.int64)])
        zeros = np.zeros(cap - len(self.priority), np.int64)
        self.priority = np.concatenate([self.priority, zeros])
        self.start = np.concatenate([self.start, zeros])
        self.seq = np.concatenate([self.seq, zeros])
        self.started = np.concatenate([self.started, np.zeros(cap - len(self.started), np.bool_)])
        req = np.zeros((cap, self.requests.shape[1]), dtype=np.int64)
        req[: len(self.requests)] = self.requests
        self.requests = req
        self.records.extend([None] * (cap - len(self.records)))

    def resource_width(self) -> int:
        """Widen the request matrix to the snapshot's resource columns; returns the width."""
        width = len(self._snap.resource_index)
        if self.requests.shape[1] < width:
            z = np.zeros((len(self.requests), width - self.requests.shape[1]), dtype=np.int64)
            self.requests = np.hstack([self.requests, z])
        return width

    def seq_of(self, uid: str) -> int | None:
        """A held pod's insertion rank (ties among equally important victims go by it)."""
        slot = self._slot.get(uid)
        return None if slot is None else int(self.seq[slot])

    def set_seq(self, uid: str, seq: int) -> None:
        """Give a pod put back after a preemption's dry run the rank it had, so its node's
        pods keep their order (kube restores the NodeInfos as they were)."""
        slot = self._slot.get(uid)
        if slot is not None:
            self.seq[slot] = seq

    # ---- PodListener -------------------------------------------------------------------
    def pod_added(self, rec: PodRecord, row: int) -> None:
        if self._free:
            slot = self._free.pop()
        else:
            if self._high == len(self.row):
                self._grow()
            slot = self._high
            self._high += 1
        pod = rec.pod
        self._slot[pod.uid] = slot
        self.records[slot] = rec
        self.row[slot] = row
        self.priority[slot] = pod.priority
        self.started[slot] = pod.start_time is not None
        self.start[slot] = pod.start_time or 0
        self.seq[slot] = self._next_seq
        self._next_seq += 1
        index = self._snap.resource_index
        self.resource_width()
        vec = self.requests[slot]
        vec[:] = 0
        for res, qty in rec.info.requests.items():
            vec[index[res]] = qty
        vec[index["pods"]] = 1

    def pod_removed(self, rec: PodRecord, row: int) -> None:
        slot = self._slot.pop(rec.pod.uid, None)
        if slot is None:
            return
        self.row[slot] = -1
        self.records[slot] = None
        self._free.append(slot)

    def grow(self, capacity: int) -> None:
        """Node rows grew: nothing here is indexed by row."""
