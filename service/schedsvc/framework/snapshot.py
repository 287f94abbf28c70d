"""Columnar cluster state: one row per node, numpy columns, O(1) Python work per change.

Rows never move: a removed node leaves a free row that the next new node reuses, so anything
indexed by row (plugin caches, pod-count indexes) stays valid across updates. `alive` marks the
rows in use; `order` lists them in the fixed visiting order of the filter stage.

Two generation counters let caches invalidate cheaply: `generation` moves on every change,
`static_generation` only when what static filters read (the node set, labels, taints,
unschedulable, images) changes. Usage changes (assume/forget) do not move it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..model import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    Taint,
)
from .podinfo import PodInfo, pod_info

__all__ = [
    "Snapshot",
    "PodRecord",
    "PodListener",
    "LabelColumn",
    "normalized_image_name",
    "BoolArray",
    "IntArray",
]

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

_BASE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)


def normalized_image_name(name: str) -> str:
    """kube's ImageLocality normalizedImageName: a name with no ':' after its last '/' gets
    ':latest'. Applied to the pod's images only: node image names are looked up as reported."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


@dataclass(slots=True)
class PodRecord:
    """A pod the cluster holds: bound or assumed on `node_name`, or only nominated."""

    info: PodInfo
    node_name: str  # "" for a pod that is only nominated
    assumed: bool  # placed by us, not (yet) confirmed by the client
    nominated_node_name: str = ""

    @property
    def pod(self) -> Pod:
        return self.info.pod


class PodListener(Protocol):
    """An incremental index over the pods on nodes (counts per selector, affinity terms)."""

    def pod_added(self, rec: PodRecord, row: int) -> None: ...
    def pod_removed(self, rec: PodRecord, row: int) -> None: ...
    def grow(self, capacity: int) -> None: ...


class LabelColumn:
    """Interned values of one label key: ids[row] is the value's id, -1 where absent."""

    __slots__ = ("ids", "vocab", "index", "counts")

    def __init__(self, capacity: int) -> None:
        self.ids = np.full(capacity, -1, dtype=np.int32)
        self.vocab: list[str] = []
        self.index: dict[str, int] = {}
        self.counts: list[int] = []  # alive rows per value id

    def intern(self, value: str) -> int:
        i = self.index.get(value)
        if i is None:
            i = len(self.vocab)
            self.index[value] = i
            self.vocab.append(value)
            self.counts.append(0)
        return i

    def match(self, predicate: Callable[[str], bool], absent: bool) -> BoolArray:
        """Evaluate `predicate` once per distinct value, then gather it for every row."""
        table = np.fromiter(
            (predicate(v) for v in self.vocab), dtype=np.bool_, count=len(self.vocab)
        )
        table = np.append(table, absent)  # id -1 reads the last entry
        out: BoolArray = table[self.ids]
        return out


class Snapshot:
    """A cluster's nodes and pods. Mutated only under the cluster lock, between cycles."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self.generation = 0
        self.static_generation = 0
        self.n_rows = 0  # high-water mark of rows ever used
        self.free_rows: list[int] = []
        self.index: dict[str, int] = {}
        self.nodes: list[Node | None] = []
        self.alive = np.zeros(capacity, dtype=np.bool_)
        self._order: npt.NDArray[np.intp] | None = np.zeros(0, dtype=np.intp)
        self.resource_index: dict[str, int] = {r: i for i, r in enumerate(_BASE_RESOURCES)}
        self.allocatable = np.zeros((capacity, len(_BASE_RESOURCES)), dtype=np.int64)
        self.requested = np.zeros((capacity, len(_BASE_RESOURCES)), dtype=np.int64)
        self.nonzero_requested = np.zeros((capacity, 2), dtype=np.int64)  # cpu, memory
        self.unschedulable = np.zeros(capacity, dtype=np.bool_)
        self.labels: dict[str, LabelColumn] = {}
        self.taint_ids: dict[Taint, int] = {}
        self.taint_list: list[Taint] = []
        self.taint_matrix = np.zeros((capacity, 0), dtype=np.bool_)
        # kube's cache imageStates, keyed by the names nodes report (not normalized): the rows
        # holding each name, how many nodes do, and the size first reported for it
        self.image_rows: dict[str, BoolArray] = {}
        self.image_num_nodes: dict[str, int] = {}
        self.image_size: dict[str, int] = {}
        # (protocol, port) -> host ip -> count of pods using it per row
        self.host_ports: dict[tuple[str, int], dict[str, npt.NDArray[np.int32]]] = {}
        self.pods: dict[str, PodRecord] = {}
        self.pods_on_row: list[dict[str, PodRecord]] = []
        self.nominated: dict[str, PodRecord] = {}  # uid -> pods only nominated
        self.namespaces: dict[str, Namespace] = {}
        self.pdbs: dict[str, PodDisruptionBudget] = {}  # "namespace/name" -> budget
        self.listeners: list[PodListener] = []

    # ---- reading -------------------------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        return len(self.index)

    @property
    def order(self) -> npt.NDArray[np.intp]:
        """Alive rows in visiting order (row order); recomputed only when the node set changes."""
        if self._order is None:
            self._order = np.flatnonzero(self.alive[: self.n_rows]).astype(np.intp)
        return self._order

    def node(self, row: int) -> Node:
        n = self.nodes[row]
        assert n is not None, f"row {row} is free"
        return n

    def row_of(self, name: str) -> int | None:
        return self.index.get(name)

    def names(self, rows: Iterable[int]) -> list[str]:
        return [self.node(int(r)).name for r in rows]

    def resource_col(self, resource: str) -> int | None:
        return self.resource_index.get(resource)

    def label_column(self, key: str) -> LabelColumn | None:
        return self.labels.get(key)

    def namespace_labels(self, name: str) -> dict[str, str]:
        ns = self.namespaces.get(name)
        return dict(ns.labels) if ns else {}

    # ---- growth --------------------------------------------------------------------------
    def _grow(self, need: int) -> None:
        if need <= self.capacity:
            return
        cap = max(need, self.capacity * 2)

        def pad(a: npt.NDArray[np.generic], fill: object = 0) -> npt.NDArray[np.generic]:
            shape = (cap,) + a.shape[1:]
            out = np.full(shape, fill, dtype=a.dtype)
            out[: a.shape[0]] = a
            return out

        self.alive = pad(self.alive)  # type: ignore[assignment]
        self.allocatable = pad(self.allocatable)  # type: ignore[assignment]
        self.requested = pad(self.requested)  # type: ignore[assignment]
        self.nonzero_requested = pad(self.nonzero_requested)  # type: ignore[assignment]
        self.unschedulable = pad(self.unschedulable)  # type: ignore[assignment]
        self.taint_matrix = pad(self.taint_matrix)  # type: ignore[assignment]
        for col in self.labels.values():
            col.ids = pad(col.ids, -1)  # type: ignore[assignment]
        for k, v in self.image_rows.items():
            self.image_rows[k] = pad(v)  # type: ignore[assignment]
        for ips in self.host_ports.values():
            for ip, arr in ips.items():
                ips[ip] = pad(arr)  # type: ignore[assignment]
        self.capacity = cap
        for listener in self.listeners:
            listener.grow(cap)

    def ensure_resource(self, resource: str) -> int:
        """Column of `resource`, adding a zero column the first time a name is seen."""
        col = self.resource_index.get(resource)
        if col is None:
            col = len(self.resource_index)
            self.resource_index[resource] = col
            z = np.zeros((self.capacity, 1), dtype=np.int64)
            self.allocatable = np.hstack([self.allocatable, z])
            self.requested = np.hstack([self.requested, z])
        return col

    def _taint_id(self, taint: Taint) -> int:
        tid = self.taint_ids.get(taint)
        if tid is None:
            tid = len(self.taint_list)
            self.taint_ids[taint] = tid
            self.taint_list.append(taint)
            z = np.zeros((self.capacity, 1), dtype=np.bool_)
            self.taint_matrix = np.hstack([self.taint_matrix, z])
        return tid

    # ---- nodes ---------------------------------------------------------------------------
    def upsert_node(self, node: Node) -> None:
        row = self.index.get(node.name)
        if row is None:
            if self.free_rows:
                row = self.free_rows.pop()
            else:
                self._grow(self.n_rows + 1)
                row = self.n_rows
                self.n_rows += 1
                self.nodes.append(None)
                self.pods_on_row.append({})
            self.index[node.name] = row
            self.alive[row] = True
            self._order = None
        else:
            self._clear_static(row)
        self.nodes[row] = node
        self._write_static(row, node)
        self.generation += 1
        self.static_generation += 1

    def _write_static(self, row: int, node: Node) -> None:
        self.allocatable[row, :] = 0
        for res, qty in node.allocatable.items():
            rcol = self.ensure_resource(res)  # may widen the matrix: index it afterwards
            self.allocatable[row, rcol] = qty
        self.unschedulable[row] = node.unschedulable
        for key, value in node.labels.items():
            col = self.labels.get(key)
            if col is None:
                col = LabelColumn(self.capacity)
                self.labels[key] = col
            vid = col.intern(value)
            col.ids[row] = vid
            col.counts[vid] += 1
        for t in node.taints:
            tid = self._taint_id(t)  # may widen the matrix: index it afterwards
            self.taint_matrix[row, tid] = True
        seen: set[str] = set()
        for img in node.images:
            for name in img.names:
                if name in seen:
                    continue
                seen.add(name)
                arr = self.image_rows.get(name)
                if arr is None:
                    arr = np.zeros(self.capacity, dtype=np.bool_)
                    self.image_rows[name] = arr
                arr[row] = True
                count = self.image_num_nodes.get(name, 0)
                if count == 0:  # kube keeps the size of the first node that reported it
                    self.image_size[name] = img.size_bytes
                self.image_num_nodes[name] = count + 1

    def _clear_static(self, row: int) -> None:
        old = self.node(row)
        for key in old.labels:
            col = self.labels[key]
            vid = int(col.ids[row])
            if vid >= 0:
                col.counts[vid] -= 1
            col.ids[row] = -1
        self.taint_matrix[row, :] = False
        seen: set[str] = set()
        for img in old.images:
            for name in img.names:
                if name in seen:  # counted once per node, as _write_static counts it
                    continue
                seen.add(name)
                self.image_rows[name][row] = False
                self.image_num_nodes[name] -= 1
                if self.image_num_nodes[name] == 0:  # kube drops the image state
                    del self.image_num_nodes[name]
                    del self.image_size[name]
        self.unschedulable[row] = False
        self.allocatable[row, :] = 0

    def remove_node(self, name: str) -> None:
        """Drop a node and the pods on it (we keep no ghost nodes, unlike kube's cache)."""
        row = self.index.get(name)
        if row is None:
            return
        for uid in list(self.pods_on_row[row]):
            self.remove_pod(uid)  # needs the name still indexed
        del self.index[name]
        self._clear_static(row)
        self.nodes[row] = None
        self.alive[row] = False
        self.requested[row, :] = 0
        self.nonzero_requested[row, :] = 0
        self.free_rows.append(row)
        self._order = None
        self.generation += 1
        self.static_generation += 1

    # ---- pods ----------------------------------------------------------------------------
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

    def add_nominated(self, pod: Pod) -> None:
        """A pending pod nominated to a node: counted only in the filter stage's first pass."""
        if pod.uid in self.pods or pod.uid in self.nominated:
            self.remove_pod(pod.uid)
        self.nominated[pod.uid] = PodRecord(
            info=pod_info(pod), node_name="", assumed=False,
            nominated_node_name=pod.nominated_node_name,
        )
        self.generation += 1

    def remove_pod(self, uid: str) -> PodRecord | None:
        rec = self.nominated.pop(uid, None)
        if rec is not None:
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

    def _account(self, rec: PodRecord, row: int, sign: int) -> None:
        info = rec.info
        for res, qty in info.requests.items():
            col = self.ensure_resource(res)
            self.requested[row, col] += sign * qty
        self.requested[row, 3] += sign  # pods
        self.nonzero_requested[row, 0] += sign * info.nonzero_cpu
        self.nonzero_requested[row, 1] += sign * info.nonzero_memory
        for protocol, port, ip in info.host_ports:  # app containers' and sidecars'
            ips = self.host_ports.setdefault((protocol, port), {})
            arr = ips.get(ip)
            if arr is None:
                arr = np.zeros(self.capacity, dtype=np.int32)
                ips[ip] = arr
            arr[row] += sign

    def add_listener(self, listener: PodListener) -> None:
        """Register an index and replay the pods already held into it."""
        self.listeners.append(listener)
        listener.grow(self.capacity)
        for rec in self.pods.values():
            listener.pod_added(rec, self.index[rec.node_name])

    def upsert_namespace(self, ns: Namespace) -> None:
        self.namespaces[ns.name] = ns
        self.generation += 1
        self.static_generation += 1
