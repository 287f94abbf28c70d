"""What the four volume plugins share: which pods they cannot batch (KEP-5598's SignPod).

kube signs every volume pod with one fragment (its non-configMap, non-secret sources) and
re-filters the hinted node; we choose not to batch a pod with a claim, an ephemeral volume or
an in-tree disk at all (docs/batching.md), so a run of such pods is scheduled pod by pod and
pods without them keep batching exactly as before.
"""

from __future__ import annotations

from ..model import Pod

__all__ = ["STORAGE_KINDS", "has_storage_volumes"]

# the volume sources any of VolumeBinding, VolumeZone, VolumeRestrictions, NodeVolumeLimits
# reads: a claim, a generic ephemeral volume, an in-tree disk
STORAGE_KINDS = frozenset(
    {
        "persistentVolumeClaim", "ephemeral", "gcePersistentDisk", "awsElasticBlockStore",
        "iscsi", "rbd", "azureDisk", "azureFile", "cinder", "vsphereVolume", "portworxVolume",
    }
)


def has_storage_volumes(pod: Pod) -> bool:
    """Whether a volume plugin reads one of the pod's volumes (a tuple check without any)."""
    return bool(pod.volumes) and any(v.kind in STORAGE_KINDS for v in pod.volumes)
