"""Columnar cluster state: one row per node, numpy columns, O(1) Python work per change.

Rows never move: a removed node leaves a free row that the next new node reuses, so anything
indexed by row (plugin caches, pod-count indexes) stays valid across updates. `alive` marks the
rows in use; `order` lists them in kube's visiting order (the node tree's, framework/node_tree.py:
zones interleaved), and `position` maps a row to its place there.

Two generation counters let caches invalidate cheaply: `generation` moves on every change,
`static_generation` only when what static filters read (the node set, labels, taints,
unschedulable, images) changes. Usage changes (assume/forget) do not move it.

Names are interned only for what the cluster holds (nodes, held pods), never for a pod being
scheduled or explained, and every use is counted so `compact` can drop the dead ones
(engine/interning.py): a cluster's memory follows what it holds.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping

import numpy as np
import numpy.typing as npt

from ..model import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    Namespace,
    Node,
    PodDisruptionBudget,
    Taint,
)
from ..model_pod_group import PodGroup, Workload
from .interning import LabelColumn, kept_columns, worth_compacting
from .node_tree import NodeTree, zone_key
from .overlay import RowTable
from .pod_record import NominatedKey, PodListener, PodRecord
from .snapshot_pods import SnapshotPods
from .storage import StorageState

__all__ = [
    "Snapshot",
    "PodRecord",
    "PodListener",
    "NominatedKey",
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


class Snapshot(SnapshotPods):
    """A cluster's nodes and pods. Mutated only under the cluster lock, between cycles."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self.generation = 0
        self.static_generation = 0
        self.n_rows = 0  # high-water mark of rows ever used
        self.free_rows: list[int] = []
        # the maps of pods and nodes are dicts here, overlays in a fork (fork.py)
        self.index: MutableMapping[str, int] = {}
        self.nodes: list[Node | None] = []
        self.alive = np.zeros(capacity, dtype=np.bool_)
        self.tree = NodeTree()
        self._order: npt.NDArray[np.intp] | None = np.zeros(0, dtype=np.intp)
        self._position: npt.NDArray[np.intp] | None = None
        self._ascending = True
        self.resource_index: dict[str, int] = {r: i for i, r in enumerate(_BASE_RESOURCES)}
        self.resource_names: list[str] = list(_BASE_RESOURCES)
        # per column: nodes whose allocatable names it + held pods requesting it
        self.resource_refs: list[int] = [0] * len(_BASE_RESOURCES)
        self.allocatable = np.zeros((capacity, len(_BASE_RESOURCES)), dtype=np.int64)
        self.requested = np.zeros((capacity, len(_BASE_RESOURCES)), dtype=np.int64)
        self.nonzero_requested = np.zeros((capacity, 2), dtype=np.int64)  # cpu, memory
        self.unschedulable = np.zeros(capacity, dtype=np.bool_)
        self.labels: dict[str, LabelColumn] = {}
        self.taint_ids: dict[Taint, int] = {}
        self.taint_list: list[Taint] = []
        self.taint_refs: list[int] = []  # per taint column: nodes carrying it
        self.taint_matrix = np.zeros((capacity, 0), dtype=np.bool_)
        # kube's cache imageStates, keyed by the names nodes report (not normalized): the rows
        # holding each name, how many nodes do, and the size first reported for it
        self.image_rows: dict[str, BoolArray] = {}
        self.image_num_nodes: dict[str, int] = {}
        self.image_size: dict[str, int] = {}
        # (protocol, port) -> host ip -> count of pods using it per row
        self.host_ports: dict[tuple[str, int], dict[str, npt.NDArray[np.int32]]] = {}
        self._host_port_uses: dict[tuple[str, int, str], int] = {}  # pods per (key, ip)
        self.pods: MutableMapping[str, PodRecord] = {}
        self.pods_on_row: RowTable[dict[str, PodRecord]] = list[dict[str, PodRecord]]()
        self.nominated: MutableMapping[str, PodRecord] = {}  # uid -> pods only nominated
        self.namespaces: MutableMapping[str, Namespace] = {}
        self.pdbs: MutableMapping[str, PodDisruptionBudget] = {}  # "namespace/name" -> budget
        # scheduling.k8s.io/v1beta1, "namespace/name" -> object (model_pod_group.py)
        self.pod_groups: MutableMapping[str, PodGroup] = {}
        self.workloads: MutableMapping[str, Workload] = {}
        self.storage = StorageState()  # PVs, claims, classes, CSI objects (storage.py)
        self.listeners: list[PodListener] = []
        self.temporaries: dict[NominatedKey, PodRecord] = {}  # nominated pods counted on a node

    # ---- reading -------------------------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        return len(self.index)

    @property
    def order(self) -> npt.NDArray[np.intp]:
        """Alive rows in visiting order, kube's node tree list(). Rebuilt, as kube rebuilds its
        snapshot's node list, only when a node was added or removed: a node whose zone changed
        moves in the tree at once but in the list at the next rebuild."""
        if self._order is None:
            order = self.tree.order(np.flatnonzero(self.alive[: self.n_rows]).astype(np.intp))
            self._order, self._position = order, None
            self._ascending = bool((order[1:] > order[:-1]).all())
        return self._order

    @property
    def order_ascending(self) -> bool:
        """Whether the visiting order is the rows ascending (one zone, or nodes added zone by
        zone in turn, and no row reused out of turn)."""
        self.order  # noqa: B018 - rebuilds the flag with the order
        return self._ascending

    @property
    def position(self) -> npt.NDArray[np.intp]:
        """Row -> its index in `order` (-1 for a free row); rows beyond it are free too."""
        order = self.order
        if self._position is None:
            pos = np.full(self.n_rows, -1, dtype=np.intp)
            pos[order] = np.arange(len(order), dtype=np.intp)
            self._position = pos
        return self._position

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

    def _ref_resource(self, resource: str, delta: int) -> int:
        """Column of `resource` with its use count moved by `delta`; a name seen for the first
        time gets a zero column. Only what the cluster holds (nodes, held pods) calls this:
        a read-only request never adds a column."""
        col = self.resource_index.get(resource)
        if col is None:
            col = len(self.resource_names)
            self.resource_index[resource] = col
            self.resource_names.append(resource)
            self.resource_refs.append(0)
            z = np.zeros((self.capacity, 1), dtype=np.int64)
            self.allocatable = np.hstack([self.allocatable, z])
            self.requested = np.hstack([self.requested, z])
        self.resource_refs[col] += delta
        return col

    def _taint_id(self, taint: Taint) -> int:
        """Column of `taint`, counted once more (one more node carries it)."""
        tid = self.taint_ids.get(taint)
        if tid is None:
            tid = len(self.taint_list)
            self.taint_ids[taint] = tid
            self.taint_list.append(taint)
            self.taint_refs.append(0)
            z = np.zeros((self.capacity, 1), dtype=np.bool_)
            self.taint_matrix = np.hstack([self.taint_matrix, z])
        self.taint_refs[tid] += 1
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
            self.tree.add(row, zone_key(node.labels))
            self._order = None
        else:
            self._clear_static(row)
            self.tree.update(row, zone_key(node.labels))
        self.nodes[row] = node
        self._write_static(row, node)
        self.generation += 1
        self.static_generation += 1

    def _write_static(self, row: int, node: Node) -> None:
        self.allocatable[row, :] = 0
        for res, qty in node.allocatable.items():
            rcol = self._ref_resource(res, +1)  # may widen the matrix: index it afterwards
            self.allocatable[row, rcol] = qty
        self.unschedulable[row] = node.unschedulable
        for key, value in node.labels.items():
            col = self.labels.get(key)
            if col is None:
                col = LabelColumn(self.capacity)
                self.labels[key] = col
            col.set(row, value)
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
            self.labels[key].clear(row)
        for t in old.taints:
            self.taint_refs[self.taint_ids[t]] -= 1
        for res in old.allocatable:
            self.resource_refs[self.resource_index[res]] -= 1
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
                    del self.image_rows[name]
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
        self.tree.remove(row)
        self._order = None
        self.generation += 1
        self.static_generation += 1

    def upsert_namespace(self, ns: Namespace) -> None:
        self.namespaces[ns.name] = ns
        self.generation += 1
        self.static_generation += 1

    # ---- compaction ----------------------------------------------------------------------
    def compact(self, force: bool = False) -> bool:
        """Drop interned names nothing holds any more (see engine/interning.py), when enough
        are dead to be worth it (always with `force`). Rows do not move. Returns whether
        column numbers or value ids changed: then whatever kept them across cycles (batch
        state) must be dropped. Both generations move, so caches keyed on them miss."""
        changed = False
        nres = len(self.resource_names)
        dead = sum(1 for c, n in enumerate(self.resource_refs) if c >= 4 and n <= 0)
        if dead and (force or worth_compacting(dead, nres - 4 - dead)):
            self._compact_resources()
            changed = True
        dead = sum(1 for n in self.taint_refs if n <= 0)
        if dead and (force or worth_compacting(dead, len(self.taint_refs) - dead)):
            self._compact_taints()
            changed = True
        empty = [k for k, col in self.labels.items() if col.total == 0]
        if empty and (force or worth_compacting(len(empty), len(self.labels) - len(empty))):
            for k in empty:
                del self.labels[k]
            changed = True
        for col in self.labels.values():
            dead = col.dead
            if dead and (force or worth_compacting(dead, len(col.vocab) - dead)):
                col.compact()
                changed = True
        if changed:
            self.generation += 1
            self.static_generation += 1
        return changed

    def _compact_resources(self) -> None:
        keep = kept_columns(self.resource_refs, len(_BASE_RESOURCES))
        self.allocatable = np.ascontiguousarray(self.allocatable[:, keep])
        self.requested = np.ascontiguousarray(self.requested[:, keep])
        self.resource_names = [self.resource_names[c] for c in keep]
        self.resource_refs = [self.resource_refs[c] for c in keep]
        self.resource_index = {r: i for i, r in enumerate(self.resource_names)}

    def _compact_taints(self) -> None:
        keep = kept_columns(self.taint_refs, 0)
        self.taint_matrix = np.ascontiguousarray(self.taint_matrix[:, keep])
        self.taint_list = [self.taint_list[t] for t in keep]
        self.taint_refs = [self.taint_refs[t] for t in keep]
        self.taint_ids = {t: i for i, t in enumerate(self.taint_list)}
