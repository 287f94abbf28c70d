"""VolumeBinding (kube's volumebinding/volume_binding.go): PreFilter classifies the pod's
claims, Filter finds on each node the PVs to bind or the claims to provision, Score (with
StorageCapacityScoring) prefers nodes by storage utilization, Reserve assumes the bindings.

Pods without a claim cost a tuple check: PreFilter skips them (Filter passes), Score is 0,
Reserve does nothing, and they sign as kube's VolumesSigner does. Pods with a claim are never
signed: the previous pod's assume changes their PreFilter and Filter.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...framework import (
    SKIP,
    Code,
    FilterResult,
    PluginTraits,
    PreFilterResult,
    Rows,
    Skip,
    filter_error,
)
from ...framework.feature import DEFAULT_FEATURES, Features
from ...framework.podinfo import PodInfo
from ...framework.snapshot import IntArray, Snapshot
from ...model import Pod
from .args import NAME, VolumeBindingArgs
from .assume import assumption
from .binder import find_pod_volumes
from .claims import ClaimError, PodClaims, has_claims, pod_claims
from .scorer import score_pod_volumes

# kube's Filter reading the PreFilter state a profile did not run (getPreFilterState)
MISSING_PRE_FILTER_STATE = 'not found'

__all__ = ["VolumeBinding", "volumes_signature", "new"]

_UNSIGNED_SOURCES = frozenset({"configMap", "secret"})


def volumes_signature(pod: Pod) -> bytes:
    """VolumesSigner: the pod's volume sources but configMap and secret, without the volumes'
    names, sorted (kube's fragment "v1.Pod.Spec.Volumes.NonSyntheticSources()")."""
    out = []
    for v in pod.volumes:
        if v.kind in _UNSIGNED_SOURCES or v.other_source in _UNSIGNED_SOURCES:
            continue
        out.append(repr((v.kind, v.claim_name, v.read_only, v.disk, v.csi_driver,
                         v.ephemeral_template, v.other_source)))
    return json.dumps(sorted(out), separators=(",", ":")).encode()


_NO_VOLUMES = b"[]"


class VolumeBinding:
    name = NAME
    # every promise is about the pods batching serves, which have no claim: PreFilter skips
    # them and they score 0 everywhere
    traits = PluginTraits(
        filter_is_static=True,
        score_is_static=True,
        normalize_is_identity=True,
        normalize_uniform=True,
        pre_filter_assume_stable=True,
        pre_score_assume_stable=True,
    )

    def __init__(self, args: VolumeBindingArgs | None = None) -> None:
        self.args = args if args is not None else VolumeBindingArgs()
        self._shape = self.args.scaled_shape()

    def pre_filter(self, pod: PodInfo, snap: Snapshot) -> PreFilterResult | Skip:
        if not pod.pod.volumes:
            return SKIP
        pc = pod_claims(pod.pod, snap.storage)
        if pc is None:
            return SKIP
        if isinstance(pc, str):
            return PreFilterResult(reject=(pc,), reject_code=Code.UNRESOLVABLE)
        if isinstance(pc, ClaimError):
            return PreFilterResult(reject=(pc.message,), reject_code=Code.ERROR)
        return PreFilterResult(state=pc)

    def filter(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult:
        if state is None:  # PreFilter disabled in the profile: kube's Filter errs
            return filter_error(len(rows), MISSING_PRE_FILTER_STATE)
        assert isinstance(state, PodClaims)
        pv = find_pod_volumes(state, snap, rows)
        return FilterResult(
            pv.feasible(), pv.reasons(), code=Code.UNRESOLVABLE,
            reason_codes={msg: Code.ERROR for msg, _ in pv.errors},
        )

    def pre_score(self, pod: PodInfo, snap: Snapshot, rows: Rows) -> PodClaims | None | Skip:
        """Skip without the StorageCapacityScoring gate; else Success for every pod."""
        if not self.args.scoring:
            return SKIP
        if not pod.pod.volumes:
            return None
        pc = pod_claims(pod.pod, snap.storage)
        return pc if isinstance(pc, PodClaims) else None

    def score(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> IntArray:
        if not isinstance(state, PodClaims) or state.all_bound:
            return np.zeros(len(rows), dtype=np.int64)
        return score_pod_volumes(find_pod_volumes(state, snap, rows), self._shape)

    def normalize(self, state: Any, pod: PodInfo, scores: IntArray) -> IntArray:
        return scores  # kube has no ScoreExtensions

    def sign(self, pod: PodInfo) -> bytes | None:
        if not pod.pod.volumes:
            return _NO_VOLUMES
        if has_claims(pod.pod):
            return None
        return volumes_signature(pod.pod)

    def reserve(self, pod: PodInfo, snap: Snapshot, row: int) -> None:
        """AssumePodVolumes: nothing when every claim is bound."""
        if not pod.pod.volumes:
            return
        pc = pod_claims(pod.pod, snap.storage)
        if not isinstance(pc, PodClaims) or pc.all_bound:
            return
        found = find_pod_volumes(pc, snap, np.array([row], dtype=np.intp))
        a = assumption(found.static_bindings(0), found.dynamic_provisions(0), snap.node(row).name)
        snap.storage.assume(pod.uid, a)


def new(args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES) -> VolumeBinding:
    return VolumeBinding(VolumeBindingArgs.parse(args, features))
