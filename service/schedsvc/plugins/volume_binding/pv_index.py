"""The PVs of one storage class as static matching reads them (kube's pvCache.ListVolumes(class)),
kept in the snapshot's storage until an update changes the objects or the nodes change.

A StatefulSet's claims are matched against every PV of their class for every pod, so what does
not change between pods is kept: the PVs in kube's preference order (smallest capacity, then by
name), the node-independent fields FindMatchingVolume tests, and the rows each distinct node
affinity admits (a local PV admits one row, a zonal one a third of them). An assume (Reserve)
changes only a PV's claimRef: the class's PVs as they are now, with their claimRefs, are kept
beside the index (ClassRefs) and brought up to date from the storage's log of the PVs assumes
and restores replaced.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ...framework.snapshot import BoolArray, IntArray, Snapshot
from ...framework.storage import StorageState
from ...model import NodeSelectorTerm
from ...model_storage import ACCESS_MODES, FILESYSTEM, PersistentVolume
from .matching import affinity_rows

__all__ = ["ClassIndex", "ClassRefs", "ObjArray", "access_bits", "class_index", "class_refs"]

ObjArray = npt.NDArray[np.object_]


def access_bits(modes: tuple[str, ...]) -> int:
    """Access modes as a bit set (the API admits only ACCESS_MODES)."""
    out = 0
    for m in modes:
        out |= 1 << ACCESS_MODES.index(m)
    return out


@dataclass(frozen=True, slots=True)
class ClassIndex:
    """`names` in preference order; per PV its capacity, volume mode, VolumeAttributesClass,
    deletion, phase Available, access modes and spec class; `group` its node affinity's index
    into the CSR `indptr`/`rows` (the rows that affinity admits)."""

    key: tuple[int, int, int]
    names: tuple[str, ...]
    capacity: IntArray
    volume_mode: ObjArray
    attributes_class: ObjArray
    deleting: BoolArray
    available: BoolArray
    access: IntArray
    spec_class: ObjArray  # spec.storageClassName (Score groups by it, not the annotation)
    group: IntArray
    indptr: IntArray
    rows: IntArray


def _key(snap: Snapshot) -> tuple[int, int, int]:
    return (snap.storage.objects_generation, snap.static_generation, snap.n_rows)


def _groups(
    pvs: list[PersistentVolume], snap: Snapshot
) -> tuple[IntArray, IntArray, IntArray]:
    """Each PV's affinity group, and the rows of each group as CSR."""
    ids: dict[tuple[NodeSelectorTerm, ...] | None, int] = {}
    chunks: list[npt.NDArray[np.intp]] = []
    group = np.empty(len(pvs), dtype=np.int64)
    for i, pv in enumerate(pvs):
        g = ids.get(pv.node_affinity)
        if g is None:
            g = ids[pv.node_affinity] = len(chunks)
            chunks.append(affinity_rows(pv, snap))
        group[i] = g
    indptr = np.zeros(len(chunks) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(c) for c in chunks])
    rows = np.concatenate(chunks).astype(np.int64) if chunks else np.zeros(0, dtype=np.int64)
    return group, indptr, rows


def _build(cls: str, snap: Snapshot) -> ClassIndex:
    pvs = sorted(
        (pv for pv in snap.storage.pvs.values() if pv.class_name() == cls),
        key=lambda p: (p.capacity or 0, p.name),
    )
    group, indptr, rows = _groups(pvs, snap)
    n = len(pvs)
    return ClassIndex(
        key=_key(snap),
        names=tuple(p.name for p in pvs),
        capacity=np.fromiter((p.capacity or 0 for p in pvs), dtype=np.int64, count=n),
        volume_mode=np.array([p.volume_mode or FILESYSTEM for p in pvs] + [None])[:n],
        attributes_class=np.array(
            [p.volume_attributes_class_name or "" for p in pvs] + [None]
        )[:n],
        deleting=np.fromiter((p.deleting for p in pvs), dtype=np.bool_, count=n),
        available=np.fromiter((p.phase == "Available" for p in pvs), dtype=np.bool_, count=n),
        access=np.fromiter((access_bits(p.access_modes) for p in pvs), dtype=np.int64, count=n),
        spec_class=np.array([p.storage_class_name for p in pvs] + [None])[:n],
        group=group, indptr=indptr, rows=rows,
    )


def class_index(cls: str, snap: Snapshot) -> ClassIndex:
    """The class's index, built on first use after an update or a node change."""
    storage: StorageState = snap.storage
    key = ("volume-binding-class", cls)
    hit = storage.derived.get(key)
    if isinstance(hit, ClassIndex) and hit.key == _key(snap):
        return hit
    built = _build(cls, snap)
    storage.derived[key] = built
    return built


class ClassRefs:
    """The index's PVs as they are now (`pvs`), whether each has a claimRef, and the positions
    whose claimRef names each claim (namespace, name). Kept for one StorageState (a fork's
    storage builds its own: this object is updated in place) and one index."""

    __slots__ = ("index", "owner", "epoch", "seen", "pvs", "has_ref", "by_claim", "_pos")

    def __init__(self, index: ClassIndex, storage: StorageState) -> None:
        self.index = index
        self.owner = storage
        self.epoch = storage.pv_changes_epoch
        self.seen = len(storage.pv_changes)
        self.pvs = [storage.pvs[name] for name in index.names]
        self._pos = {name: i for i, name in enumerate(index.names)}
        self.has_ref = np.zeros(len(self.pvs), dtype=np.bool_)
        self.by_claim: dict[tuple[str, str], set[int]] = {}
        for i, pv in enumerate(self.pvs):
            self._note(i, pv, +1)

    def _note(self, i: int, pv: PersistentVolume, sign: int) -> None:
        ref = pv.claim_ref
        if ref is None:
            return
        self.has_ref[i] = sign > 0
        key = (ref.namespace, ref.name)
        if sign > 0:
            self.by_claim.setdefault(key, set()).add(i)
            return
        held = self.by_claim.get(key)
        if held is not None:
            held.discard(i)
            if not held:
                del self.by_claim[key]

    def current(self, storage: StorageState) -> bool:
        """Up to date with `storage`'s log (False: it cannot be, build anew)."""
        if storage is not self.owner or storage.pv_changes_epoch != self.epoch:
            return False
        log = storage.pv_changes
        for name in log[self.seen:]:
            i = self._pos.get(name)
            if i is None:
                continue
            self._note(i, self.pvs[i], -1)
            self.pvs[i] = storage.pvs[name]
            self._note(i, self.pvs[i], +1)
        self.seen = len(log)
        return True


def class_refs(cls: str, index: ClassIndex, storage: StorageState) -> ClassRefs:
    """The class's PVs as they are now, kept beside its index."""
    key = ("volume-binding-refs", cls)
    hit = storage.derived.get(key)
    if isinstance(hit, ClassRefs) and hit.index is index and hit.current(storage):
        return hit
    built = ClassRefs(index, storage)
    storage.derived[key] = built
    return built
