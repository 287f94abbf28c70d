"""The PVs of one storage class as static matching reads them (kube's pvCache.ListVolumes(class)),
kept in the snapshot's storage until an update changes the objects or the nodes change.

A StatefulSet's claims are matched against every PV of their class for every pod, so what does
not change between pods is kept: the PVs in kube's preference order (smallest capacity, then by
name), the node-independent fields FindMatchingVolume tests, and the rows each distinct node
affinity admits (a local PV admits one row, a zonal one a third of them). An assume (Reserve)
changes only a PV's claimRef, which is read from the current object for each pod.
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

__all__ = ["ClassIndex", "ObjArray", "access_bits", "class_index"]

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
