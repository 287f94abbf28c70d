"""Static matching of delayed claims to available PVs on each node of a block (kube's
findMatchingVolumes over FindMatchingVolume), and a PV's node affinity over rows
(CheckNodeAffinity). The node-independent tests run once per claim and PV; the node affinity
is a mask over the block (the NodeAffinity kernels); the per-node choice with the PVs already
chosen for the pod's earlier claims excluded is argmax over a PV-by-row matrix.

PVs of equal capacity are tried by name: kube's choice among them follows Go map order and is
not deterministic, ours is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...framework import Rows
from ...framework.snapshot import BoolArray, IntArray, Snapshot
from ...model import NodeSelectorTerm
from ...model_storage import FILESYSTEM, PersistentVolume, PersistentVolumeClaim
from ..selectors import CompiledTerm, NodeSelector, compile_node_selector

__all__ = ["affinity_mask", "Candidates", "candidates", "StaticMatch", "match_static"]


def affinity_mask(pv: PersistentVolume, snap: Snapshot, rows: Rows) -> BoolArray:
    """CheckNodeAffinity(pv, node labels): kube builds the node from its labels alone, so a
    matchFields requirement that parses holds on every node; unparsable terms never match."""
    if pv.node_affinity is None:
        return np.ones(len(rows), dtype=np.bool_)
    return _over_every_row(pv.node_affinity, snap)[rows]


def _over_every_row(terms: tuple[NodeSelectorTerm, ...], snap: Snapshot) -> BoolArray:
    """The affinity over every row, kept with the snapshot's storage until the nodes or their
    labels change (static_generation): a PV is tried for each pod on each block of rows, and
    its affinity reads labels only."""
    key = ("pv-node-affinity", terms)
    version = (snap.static_generation, snap.n_rows)
    hit = snap.storage.derived.get(key)
    if isinstance(hit, tuple) and hit[0] == version:
        mask: BoolArray = hit[1]
        return mask
    mask = _labels_only(terms).mask(snap, np.arange(snap.n_rows, dtype=np.intp))
    snap.storage.derived[key] = (version, mask)
    return mask


@lru_cache(maxsize=4096)
def _labels_only(terms: tuple[NodeSelectorTerm, ...]) -> NodeSelector:
    """A PV's node affinity compiled once (PVs are few and their affinities repeat), with its
    matchFields dropped as CheckNodeAffinity drops them."""
    sel = compile_node_selector(terms)
    return NodeSelector(terms=tuple(CompiledTerm(t.labels, ()) for t in sel.terms))


def _refers_to(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    ref = pv.claim_ref
    return (
        ref is not None and ref.name == claim.name and ref.namespace == claim.namespace
        and (not ref.uid or ref.uid == claim.uid)
    )


@dataclass(frozen=True, slots=True)
class Candidates:
    """A claim's PVs past FindMatchingVolume's node-independent tests: the one pre-bound to it
    (returned whenever its affinity fits, and then no other is tried), and the others, smallest
    capacity first."""

    prebound: PersistentVolume | None
    fits: tuple[PersistentVolume, ...]


def _passes_common(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """Tests 2-6: claimRef, capacity, volume mode, VolumeAttributesClass, deletion."""
    if pv.claim_ref is not None and not _refers_to(pv, claim):
        return False
    if (pv.capacity or 0) < (claim.request or 0):
        return False
    if (pv.volume_mode or FILESYSTEM) != (claim.volume_mode or FILESYSTEM):
        return False
    if (pv.volume_attributes_class_name or "") != (claim.volume_attributes_class_name or ""):
        return False
    return not pv.deleting


def candidates(claim: PersistentVolumeClaim, pvs: Sequence[PersistentVolume]) -> Candidates:
    """Tests 9-13 for a PV not pre-bound: Available, the selector, the class, access modes."""
    prebound: PersistentVolume | None = None
    fits: list[PersistentVolume] = []
    cls = claim.class_name()
    for pv in pvs:
        if not _passes_common(pv, claim):
            continue
        if pv.claim_ref is not None:
            if prebound is None:
                prebound = pv
            continue
        if pv.phase != "Available":
            continue
        if claim.selector is not None and not claim.selector.matches(pv.labels):
            continue
        if pv.class_name() != cls:
            continue
        if not set(claim.access_modes) <= set(pv.access_modes):
            continue
        fits.append(pv)
    fits.sort(key=lambda p: (p.capacity or 0, p.name))
    return Candidates(prebound, tuple(fits))


@dataclass(slots=True)
class StaticMatch:
    """Per claim (in `claims` order) and row, the index into `pvs` of the PV chosen, -1 for
    none; `all_found[r]` when every claim found one on row r."""

    claims: tuple[PersistentVolumeClaim, ...]
    pvs: list[PersistentVolume]
    chosen: IntArray  # (len(claims), len(rows))
    all_found: BoolArray


def match_static(
    claims: Sequence[PersistentVolumeClaim],
    pvs_by_class: Mapping[str, tuple[PersistentVolume, ...]], snap: Snapshot, rows: Rows,
) -> StaticMatch:
    """findMatchingVolumes: claims by requested size (a stable sort), each taking on each row
    the smallest fitting PV that no earlier claim took there."""
    ordered = tuple(sorted(claims, key=lambda c: c.request or 0))
    pvs: list[PersistentVolume] = []
    index: dict[str, int] = {}
    masks: list[BoolArray] = []
    per_claim: list[tuple[int, list[int]]] = []  # (prebound index or -1, fit indexes)
    for claim in ordered:
        cand = candidates(claim, pvs_by_class.get(claim.class_name(), ()))
        ids = []
        for pv in ((cand.prebound,) if cand.prebound is not None else ()) + cand.fits:
            i = index.get(pv.name)
            if i is None:
                i = index[pv.name] = len(pvs)
                pvs.append(pv)
                masks.append(affinity_mask(pv, snap, rows))
            ids.append(i)
        if cand.prebound is not None:
            per_claim.append((ids[0], []))
        else:
            per_claim.append((-1, ids))
    n = len(rows)
    taken = np.zeros((len(pvs), n), dtype=np.bool_)
    chosen = np.full((len(ordered), n), -1, dtype=np.int64)
    cols = np.arange(n)
    for k, (pre, ids) in enumerate(per_claim):
        if pre >= 0:
            ok = masks[pre] & ~taken[pre]
            chosen[k, ok] = pre
            taken[pre, ok] = True
            continue
        if not ids:
            continue
        avail = np.stack([masks[i] for i in ids]) & ~taken[ids]
        has = avail.any(axis=0)
        first = np.asarray(ids, dtype=np.int64)[avail.argmax(axis=0)]
        chosen[k, has] = first[has]
        taken[first[has], cols[has]] = True
    all_found: BoolArray = np.asarray((chosen >= 0).all(axis=0), dtype=np.bool_)
    return StaticMatch(ordered, pvs, chosen, all_found)
