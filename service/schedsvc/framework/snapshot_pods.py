"""The pods a snapshot holds and their accounting on its rows (kube's NodeInfo AddPod and
RemovePod, the cache's nominator): bound and assumed pods, nominated pods, the two-pass
temporaries, and the pod indexes (listeners) kept current with them.

A base of Snapshot (framework/snapshot.py), which owns the columns declared here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, MutableMapping, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from ..model import Pod
from .overlay import RowTable
from .pod_record import NominatedKey, PodListener, PodRecord
from .podinfo import PodInfo, pod_info

__all__ = ["SnapshotPods"]

_L = TypeVar("_L", bound=PodListener)


class SnapshotPods:
    """Snapshot's pod half: every method keeps `requested`, host ports and the listeners in
    step with the pod tables, and moves `generation`."""

    capacity: int
    generation: int
    index: MutableMapping[str, int]  # a fork's are overlays (overlay.py)
    resource_index: dict[str, int]
    resource_refs: list[int]
    requested: npt.NDArray[np.int64]
    nonzero_requested: npt.NDArray[np.int64]
    host_ports: dict[tuple[str, int], dict[str, npt.NDArray[np.int32]]]
    _host_port_uses: dict[tuple[str, int, str], int]
    pods: MutableMapping[str, PodRecord]
    pods_on_row: RowTable[dict[str, PodRecord]]
    nominated: MutableMapping[str, PodRecord]
    listeners: list[PodListener]
    temporaries: dict[NominatedKey, PodRecord]  # counted now, for an index built meanwhile
    _ref_resource: Callable[[str, int], int]  # Snapshot's: the column of a counted resource

    def add_pod(
        self, pod: Pod, node_name: str, assumed: bool = False, info: PodInfo | None = None
    ) -> PodRecord:
        """Account `pod` on `node_name` (bound or assumed). The caller checked the node exists.

        `info`, when the caller has it, is the PodInfo of the same pod (requests do not depend
        on node_name), which saves computing it again."""
        if pod.uid in self.pods or pod.uid in self.nominated:
            self.remove_pod(pod.uid)
        row = self.index[node_name]
        if info is None or info.pod.uid != pod.uid:
            info = pod_info(pod)
        elif info.pod is not pod:
            info = info.for_pod(pod)
        rec = PodRecord(info=info, node_name=node_name, assumed=assumed)
        self._account(rec, row, +1)
        self.pods[pod.uid] = rec
        self.pods_on_row[row][pod.uid] = rec
        for listener in self.listeners:
            listener.pod_added(rec, row)
        self.generation += 1
        return rec

    def account_copies(self, rows: npt.NDArray[np.intp], info: PodInfo) -> None:
        """The usage of one pod requesting what `info` requests (no host port) added on each
        of `rows` (distinct), in one array update per column: a fill's rounds, whose copies'
        records come later (add_records) or never (nothing reads them)."""
        k = len(rows)
        for res, qty in info.requests.items():
            col = self._ref_resource(res, k)
            self.requested[rows, col] += qty
        self.requested[rows, 3] += 1  # pods
        self.nonzero_requested[rows, 0] += info.nonzero_cpu
        self.nonzero_requested[rows, 1] += info.nonzero_memory
        self.generation += k

    def add_records(
        self, pods: Sequence[Pod], names: Sequence[str], rows: Sequence[int], info: PodInfo
    ) -> None:
        """What add_pod(pods[i], names[i], assumed=True) adds besides the usage, which
        account_copies counted: copies of one template (they request what `info` requests),
        none held here; `rows[i]` is names[i]'s. The generation is not moved again."""
        pods_held, on_row, listeners = self.pods, self.pods_on_row, self.listeners
        for pod, name, row in zip(pods, names, rows, strict=True):
            rec = PodRecord(info=info.for_pod(pod), node_name=name, assumed=True)
            pods_held[pod.uid] = rec
            on_row[row][pod.uid] = rec
            for listener in listeners:
                listener.pod_added(rec, row)
        # account_copies moved the generation once per copy, as add_pod does

    def add_nominated(self, pod: Pod, info: PodInfo | None = None) -> None:
        """A pending pod nominated to a node: counted only in the filter stage's first pass.
        Its resource names are counted here, so its two-pass temporaries add no column."""
        if pod.uid in self.pods or pod.uid in self.nominated:
            self.remove_pod(pod.uid)
        rec = PodRecord(
            info=info if info is not None and info.pod is pod else pod_info(pod),
            node_name="", assumed=False,
            nominated_node_name=pod.nominated_node_name,
        )
        for res in rec.info.requests:
            self._ref_resource(res, +1)
        self.nominated[pod.uid] = rec
        self.generation += 1

    def remove_pod(self, uid: str) -> PodRecord | None:
        rec = self.nominated.pop(uid, None)
        if rec is not None:
            for res in rec.info.requests:
                self.resource_refs[self.resource_index[res]] -= 1
            self.generation += 1
            return rec
        rec = self.pods.pop(uid, None)
        if rec is None:
            return None
        row = self.index[rec.node_name]
        del self.pods_on_row[row][uid]
        self._account(rec, row, -1)
        for listener in self.listeners:
            listener.pod_removed(rec, row)
        self.generation += 1
        return rec

    def add_temporary(self, nominated: PodRecord, node_name: str) -> PodRecord:
        """Count a nominated pod on `node_name` for a two-pass filter, keyed by a NominatedKey:
        usage and indexes see it, the uid-keyed pod tables do not, so it cannot touch a pod
        a client sent, whatever that pod's uid. Undo with remove_temporary."""
        pod = dataclasses.replace(nominated.pod, node_name=node_name, shape=None)
        rec = PodRecord(
            info=nominated.info.for_pod(pod), node_name=node_name, assumed=False,
            temporary=NominatedKey(pod.uid),
        )
        row = self.index[node_name]
        self._account(rec, row, +1)
        self.temporaries[NominatedKey(pod.uid)] = rec
        for listener in self.listeners:
            listener.pod_added(rec, row)
        self.generation += 1
        return rec

    def remove_temporary(self, rec: PodRecord) -> None:
        row = self.index[rec.node_name]
        self._account(rec, row, -1)
        if rec.temporary is not None:
            self.temporaries.pop(rec.temporary, None)
        for listener in self.listeners:
            listener.pod_removed(rec, row)
        self.generation += 1

    def _account(self, rec: PodRecord, row: int, sign: int) -> None:
        info = rec.info
        for res, qty in info.requests.items():
            col = self._ref_resource(res, sign)
            self.requested[row, col] += sign * qty
        self.requested[row, 3] += sign  # pods
        self.nonzero_requested[row, 0] += sign * info.nonzero_cpu
        self.nonzero_requested[row, 1] += sign * info.nonzero_memory
        for protocol, port, ip in info.host_ports:  # app containers' and sidecars'
            self._use_host_port(protocol, port, ip, row, sign)

    def _use_host_port(self, protocol: str, port: int, ip: str, row: int, sign: int) -> None:
        """Count a pod's use of a host port on a row; an (ip, port) no pod uses is dropped."""
        key = (protocol, port)
        ips = self.host_ports.setdefault(key, {})
        arr = ips.get(ip)
        if arr is None:
            arr = np.zeros(self.capacity, dtype=np.int32)
            ips[ip] = arr
        arr[row] += sign
        use = (protocol, port, ip)
        left = self._host_port_uses.get(use, 0) + sign
        if left:
            self._host_port_uses[use] = left
            return
        del self._host_port_uses[use]
        del ips[ip]
        if not ips:
            del self.host_ports[key]

    def listener_of(self, kind: type[_L], make: Callable[[], _L]) -> _L:
        """The index of `kind` registered here, registering (and filling) `make()` the first
        time: one index per snapshot, built when a plugin first needs it."""
        for listener in self.listeners:
            if isinstance(listener, kind):
                return listener
        new = make()
        self.add_listener(new)
        return new

    def add_listener(self, listener: PodListener) -> None:
        """Register an index and replay the pods already held into it."""
        self.listeners.append(listener)
        listener.grow(self.capacity)
        for rec in (*self.pods.values(), *self.temporaries.values()):
            listener.pod_added(rec, self.index[rec.node_name])
