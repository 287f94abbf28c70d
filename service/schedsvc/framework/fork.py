"""A copy-on-write fork of a snapshot: what a simulation schedules on (engine/simulate/).

`ForkSnapshot.of(base)` costs a few small copies; from then on the fork reads the base's
columns and maps and copies a part only when it first writes it: a numpy column whole, a
label column, an image's or host port's rows, a row's pod dict; maps keyed by pod or node
are overlays (overlay.py). Its pod indexes are forks of the base's (`fork(snap)` on each
listener); an index that cannot fork (preemption's VictimTable) is left out and built again
from the fork's pods the first time the fork asks for it.

Why overridden mutators and not a check in Snapshot: the live Schedule path keeps its code
and cost. The base is never written, not even for a moment: preemption lowers `requested`
in place around a filter and restores it, so the fork owns that column from the start.

Contract: the base does not change while a fork of it is alive (the cluster's lock is held,
or the base is a fork whose child is alive); `commit()` hands a fork's state to a base that
is itself a fork; nothing commits into a live snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, cast

import numpy as np
import numpy.typing as npt

from ..model import Node, Pod
from .interning import LabelColumn
from .node_tree import NodeTree
from .overlay import OverlayMap, RowDicts
from .pod_record import PodListener, PodRecord
from .podinfo import PodInfo
from .snapshot import Snapshot
from .storage import StorageFork

__all__ = ["ForkSnapshot", "ForkableListener"]

# numpy columns and containers a fork copies whole on its first write of them
_NODE_COLUMNS = ("alive", "allocatable", "unschedulable", "taint_matrix", "nodes", "free_rows")


class ForkableListener(PodListener, Protocol):
    """A pod index that can fork itself onto a fork of its snapshot and hand the fork's
    state back to itself (`commit` on the forked index)."""

    def fork(self, snap: Snapshot) -> PodListener: ...


class ForkedListener(PodListener, Protocol):
    """What `ForkableListener.fork` returns: an index that commits into its origin."""

    def commit(self) -> None: ...


def _copy_label(col: LabelColumn) -> LabelColumn:
    out = LabelColumn.__new__(LabelColumn)
    out.ids, out.vocab, out.index = col.ids.copy(), list(col.vocab), dict(col.index)
    out.counts, out.total = list(col.counts), col.total
    return out


def _copy_tree(tree: NodeTree) -> NodeTree:
    out = NodeTree.__new__(NodeTree)
    out.zone_seq, out.node_seq = list(tree.zone_seq), list(tree.node_seq)
    out.zone_of = dict(tree.zone_of)
    out.zones = {z: list(v) for z, v in tree.zones.items()}
    out._next_zone, out._next_node = tree._next_zone, tree._next_node
    return out


class ForkSnapshot(Snapshot):
    """A Snapshot over `origin` that never writes it; see the module docstring."""

    origin: Snapshot
    _owned: set[str]  # attribute names whose value is the fork's own
    _owned_labels: set[str]
    _owned_images: set[str]
    _owned_ports: set[tuple[str, int]]

    @classmethod
    def of(cls, base: Snapshot) -> ForkSnapshot:
        """A fork of `base` (a live snapshot or a fork). The base's visiting order is taken
        as it is, built or not: building it here would be exact for the base but not for a
        fork that then moves a node between zones (kube's list follows the tree only at its
        next rebuild), and the fork builds its own on its first read, into its own fields."""
        assert not base.temporaries, "temporaries live only inside a cycle"
        f = cls.__new__(cls)
        f.__dict__.update(base.__dict__)
        f.origin = base
        f._owned, f._owned_labels, f._owned_images, f._owned_ports = set(), set(), set(), set()
        f.index = OverlayMap(base.index)
        f.pods = OverlayMap(base.pods)
        f.nominated = OverlayMap(base.nominated)
        f.namespaces = OverlayMap(base.namespaces)
        f.pdbs = OverlayMap(base.pdbs)
        f.pod_groups = OverlayMap(base.pod_groups)
        f.workloads = OverlayMap(base.workloads)
        f.pods_on_row = RowDicts(base.pods_on_row)
        f.temporaries = {}
        # small, and written by every pod change (use counts): copied at once
        f.resource_index, f.resource_names = dict(base.resource_index), list(base.resource_names)
        f.resource_refs = list(base.resource_refs)
        f.taint_ids, f.taint_list = dict(base.taint_ids), list(base.taint_list)
        f.taint_refs = list(base.taint_refs)
        # preemption writes it in place around a filter (select_victims, nominated.py)
        f.requested = base.requested.copy()
        f.storage = base.storage.fork()
        f.listeners = [
            cast(ForkableListener, li).fork(f) for li in base.listeners if hasattr(li, "fork")
        ]
        return f

    def fork(self) -> ForkSnapshot:
        """A fork of this fork (a step tried and then kept or dropped)."""
        return ForkSnapshot.of(self)

    # ---- owning what is written -------------------------------------------------------------
    def _own(self, *names: str) -> None:
        for n in names:
            if n not in self._owned:
                setattr(self, n, getattr(self, n).copy())
                self._owned.add(n)

    def _own_label(self, key: str) -> None:
        if "labels" not in self._owned:
            self.labels = dict(self.labels)
            self._owned.add("labels")
        if key not in self._owned_labels and key in self.labels:
            self.labels[key] = _copy_label(self.labels[key])
        self._owned_labels.add(key)

    def _own_image(self, name: str) -> None:
        if "image_rows" not in self._owned:
            self._own("image_rows", "image_num_nodes", "image_size")
        if name not in self._owned_images and name in self.image_rows:
            self.image_rows[name] = self.image_rows[name].copy()
        self._owned_images.add(name)

    def _own_node_static(self, node: Node | None) -> None:
        """What a node's upsert or removal writes: the node columns, the tree, and the label
        columns and image rows `node` names (None: none)."""
        self._own(*_NODE_COLUMNS)
        if "tree" not in self._owned:
            self.tree = _copy_tree(self.tree)
            self._owned.add("tree")
        if node is None:
            return
        for key in node.labels:
            self._own_label(key)
        for img in node.images:
            for name in img.names:
                self._own_image(name)

    def _own_all(self) -> None:
        """Everything indexed by row, before the rows grow (every array is padded)."""
        self._own_node_static(None)
        self._own("nonzero_requested")
        for key in list(self.labels):
            self._own_label(key)
        for name in list(self.image_rows):
            self._own_image(name)
        for port in list(self.host_ports):
            self._own_port(port)

    def _own_port(self, key: tuple[str, int]) -> None:
        if "host_ports" not in self._owned:
            self._own("host_ports", "_host_port_uses")
        if key not in self._owned_ports and key in self.host_ports:
            self.host_ports[key] = {ip: a.copy() for ip, a in self.host_ports[key].items()}
        self._owned_ports.add(key)

    # ---- overridden mutators: own, then the Snapshot's code --------------------------------
    def _grow(self, need: int) -> None:
        if need > self.capacity:
            self._own_all()
        super()._grow(need)

    def upsert_node(self, node: Node) -> None:
        row = self.index.get(node.name)
        self._own_node_static(node)
        if row is not None:
            self._own_node_static(self.node(row))
        super().upsert_node(node)

    def remove_node(self, name: str) -> None:
        row = self.index.get(name)
        if row is None:
            return
        self._own_node_static(self.node(row))
        self._own("nonzero_requested")
        super().remove_node(name)

    def add_pod(
        self, pod: Pod, node_name: str, assumed: bool = False, info: PodInfo | None = None
    ) -> PodRecord:
        # a pod held already is removed first, by remove_pod below
        self._own("nonzero_requested")
        self._rows.own(self.index[node_name])
        return super().add_pod(pod, node_name, assumed, info)

    def account_copies(self, rows: npt.NDArray[np.intp], info: PodInfo) -> None:
        self._own("nonzero_requested")
        super().account_copies(rows, info)

    def add_records(
        self, pods: Sequence[Pod], names: Sequence[str], rows: Sequence[int], info: PodInfo
    ) -> None:
        own = self._rows.own
        for row in set(rows):
            own(row)
        super().add_records(pods, names, rows, info)

    def remove_pod(self, uid: str) -> PodRecord | None:
        rec = self.pods.get(uid)
        if rec is not None:
            self._own("nonzero_requested")
            self._rows.own(self.index[rec.node_name])
        return super().remove_pod(uid)

    def add_temporary(self, nominated: PodRecord, node_name: str) -> PodRecord:
        self._own("nonzero_requested")
        return super().add_temporary(nominated, node_name)

    def remove_temporary(self, rec: PodRecord) -> None:
        self._own("nonzero_requested")
        super().remove_temporary(rec)

    def _use_host_port(self, protocol: str, port: int, ip: str, row: int, sign: int) -> None:
        self._own_port((protocol, port))
        super()._use_host_port(protocol, port, ip, row, sign)

    def compact(self, force: bool = False) -> bool:
        """A fork never renumbers: its interned leftovers go with it."""
        return False

    @property
    def _rows(self) -> RowDicts[str, PodRecord]:
        return cast(RowDicts[str, PodRecord], self.pods_on_row)

    # ---- ending ----------------------------------------------------------------------------
    def commit(self) -> None:
        """Hand this fork's state to its origin (a fork): the origin then holds what this
        fork holds, as if the same changes had been made to it. This fork is spent."""
        base = self.origin
        if not isinstance(base, ForkSnapshot):
            raise TypeError("a fork commits into a fork, never into a live snapshot")
        mine = self.__dict__
        skip = {
            "origin", "index", "pods", "nominated", "namespaces", "pdbs", "pod_groups",
            "workloads", "pods_on_row",
            "storage", "listeners", "temporaries", "_owned", "_owned_labels",
            "_owned_images", "_owned_ports",
        }
        for name, value in mine.items():
            if name not in skip:
                setattr(base, name, value)
        for name in ("index", "pods", "nominated", "namespaces", "pdbs", "pod_groups", "workloads"):
            cast(OverlayMap[str, object], mine[name]).merge_into(getattr(base, name))
        self._rows.merge_into(base.pods_on_row)
        cast(StorageFork, self.storage).commit()
        forked = [li for li in self.listeners if hasattr(li, "commit")]
        for li in forked:
            cast(ForkedListener, li).commit()
        # indexes the origin holds but could not fork missed these changes: built again
        base.listeners = [li for li in base.listeners if hasattr(li, "fork")]
        base._owned |= self._owned
        base._owned_labels |= self._owned_labels
        base._owned_images |= self._owned_images
        base._owned_ports |= self._owned_ports
        self.discard()

    def discard(self) -> None:
        """Drop this fork: nothing of it reached its origin, nothing needs undoing."""
        self.__dict__.clear()
