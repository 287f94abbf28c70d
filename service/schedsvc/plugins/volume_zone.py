"""VolumeZone: a node must be in the zones and regions of the pod's bound PersistentVolumes
(kube's volumezone/volume_zone.go, the same in 1.35 and 1.37).

PreFilter collects, per persistentVolumeClaim volume, the topology labels of its PV (an
unbound WaitForFirstConsumer claim adds nothing; a missing claim, PV or class is unresolvable,
with kube's messages); no topology at all is Skip. Filter reads the node label columns, one
numpy gather per label: a PV's beta label is matched by the node's beta label, else by its GA
one (not the other way round); a node with none of the four labels passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..framework import SKIP, Code, FilterResult, PluginTraits, PreFilterResult, Rows, Skip
from ..framework.feature import DEFAULT_FEATURES, Features
from ..framework.interning import LabelColumn
from ..framework.podinfo import PodInfo
from ..framework.snapshot import BoolArray, Snapshot
from ..framework.storage import StorageState
from ..model import Pod
from ..model_storage import WAIT_FOR_FIRST_CONSUMER
from .volume_common import has_storage_volumes

__all__ = ["NAME", "ERR_REASON_CONFLICT", "TOPOLOGY_LABELS", "PVTopology", "VolumeZone", "new"]

NAME = "VolumeZone"
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
GA_ZONE = "topology.kubernetes.io/zone"
GA_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION)
# a PV's label read on a node without it (kube's translateToGALabel)
_GA_OF = {BETA_ZONE: GA_ZONE, BETA_REGION: GA_REGION}


@dataclass(frozen=True, slots=True)
class PVTopology:
    """One topology label of one of the pod's PVs: the node's value must be among `values`."""

    key: str
    values: frozenset[str]


class _Unresolvable(Exception):
    pass


def _label_values(value: str) -> frozenset[str] | None:
    """kube's LabelZonesToSet: `a__b` is {a, b}; None when any part is empty (ignored)."""
    parts = [p.strip() for p in value.split("__")]
    if any(not p for p in parts):
        return None
    return frozenset(parts)


def _claim_topologies(pod: Pod, claim_name: str, storage: StorageState) -> list[PVTopology]:
    if not claim_name:
        raise _Unresolvable("PersistentVolumeClaim had no name")
    pvc = storage.pvcs.get(f"{pod.namespace}/{claim_name}")
    if pvc is None:
        raise _Unresolvable(f'persistentvolumeclaim "{claim_name}" not found')
    if not pvc.volume_name:
        class_name = pvc.class_name()
        if not class_name:
            raise _Unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
        sc = storage.classes.get(class_name)
        if sc is None:
            raise _Unresolvable(f'storageclass.storage.k8s.io "{class_name}" not found')
        if not sc.volume_binding_mode:
            raise _Unresolvable(f'VolumeBindingMode not set for StorageClass "{class_name}"')
        if sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
            return []
        raise _Unresolvable("PersistentVolume had no name")
    pv = storage.pvs.get(pvc.volume_name)
    if pv is None:
        raise _Unresolvable(f'persistentvolume "{pvc.volume_name}" not found')
    out = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        values = _label_values(value) if value is not None else None
        if values is not None:
            out.append(PVTopology(key, values))
    return out


def pod_pv_topologies(pod: Pod, storage: StorageState) -> list[PVTopology]:
    """kube's getPVbyPod: the topologies of the pod's claims' PVs, in volume order; raises
    _Unresolvable at the first claim that cannot be read."""
    out: list[PVTopology] = []
    for v in pod.volumes:
        if v.kind == "persistentVolumeClaim":
            out.extend(_claim_topologies(pod, v.claim_name, storage))
    return out


def _value_in(col: LabelColumn, values: frozenset[str], rows: Rows) -> BoolArray:
    """Rows of the block whose value in `col` is one of `values` (absent: False)."""
    table = np.fromiter((v in values for v in col.vocab), dtype=np.bool_, count=len(col.vocab))
    out: BoolArray = np.append(table, False)[col.ids[rows]]  # id -1 reads the last entry
    return out


def _matches(snap: Snapshot, t: PVTopology, rows: Rows) -> BoolArray:
    """Rows whose value of `t.key` (else, when absent, of its GA label) is one of `t.values`."""
    col = snap.labels.get(t.key)
    ga = _GA_OF.get(t.key)
    ga_col = snap.labels.get(ga) if ga is not None else None
    ok = np.zeros(len(rows), dtype=np.bool_)
    present = np.zeros(len(rows), dtype=np.bool_)
    if col is not None:
        present = col.ids[rows] >= 0
        ok = _value_in(col, t.values, rows)
    if ga_col is not None:
        ok |= ~present & _value_in(ga_col, t.values, rows)
    return ok


class VolumeZone:
    name = NAME
    traits = PluginTraits(
        pre_filter_assume_stable=True,  # a pod it can sign has no volume: always Skip
    )

    def pre_filter(self, pod: PodInfo, snap: Snapshot) -> PreFilterResult | Skip:
        if not pod.pod.volumes:
            return SKIP
        try:
            topologies = pod_pv_topologies(pod.pod, snap.storage)
        except _Unresolvable as e:
            return PreFilterResult(reject=(str(e),), reject_code=Code.UNRESOLVABLE)
        if not topologies:
            return SKIP
        return PreFilterResult(state=tuple(topologies))

    def filter(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult:
        if not isinstance(state, tuple):  # Filter enabled without PreFilter: kube recomputes
            pre = self.pre_filter(pod, snap)
            if not isinstance(pre, PreFilterResult) or pre.reject:
                ok = np.full(len(rows), pre is SKIP, dtype=np.bool_)
                why = pre.reject[0] if isinstance(pre, PreFilterResult) else ""
                return FilterResult(ok, [(why, ~ok)], code=Code.UNRESOLVABLE)
            state = pre.state
        labelled = np.zeros(len(rows), dtype=np.bool_)
        for key in TOPOLOGY_LABELS:
            col = snap.labels.get(key)
            if col is not None:
                labelled |= col.ids[rows] >= 0
        ok = np.ones(len(rows), dtype=np.bool_)
        for t in state:
            ok &= _matches(snap, t, rows)
        ok |= ~labelled
        return FilterResult(
            feasible=ok, reasons=[(ERR_REASON_CONFLICT, ~ok)], code=Code.UNRESOLVABLE
        )

    def sign(self, pod: PodInfo) -> bytes | None:
        return None if has_storage_volumes(pod.pod) else b""


def new(args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES) -> VolumeZone:
    if args:
        raise ConfigError(f"pluginConfig[{NAME}].args", "takes no arguments")
    return VolumeZone()
