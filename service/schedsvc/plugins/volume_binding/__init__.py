"""VolumeBinding (kube's plugins/volumebinding): its args (args.py), the claims PreFilter reads
(claims.py), static matching (matching.py), dynamic provisioning (provisioning.py), the
per-node search (binder.py), the capacity score (scorer.py), Reserve's assume (assume.py) and
the plugin (plugin.py)."""

from __future__ import annotations

from .args import DEFAULT_SHAPE, NAME, UtilizationShapePoint, VolumeBindingArgs
from .binder import (
    ERR_BIND_CONFLICT,
    ERR_NODE_CONFLICT,
    ERR_NOT_ENOUGH_SPACE,
    ERR_PV_NOT_EXIST,
    PodVolumes,
    find_pod_volumes,
)
from .claims import ERR_UNBOUND_IMMEDIATE, PodClaims, pod_claims
from .plugin import VolumeBinding, new, volumes_signature

__all__ = [
    "NAME",
    "DEFAULT_SHAPE",
    "UtilizationShapePoint",
    "VolumeBindingArgs",
    "ERR_BIND_CONFLICT",
    "ERR_NODE_CONFLICT",
    "ERR_NOT_ENOUGH_SPACE",
    "ERR_PV_NOT_EXIST",
    "ERR_UNBOUND_IMMEDIATE",
    "PodClaims",
    "PodVolumes",
    "find_pod_volumes",
    "pod_claims",
    "VolumeBinding",
    "volumes_signature",
    "new",
]
