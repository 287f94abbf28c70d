"""VolumeRestrictions: inline disks that cannot be shared, and ReadWriteOncePod claims
(kube's volumerestrictions/volume_restrictions.go, the same in 1.35 and 1.37).

PreFilter looks up each persistentVolumeClaim of the pod (a missing one is unresolvable) and
counts its ReadWriteOncePod claims some pod on a node already uses (kube's usedPVCRefCounts,
framework/pod_volumes.py); it skips a pod with neither such a claim in use nor an inline GCE,
EBS, RBD or iSCSI disk. Filter: disk conflicts with the node's pods first, then the claims in
use. kube's AddPod/RemovePod change that count by the pod's claims whose names are among the
pod's ReadWriteOncePod claims: nominated pods counted on a node come through the index's
temporaries; preemption re-runs PreFilter without the victims (engine/preemption/).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..framework import (
    SKIP,
    Code,
    FilterResult,
    PluginTraits,
    PreFilterResult,
    Rows,
    Skip,
)
from ..framework.feature import DEFAULT_FEATURES, Features
from ..framework.pod_volumes import PodVolumeIndex, disk_keys
from ..framework.podinfo import PodInfo
from ..framework.snapshot import BoolArray, Snapshot
from ..model import Pod
from ..model_storage import READ_WRITE_ONCE_POD
from .volume_common import has_storage_volumes

# kube's Filter reading the PreFilter state a profile did not run (getPreFilterState)
MISSING_PRE_FILTER_STATE = 'cannot read "PreFilterVolumeRestrictions" from cycleState'

__all__ = [
    "NAME",
    "ERR_REASON_DISK_CONFLICT",
    "ERR_REASON_RWOP_CONFLICT",
    "PreFilterState",
    "VolumeRestrictions",
    "new",
]

NAME = "VolumeRestrictions"
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)
_CONFLICT_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """kube's preFilterState: the names of the pod's ReadWriteOncePod claims, and how many of
    them pods on nodes use."""

    rwop_claims: frozenset[str]
    conflicting_pvc_ref_count: int


def _needs_check(pod: Pod) -> bool:
    return any(v.kind in _CONFLICT_SOURCES for v in pod.volumes)


def _delta(pod: Pod, rwop_claims: frozenset[str]) -> int:
    """kube's AddPod/RemovePod change: the pod's claims named as one of ours (by name only,
    whatever the other pod's namespace, as kube compares them)."""
    return sum(
        1 for v in pod.volumes
        if v.kind == "persistentVolumeClaim" and v.claim_name in rwop_claims
    )


class VolumeRestrictions:
    name = NAME
    traits = PluginTraits(
        pre_filter_assume_stable=True,  # a pod it can sign has no volume: always Skip
    )

    def pre_filter(self, pod: PodInfo, snap: Snapshot) -> PreFilterResult | Skip:
        p = pod.pod
        if not p.volumes:
            return SKIP
        names = [v.claim_name for v in p.volumes if v.kind == "persistentVolumeClaim"]
        needs_check = _needs_check(p)
        if not names and not needs_check:  # configMaps, secrets, projected tokens...
            return SKIP
        claims = snap.storage.pvcs
        rwop: set[str] = set()
        for name in names:
            pvc = claims.get(f"{p.namespace}/{name}")
            if pvc is None:
                return PreFilterResult(
                    reject=(f'persistentvolumeclaim "{name}" not found',),
                    reject_code=Code.UNRESOLVABLE,
                )
            if READ_WRITE_ONCE_POD in pvc.access_modes:
                rwop.add(name)
        count = 0
        if rwop:
            index = PodVolumeIndex.for_snapshot(snap)
            count = sum(1 for n in rwop if index.is_used(f"{p.namespace}/{n}"))
        if not needs_check and count == 0:
            return SKIP
        return PreFilterResult(state=PreFilterState(frozenset(rwop), count))

    def filter(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult:
        index = PodVolumeIndex.for_snapshot(snap)
        disk = self._disk_conflicts(pod.pod, index, rows)
        if not isinstance(state, PreFilterState):
            # PreFilter disabled in the profile: kube's Filter errs past a disk conflict
            return FilterResult(
                np.zeros(len(rows), dtype=np.bool_),
                [(ERR_REASON_DISK_CONFLICT, disk), (MISSING_PRE_FILTER_STATE, ~disk)],
                code=Code.UNSCHEDULABLE, reason_codes={MISSING_PRE_FILTER_STATE: Code.ERROR},
            )
        rwop = np.full(len(rows), state.conflicting_pvc_ref_count > 0, dtype=np.bool_)
        if index.temporaries and state.rwop_claims:
            for i, row in enumerate(rows.tolist()):
                added = index.temporaries.get(row, {}).values()
                n = state.conflicting_pvc_ref_count
                rwop[i] = n + sum(_delta(t, state.rwop_claims) for t in added) > 0
        rwop &= ~disk
        bad = disk | rwop
        return FilterResult(
            feasible=~bad,
            reasons=[(ERR_REASON_DISK_CONFLICT, disk), (ERR_REASON_RWOP_CONFLICT, rwop)],
            code=Code.UNSCHEDULABLE,
        )

    @staticmethod
    def _disk_conflicts(pod: Pod, index: PodVolumeIndex, rows: Rows) -> BoolArray:
        """Rows where another pod has one of the pod's inline disks (isVolumeConflict)."""
        out = np.zeros(len(rows), dtype=np.bool_)
        for v in pod.volumes:
            for key, read_only in disk_keys(v):
                # a read-only disk conflicts only with a writable one; EBS is never read-only
                counts = (index.writable if read_only else index.disks).get(key)
                if counts is not None:
                    out |= counts[rows] > 0
        return out

    def sign(self, pod: PodInfo) -> bytes | None:
        return None if has_storage_volumes(pod.pod) else b""


def new(
    args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
) -> VolumeRestrictions:
    if args:
        raise ConfigError(f"pluginConfig[{NAME}].args", "takes no arguments")
    return VolumeRestrictions()
