"""VolumeBinding's Filter over a block of rows (kube's binder.FindPodVolumes, per node): bound
claims' PVs and their node affinity, the selected-node fast path, static matching, dynamic
provisioning; the four reasons in kube's order, and what each row would bind and provision
(read by Score and Reserve).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...framework import Rows
from ...framework.snapshot import BoolArray, Snapshot
from ...model_storage import (
    ANN_SELECTED_NODE,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
)
from .claims import PodClaims
from .matching_static import StaticMatch, match_static
from .migration import bound_pv_mask, migrated_rows, translation_error
from .provisioning import (
    NOT_ENOUGH_SPACE,
    NOT_PROVISIONABLE,
    PROVISION_OK,
    Provision,
    check_provision,
)

__all__ = [
    "ERR_NODE_CONFLICT",
    "ERR_BIND_CONFLICT",
    "ERR_NOT_ENOUGH_SPACE",
    "ERR_PV_NOT_EXIST",
    "PodVolumes",
    "find_pod_volumes",
]

ERR_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"

Binding = tuple[PersistentVolumeClaim, PersistentVolume]
Provisioning = tuple[PersistentVolumeClaim, CSIStorageCapacity | None]


@dataclass(slots=True)
class PodVolumes:
    """FindPodVolumes' flags per row, and the static bindings and dynamic provisions found."""

    bound_satisfied: BoolArray
    pvs_found: BoolArray
    unbound_satisfied: BoolArray
    sufficient_storage: BoolArray
    static: StaticMatch | None = None
    # per claim to provision, in kube's order: its checks, and the rows where it is provisioned
    provisions: list[tuple[PersistentVolumeClaim, Provision, BoolArray]] = field(
        default_factory=list
    )
    # rows where every claim to provision passed (kube returns no provision otherwise)
    provisioned: BoolArray | None = None
    # kube's Error per row (a bound PV that does not translate to CSI there): its message
    # and rows, which get no other reason
    errors: list[tuple[str, BoolArray]] = field(default_factory=list)

    def _erred(self) -> BoolArray:
        out = np.zeros(len(self.bound_satisfied), dtype=np.bool_)
        for _, m in self.errors:
            out |= m
        return out

    def feasible(self) -> BoolArray:
        out: BoolArray = (
            self.bound_satisfied & self.pvs_found & self.unbound_satisfied
            & self.sufficient_storage & ~self._erred()
        )
        return out

    def reasons(self) -> list[tuple[str, BoolArray]]:
        """kube's order: node affinity, bind conflict, not enough space, PV not found; then
        the Errors (their code: Error)."""
        ok = ~self._erred()
        return [
            (ERR_NODE_CONFLICT, ~self.bound_satisfied & ok),
            (ERR_BIND_CONFLICT, ~self.unbound_satisfied & ok),
            (ERR_NOT_ENOUGH_SPACE, ~self.sufficient_storage & ok),
            (ERR_PV_NOT_EXIST, ~self.pvs_found & ok),
            *self.errors,
        ]

    def static_bindings(self, i: int) -> list[Binding]:
        """The static bindings of the row at block position `i`, claims by size."""
        s = self.static
        if s is None:
            return []
        return [(c, s.pvs[int(s.chosen[k, i])]) for k, c in enumerate(s.claims)
                if s.chosen[k, i] >= 0]

    def dynamic_provisions(self, i: int) -> list[Provisioning]:
        out: list[Provisioning] = []
        if self.provisioned is None or not self.provisioned[i]:
            return out
        for claim, prov, mask in self.provisions:
            if mask[i]:
                j = int(prov.chosen[i])
                out.append((claim, prov.capacities[j] if j >= 0 else None))
        return out


def _bound(
    pc: PodClaims, snap: Snapshot, rows: Rows, errors: list[tuple[str, BoolArray]]
) -> tuple[BoolArray, BoolArray]:
    """checkBoundClaims: (boundSatisfied, boundPVsFound); a row stops at its first failure,
    or at an Error (into `errors`: a PV that does not translate on a migrating node)."""
    ok = np.ones(len(rows), dtype=np.bool_)
    erred = np.zeros(len(rows), dtype=np.bool_)
    for pvc in pc.bound:
        pv = snap.storage.pvs.get(pvc.volume_name)
        if pv is None:
            return ok | erred, ~ok
        err = translation_error(pv)
        if err and (m := ok & migrated_rows(pv, snap, rows)).any():
            errors.append((err, m))
            erred |= m
            ok = ok & ~m
        ok = ok & bound_pv_mask(pv, snap, rows)
    return ok | erred, np.ones(len(rows), dtype=np.bool_)


def _selected_node_ok(
    selected: list[PersistentVolumeClaim], snap: Snapshot, rows: Rows
) -> BoolArray:
    """The fast path: a row passes only if it is every selected-node claim's node."""
    names = {c.annotations[ANN_SELECTED_NODE] for c in selected}
    if not selected:
        return np.ones(len(rows), dtype=np.bool_)
    row = snap.row_of(next(iter(names))) if len(names) == 1 else None
    out: BoolArray = rows == (row if row is not None else -1)
    return out


def _static_over_every_row(
    pc: PodClaims, to_match: list[PersistentVolumeClaim], snap: Snapshot
) -> StaticMatch:
    """The pod's static match over every row, worked out at its first block and kept in the
    PreFilter state for the others, Score and Reserve."""
    key = ("static", snap.storage.generation, snap.static_generation, snap.n_rows)
    hit = pc.memo.get(key)
    if isinstance(hit, StaticMatch):
        return hit
    pc.memo.clear()
    found = match_static(to_match, snap)
    pc.memo[key] = found
    return found


def find_pod_volumes(pc: PodClaims, snap: Snapshot, rows: Rows) -> PodVolumes:
    """FindPodVolumes for every row of the block."""
    n = len(rows)
    errors: list[tuple[str, BoolArray]] = []
    bound_ok, found = _bound(pc, snap, rows, errors)
    out = PodVolumes(
        bound_ok, found, np.ones(n, dtype=np.bool_), np.ones(n, dtype=np.bool_), errors=errors
    )
    if not pc.delayed:
        return out
    selected = [c for c in pc.delayed if ANN_SELECTED_NODE in c.annotations]
    to_match = [c for c in pc.delayed if ANN_SELECTED_NODE not in c.annotations]
    live = _selected_node_ok(selected, snap, rows)
    out.unbound_satisfied = live.copy()
    if to_match:
        out.static = _static_over_every_row(pc, to_match, snap).take(rows)
        out.unbound_satisfied &= out.static.all_found
    order: list[tuple[PersistentVolumeClaim, BoolArray]] = [(c, live) for c in selected]
    if out.static is not None:
        order += [(c, live & (out.static.chosen[k] < 0)) for k, c in enumerate(out.static.claims)]
    _provision(out, order, snap, rows)
    return out


def _provision(
    out: PodVolumes, order: list[tuple[PersistentVolumeClaim, BoolArray]], snap: Snapshot,
    rows: Rows,
) -> None:
    """checkVolumeProvisions on each row with a claim to provision: the first claim that fails
    decides, and its verdict overwrites unboundSatisfied."""
    n = len(rows)
    verdict = np.full(n, PROVISION_OK, dtype=np.int64)
    decided = np.zeros(n, dtype=np.bool_)
    any_claim = np.zeros(n, dtype=np.bool_)
    for claim, in_set in order:
        if not in_set.any():
            continue
        any_claim |= in_set
        prov = check_provision(claim, snap.storage, snap, rows)
        fails = in_set & ~decided & (prov.verdict != PROVISION_OK)
        verdict[fails] = prov.verdict[fails]
        decided |= fails
        out.provisions.append((claim, prov, in_set & ~decided))
    out.unbound_satisfied = np.where(
        any_claim, verdict != NOT_PROVISIONABLE, out.unbound_satisfied
    )
    out.sufficient_storage = ~(any_claim & (verdict == NOT_ENOUGH_SPACE))
    out.provisioned = any_claim & (verdict == PROVISION_OK)
