"""Dynamic provisioning of one delayed claim on each row (kube's checkVolumeProvisions for one
claim): the class's provisioner, its allowedTopologies against the node's labels, and, where
the provisioner's CSIDriver asks for it, a CSIStorageCapacity object whose nodeTopology
selects the node and whose limit holds the request (hasEnoughCapacity).

When several capacity objects match, kube takes the first in lister (Go map) order; we take
the first by namespace/name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...framework import Rows
from ...framework.snapshot import BoolArray, IntArray, Snapshot
from ...framework.storage import StorageState
from ...model import LabelSelector
from ...model_storage import (
    NO_PROVISIONER,
    CSIStorageCapacity,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorTerm,
)
from ..selectors import LabelRequirement, label_requirement_mask, label_set_mask

__all__ = ["PROVISION_OK", "NOT_PROVISIONABLE", "NOT_ENOUGH_SPACE", "Provision",
           "selector_mask", "check_provision"]

PROVISION_OK = 0
NOT_PROVISIONABLE = 1  # unboundSatisfied = false
NOT_ENOUGH_SPACE = 2  # sufficientStorage = false

_SELECTOR_OPS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})


@dataclass(slots=True)
class Provision:
    """Per row: the verdict for the claim, and the index into `capacities` of the capacity
    object recorded for it (-1: none, as when the driver does not track capacity)."""

    verdict: IntArray
    capacities: list[CSIStorageCapacity]
    chosen: IntArray


def selector_mask(sel: LabelSelector, snap: Snapshot, rows: Rows) -> BoolArray:
    """A metav1.LabelSelector over the rows' node labels; {} selects every node."""
    out = label_set_mask(sel.match_labels, snap, rows)
    for r in sel.match_expressions:
        if r.operator not in _SELECTOR_OPS:
            return np.zeros(len(rows), dtype=np.bool_)
        out &= label_requirement_mask(LabelRequirement(r.key, r.operator, r.values), snap, rows)
    return out


def _term_mask(term: TopologySelectorTerm, snap: Snapshot, rows: Rows) -> BoolArray:
    if not term.match_label_expressions:
        return np.zeros(len(rows), dtype=np.bool_)  # a term with no expression matches nothing
    out = np.ones(len(rows), dtype=np.bool_)
    for key, values in term.match_label_expressions:
        out &= label_requirement_mask(LabelRequirement(key, "In", values), snap, rows)
    return out


def _topology_mask(sc: StorageClass, snap: Snapshot, rows: Rows) -> BoolArray:
    """MatchTopologySelectorTerms: no term allows every node; the terms are ORed."""
    if not sc.allowed_topologies:
        return np.ones(len(rows), dtype=np.bool_)
    out = np.zeros(len(rows), dtype=np.bool_)
    for term in sc.allowed_topologies:
        out |= _term_mask(term, snap, rows)
    return out


def _capacity_choice(
    claim: PersistentVolumeClaim, sc: StorageClass, storage: StorageState, snap: Snapshot,
    rows: Rows,
) -> tuple[list[CSIStorageCapacity], IntArray] | None:
    """hasEnoughCapacity: None when the capacity is not checked; else the objects that fit the
    request and the first of them that selects each row (-1: none)."""
    request = claim.request
    driver = storage.csi_drivers.get(sc.provisioner)
    if request is None or driver is None or not driver.storage_capacity:
        return None
    fitting = []
    for key in sorted(storage.capacities):
        cap = storage.capacities[key]
        limit = cap.maximum_volume_size if cap.maximum_volume_size is not None else cap.capacity
        if cap.storage_class_name != sc.name or limit is None or limit < request:
            continue
        if cap.node_topology is None:
            continue
        fitting.append(cap)
    chosen = np.full(len(rows), -1, dtype=np.int64)
    for i in range(len(fitting) - 1, -1, -1):  # the first that selects a row wins
        topo = fitting[i].node_topology
        assert topo is not None
        chosen[selector_mask(topo, snap, rows)] = i
    return fitting, chosen


def check_provision(
    claim: PersistentVolumeClaim, storage: StorageState, snap: Snapshot, rows: Rows
) -> Provision:
    """The claim's verdict on each row. Its class exists: the claim is delayed."""
    n = len(rows)
    none = np.full(n, -1, dtype=np.int64)
    sc = storage.classes[claim.class_name()]
    if sc.provisioner in ("", NO_PROVISIONER):
        return Provision(np.full(n, NOT_PROVISIONABLE, dtype=np.int64), [], none)
    verdict = np.where(_topology_mask(sc, snap, rows), PROVISION_OK, NOT_PROVISIONABLE)
    choice = _capacity_choice(claim, sc, storage, snap, rows)
    if choice is None:
        return Provision(verdict.astype(np.int64), [], none)
    caps, chosen = choice
    verdict = np.where((verdict == PROVISION_OK) & (chosen < 0), NOT_ENOUGH_SPACE, verdict)
    return Provision(verdict.astype(np.int64), caps, chosen)
