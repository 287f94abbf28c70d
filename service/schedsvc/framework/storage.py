"""The snapshot's storage objects: what kube's volume plugins list from their informers
(PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities,
VolumeAttachments), keyed as kube keys them. UpdateSnapshot changes them; the assume of a pod
whose claims VolumeBinding bound changes the objects it assumed (kube's assume cache), so the
next pod of the request sees them taken.
"""

from __future__ import annotations

from ..model_storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

__all__ = ["StorageState"]


class StorageState:
    """Changed under the cluster's lock only, as the rest of the snapshot."""

    __slots__ = (
        "pvs", "pvcs", "classes", "csi_nodes", "csi_drivers", "capacities", "attachments",
        "generation",
    )

    def __init__(self) -> None:
        self.pvs: dict[str, PersistentVolume] = {}  # name -> PV
        self.pvcs: dict[str, PersistentVolumeClaim] = {}  # "namespace/name" -> claim
        self.classes: dict[str, StorageClass] = {}  # name -> class
        self.csi_nodes: dict[str, CSINode] = {}  # node name -> CSINode
        self.csi_drivers: dict[str, CSIDriver] = {}  # name -> driver
        self.capacities: dict[str, CSIStorageCapacity] = {}  # "namespace/name" -> capacity
        self.attachments: dict[str, VolumeAttachment] = {}  # name -> attachment
        # moves on every change (an update's or an assume's), so state derived from the
        # objects (a plugin's PreFilter result kept by batching) knows when it is stale
        self.generation = 0

    def is_empty(self) -> bool:
        return not (
            self.pvs or self.pvcs or self.classes or self.csi_nodes or self.csi_drivers
            or self.capacities or self.attachments
        )
