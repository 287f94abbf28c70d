"""VolumeBinding's Reserve (kube's AssumePodVolumes): the chosen PVs get a claimRef to their
claim, the claims to provision the selected-node annotation, both kept in the snapshot's
storage (its assume cache) so that the next pod of the request cannot take the same PV.
Assuming binds no claim: its volumeName stays empty until the client upserts it bound.
"""

from __future__ import annotations

import dataclasses

from ...framework.storage import Assumption
from ...model import frozen_map
from ...model_storage import (
    ANN_SELECTED_NODE,
    ClaimRef,
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeBindingResult,
)
from .binder import Binding, Provisioning

__all__ = ["ANN_BOUND_BY_CONTROLLER", "bound_copy", "assumption"]

ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"


def bound_copy(pv: PersistentVolume, claim: PersistentVolumeClaim) -> PersistentVolume:
    """The PV bound to `claim` (GetBindVolumeToClaim): claimRef set, bound-by-controller added
    when the PV was not already bound to it; the PV itself when nothing changes."""
    ref = pv.claim_ref
    if ref is not None and (ref.name, ref.namespace, ref.uid) == (
        claim.name, claim.namespace, claim.uid
    ):
        return pv
    annotations = pv.annotations
    if ANN_BOUND_BY_CONTROLLER not in annotations:
        annotations = frozen_map({**annotations, ANN_BOUND_BY_CONTROLLER: "yes"})
    return dataclasses.replace(
        pv, claim_ref=ClaimRef(claim.namespace, claim.name, claim.uid), annotations=annotations
    )


def assumption(
    static: list[Binding], dynamic: list[Provisioning], node_name: str
) -> Assumption:
    """What Reserve assumes on `node_name` for the bindings and provisions Filter found there."""
    pvs: list[tuple[PersistentVolume, PersistentVolume]] = []
    results: list[VolumeBindingResult] = []
    for claim, pv in static:
        new = bound_copy(pv, claim)
        if new is not pv:
            pvs.append((pv, new))
        results.append(VolumeBindingResult(claim.key, volume_name=pv.name))
    pvcs: list[tuple[PersistentVolumeClaim, PersistentVolumeClaim]] = []
    for claim, _ in dynamic:
        ann = frozen_map({**claim.annotations, ANN_SELECTED_NODE: node_name})
        pvcs.append((claim, dataclasses.replace(claim, annotations=ann)))
        results.append(
            VolumeBindingResult(claim.key, provisioned=True, selected_node=node_name)
        )
    return Assumption(tuple(pvs), tuple(pvcs), tuple(results))
