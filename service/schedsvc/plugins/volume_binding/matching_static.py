"""Static matching of delayed claims to available PVs on every row (kube's findMatchingVolumes
over FindMatchingVolume), worked out once per pod and read per block.

Claims go by requested size (a stable sort); on each row a claim takes the first PV in
preference order (smallest capacity, then name) whose node affinity admits the row and that no
earlier claim took there. Since an earlier claim takes at most one PV per row, the k-th claim
needs at most the first k+1 candidates of each affinity group: those are expanded into (row,
PV) pairs over the group's rows, the taken pairs dropped, and the smallest PV per row kept.

PVs of equal capacity are tried by name: kube's choice among them follows Go map order and is
not deterministic, ours is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...framework import Rows
from ...framework.snapshot import BoolArray, IntArray, Snapshot
from ...model_storage import FILESYSTEM, PersistentVolume, PersistentVolumeClaim
from .matching import refers_to
from .pv_index import ClassIndex, ClassRefs, ObjArray, access_bits, class_index, class_refs

__all__ = ["Candidates", "candidates", "StaticMatch", "match_static"]

_NONE = np.iinfo(np.int64).max


@dataclass(frozen=True, slots=True)
class Candidates:
    """A claim's PVs past FindMatchingVolume's node-independent tests, as positions in its
    class's index: the one pre-bound to it (-1: none; when its affinity fits, no other is
    tried), and the others in preference order."""

    prebound: int
    fits: IntArray


def candidates(claim: PersistentVolumeClaim, idx: ClassIndex, refs: ClassRefs) -> Candidates:
    """Tests 2-6 for every PV (claimRef, capacity, volume mode, VolumeAttributesClass,
    deletion), then 9-13 for a PV not pre-bound (Available, selector, class, access modes).
    `refs` holds the index's PVs as they are now (an assume sets claimRefs)."""
    pvs, has_ref = refs.pvs, refs.has_ref
    common = (
        (idx.capacity >= (claim.request or 0))
        & (idx.volume_mode == (claim.volume_mode or FILESYSTEM))
        & (idx.attributes_class == (claim.volume_attributes_class_name or ""))
        & ~idx.deleting
    )
    named = refs.by_claim.get((claim.namespace, claim.name), ())
    referring = [i for i in named if common[i] and refers_to(pvs[i], claim)]
    if referring:  # kube returns the first it meets (map order): ours, the first by name
        return Candidates(min(referring, key=lambda i: idx.names[i]), np.zeros(0, np.int64))
    want = access_bits(claim.access_modes)
    ok = common & ~has_ref & idx.available & ((idx.access & want) == want)
    fits = np.flatnonzero(ok).astype(np.int64)
    sel = claim.selector
    if sel is not None:
        fits = np.asarray([i for i in fits.tolist() if sel.matches(pvs[i].labels)], np.int64)
    return Candidates(-1, fits)


@dataclass(slots=True)
class StaticMatch:
    """Per claim (in `claims` order) and row, the index into `pvs` of the PV chosen, -1 for
    none; `all_found[r]` when every claim found one on row r."""

    claims: tuple[PersistentVolumeClaim, ...]
    pvs: list[PersistentVolume]
    chosen: IntArray  # (len(claims), len(rows))
    all_found: BoolArray
    # per PV of `pvs`: capacity and spec.storageClassName (Score's grouping), made on first use
    columns: tuple[IntArray, ObjArray] | None = None

    def take(self, rows: Rows) -> StaticMatch:
        """The match on `rows` (of a match over every row)."""
        return StaticMatch(
            self.claims, self.pvs, self.chosen[:, rows], self.all_found[rows], self.pv_columns()
        )

    def pv_columns(self) -> tuple[IntArray, ObjArray]:
        if self.columns is None:
            n = len(self.pvs)
            self.columns = (
                np.fromiter((p.capacity or 0 for p in self.pvs), dtype=np.int64, count=n),
                np.array([p.storage_class_name for p in self.pvs] + [None])[:n],
            )
        return self.columns


def _firsts_per_group(idx: ClassIndex, fits: IntArray, k: int) -> IntArray:
    """The first k+1 of `fits` (ascending) in each affinity group, ascending."""
    g = idx.group[fits]
    order = np.argsort(g, kind="stable")
    gs = g[order]
    starts = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
    rank = np.arange(len(gs)) - np.repeat(starts, np.diff(np.r_[starts, len(gs)]))
    out: IntArray = np.sort(fits[order][rank <= k])
    return out


def _expand(idx: ClassIndex, pos: IntArray) -> tuple[IntArray, IntArray]:
    """(row, position) for every row each PV's affinity admits."""
    g = idx.group[pos]
    lengths = idx.indptr[g + 1] - idx.indptr[g]
    total = int(lengths.sum())
    offsets = np.repeat(idx.indptr[g] - (np.cumsum(lengths) - lengths), lengths)
    rows: IntArray = idx.rows[offsets + np.arange(total)]
    return rows, np.repeat(pos, lengths)


def _first_free(
    idx: ClassIndex, pos: IntArray, base: int, earlier: IntArray, n_rows: int
) -> IntArray:
    """Per row, base + the first of `pos` admitted there and not taken by an earlier claim."""
    rows, at = _expand(idx, pos)
    gid = at + base
    if len(earlier):
        free = ~(earlier[:, rows] == gid).any(axis=0)
        rows, gid = rows[free], gid[free]
    first = np.full(n_rows, _NONE, dtype=np.int64)
    np.minimum.at(first, rows, gid)
    first[first == _NONE] = -1
    return first


def match_static(claims: Sequence[PersistentVolumeClaim], snap: Snapshot) -> StaticMatch:
    """findMatchingVolumes on every row."""
    ordered = tuple(sorted(claims, key=lambda c: c.request or 0))
    pvs: list[PersistentVolume] = []
    columns: list[tuple[IntArray, ObjArray]] = []
    classes: dict[str, tuple[ClassIndex, ClassRefs, int]] = {}
    chosen = np.full((len(ordered), snap.n_rows), -1, dtype=np.int64)
    for k, claim in enumerate(ordered):
        cls = claim.class_name()
        if cls not in classes:
            idx = class_index(cls, snap)
            refs = class_refs(cls, idx, snap.storage)
            classes[cls] = (idx, refs, len(pvs))
            pvs.extend(refs.pvs)
            columns.append((idx.capacity, idx.spec_class))
        idx, refs, base = classes[cls]
        cand = candidates(claim, idx, refs)
        if cand.prebound >= 0:
            pos = np.array([cand.prebound], dtype=np.int64)
        elif len(cand.fits):
            pos = _firsts_per_group(idx, cand.fits, k)
        else:
            continue
        chosen[k] = _first_free(idx, pos, base, chosen[:k], snap.n_rows)
    all_found: BoolArray = np.asarray((chosen >= 0).all(axis=0), dtype=np.bool_)
    pv_columns = (
        (np.concatenate([c for c, _ in columns]), np.concatenate([s for _, s in columns]))
        if columns else None
    )
    return StaticMatch(ordered, pvs, chosen, all_found, pv_columns)
