"""A PV's node affinity over rows (kube's CheckNodeAffinity), which static matching
(matching_static.py) and the bound claims' check read.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

from ...framework import Rows
from ...framework.snapshot import BoolArray, Snapshot
from ...model import NodeSelectorTerm
from ...model_storage import PersistentVolume, PersistentVolumeClaim
from ..selectors import CompiledTerm, NodeSelector, compile_node_selector

__all__ = ["affinity_mask", "affinity_rows", "refers_to"]


def affinity_mask(pv: PersistentVolume, snap: Snapshot, rows: Rows) -> BoolArray:
    """CheckNodeAffinity(pv, node labels): kube builds the node from its labels alone, so a
    matchFields requirement that parses holds on every node; unparsable terms never match."""
    if pv.node_affinity is None:
        return np.ones(len(rows), dtype=np.bool_)
    return _over_every_row(pv.node_affinity, snap)[rows]


def affinity_rows(pv: PersistentVolume, snap: Snapshot) -> npt.NDArray[np.intp]:
    """The rows (of every row) whose labels the PV's node affinity admits."""
    if pv.node_affinity is None:
        return np.arange(snap.n_rows, dtype=np.intp)
    return np.flatnonzero(_over_every_row(pv.node_affinity, snap))


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


def refers_to(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """The PV's claimRef names the claim (and its uid, when the ref has one)."""
    ref = pv.claim_ref
    return (
        ref is not None and ref.name == claim.name and ref.namespace == claim.namespace
        and (not ref.uid or ref.uid == claim.uid)
    )
