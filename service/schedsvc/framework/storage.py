"""The snapshot's storage objects: what kube's volume plugins list from their informers
(PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities,
VolumeAttachments), keyed as kube keys them. UpdateSnapshot changes them; the assume of a pod
whose claims VolumeBinding bound changes the objects it assumed (kube's assume cache), so the
next pod of the request sees them taken.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass

from ..model_storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
    VolumeBindingResult,
)
from .overlay import OverlayMap

__all__ = ["Assumption", "StorageFork", "StorageState"]

# the object maps, each keyed as kube keys the kind
_OBJECTS = ("pvs", "pvcs", "classes", "csi_nodes", "csi_drivers", "capacities", "attachments")

_PV_CHANGES_KEPT = 4096


@dataclass(frozen=True, slots=True)
class Assumption:
    """What one placed pod's Reserve assumed: each object as it was and as assumed, and what
    the Placement reports (`volume_bindings`)."""

    pvs: tuple[tuple[PersistentVolume, PersistentVolume], ...]  # (original, assumed)
    pvcs: tuple[tuple[PersistentVolumeClaim, PersistentVolumeClaim], ...]
    results: tuple[VolumeBindingResult, ...]


class StorageState:
    """Changed under the cluster's lock only, as the rest of the snapshot."""

    __slots__ = (
        "pvs", "pvcs", "classes", "csi_nodes", "csi_drivers", "capacities", "attachments",
        "generation", "objects_generation", "assumed", "derived", "pv_changes",
        "pv_changes_epoch",
    )

    def __init__(self) -> None:
        # dicts here, overlays in a fork (fork())
        self.pvs: MutableMapping[str, PersistentVolume] = {}  # name -> PV
        self.pvcs: MutableMapping[str, PersistentVolumeClaim] = {}  # "namespace/name" -> claim
        self.classes: MutableMapping[str, StorageClass] = {}  # name -> class
        self.csi_nodes: MutableMapping[str, CSINode] = {}  # node name -> CSINode
        self.csi_drivers: MutableMapping[str, CSIDriver] = {}  # name -> driver
        self.capacities: MutableMapping[str, CSIStorageCapacity] = {}  # "ns/name" -> capacity
        self.attachments: MutableMapping[str, VolumeAttachment] = {}  # name -> attachment
        # moves on every change (an update's or an assume's), so state derived from the
        # objects (a plugin's PreFilter result kept by batching) knows when it is stale
        self.generation = 0
        # moves only when an update changes the objects (not on an assume, which changes only
        # claimRefs and selected nodes): what is derived from CSINodes, VolumeAttachments and
        # PVs' sources keys on it, so a request of pods with claims does not rebuild it per pod
        self.objects_generation = 0
        # what plugins derive from the objects and the nodes, each entry keyed and checked by
        # what it depends on (a PV's node affinity over every row, per static generation)
        self.derived: dict[object, object] = {}
        # pod uid -> what its Reserve assumed, until the pod is bound (upserted) or removed
        self.assumed: MutableMapping[str, Assumption] = {}
        # the names of the PVs an assume or restore replaced, in order, so what is kept per PV
        # between updates (VolumeBinding's claimRefs per class) reads only those; bounded: past
        # _PV_CHANGES_KEPT the log restarts under a new epoch and its readers rebuild
        self.pv_changes: list[str] = []
        self.pv_changes_epoch = 0

    def is_empty(self) -> bool:
        return not (
            self.pvs or self.pvcs or self.classes or self.csi_nodes or self.csi_drivers
            or self.capacities or self.attachments
        )

    # ---- kube's assume cache ------------------------------------------------------------------
    def assume(self, uid: str, assumption: Assumption) -> None:
        """A placed pod's claims bound in our state (VolumeBinding's Reserve): the next pod
        sees the PVs taken and the claims' selected node. An upsert of one of these objects
        by the client replaces the assumed copy, as kube's informer object wins."""
        for _, pv in assumption.pvs:
            self.pvs[pv.name] = pv
            self._pv_changed(pv.name)
        for _, pvc in assumption.pvcs:
            self.pvcs[pvc.key] = pvc
        self.assumed[uid] = assumption
        self.generation += 1

    def restore(self, uid: str) -> None:
        """The pod went away before it was bound: put back the originals of the objects still
        as assumed (one the client upserted or removed since stays as the client left it)."""
        a = self.assumed.pop(uid, None)
        if a is None:
            return
        # a binding another placed pod of the same claim reports (its Reserve found it
        # assumed already) stays, as kube's assume cache keeps it
        held = {b.claim for o in self.assumed.values() for b in o.results}
        held |= {b.volume_name for o in self.assumed.values() for b in o.results}
        for original, pv in a.pvs:
            if self.pvs.get(pv.name) is pv and pv.name not in held:
                self.pvs[pv.name] = original
                self._pv_changed(pv.name)
        for original_claim, pvc in a.pvcs:
            if self.pvcs.get(pvc.key) is pvc and pvc.key not in held:
                self.pvcs[pvc.key] = original_claim
        self.generation += 1

    def _pv_changed(self, name: str) -> None:
        if len(self.pv_changes) >= _PV_CHANGES_KEPT:
            self.pv_changes = []
            self.pv_changes_epoch += 1
        self.pv_changes.append(name)

    def forget(self, uid: str) -> None:
        """The pod is bound: its assumed objects stay until the client upserts them."""
        self.assumed.pop(uid, None)

    def bindings(self, uid: str) -> tuple[VolumeBindingResult, ...]:
        a = self.assumed.get(uid)
        return a.results if a is not None else ()

    # ---- forks --------------------------------------------------------------------------------
    def fork(self) -> StorageFork:
        """A copy-on-write view for a forked snapshot (framework/fork.py): the maps are
        overlays, `derived` starts empty. Not an overlay of this one's: a derived value may
        be changed in place by whoever finds it (an incremental cache), and the fork's
        generation numbers run into this one's future ones."""
        f = StorageFork()  # what is not taken below starts as in a new state
        f.origin = self
        for name in (*_OBJECTS, "assumed"):
            setattr(f, name, OverlayMap(getattr(self, name)))
        f.generation, f.objects_generation = self.generation, self.objects_generation
        return f


class StorageFork(StorageState):
    """A fork's storage: never writes `origin`; `commit` hands its changes to it."""

    __slots__ = ("origin",)

    origin: StorageState

    def commit(self) -> None:
        """The origin (a fork's storage) takes this one's objects and generations; what it
        derived before is dropped (keys may name this fork's objects, which then go)."""
        base = self.origin
        for name in (*_OBJECTS, "assumed"):
            mine = getattr(self, name)
            assert isinstance(mine, OverlayMap)
            mine.merge_into(getattr(base, name))
        base.generation, base.objects_generation = self.generation, self.objects_generation
        base.derived = {}
