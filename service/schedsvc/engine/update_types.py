"""What an UpdateSnapshot asks of a cluster and what it answers, as domain values.

A module of its own so that the modules that validate, apply and stage an update, and the
batching package that hears of it, read these types without importing the cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Namespace, Node, Pod, PodDisruptionBudget
from ..model_pod_group import PodGroup, Workload
from ..model_storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

__all__ = ["STORAGE_FIELDS", "STORAGE_KINDS", "SnapshotUpdate", "UpdateResult"]


@dataclass(frozen=True, slots=True)
class SnapshotUpdate:
    replace: bool = False
    upsert_nodes: Sequence[Node] = ()
    remove_nodes: Sequence[str] = ()
    upsert_pods: Sequence[Pod] = ()
    remove_pods: Sequence[str] = ()
    upsert_namespaces: Sequence[Namespace] = ()
    expected_generation: int = 0
    expected_epoch: str = ""
    upsert_pod_disruption_budgets: Sequence[PodDisruptionBudget] = ()
    remove_pod_disruption_budgets: Sequence[str] = ()  # "namespace/name"
    stage: bool = False  # a chunk of a staged replace (staged.py)
    staged_replace: str = ""  # the open staged replace a later chunk adds to
    commit: bool = False  # the staged replace's last chunk: swap it in
    # storage objects (framework/storage.py); removals by name, "namespace/name" for claims
    # and capacities
    upsert_persistent_volumes: Sequence[PersistentVolume] = ()
    remove_persistent_volumes: Sequence[str] = ()
    upsert_persistent_volume_claims: Sequence[PersistentVolumeClaim] = ()
    remove_persistent_volume_claims: Sequence[str] = ()
    upsert_storage_classes: Sequence[StorageClass] = ()
    remove_storage_classes: Sequence[str] = ()
    upsert_csi_nodes: Sequence[CSINode] = ()
    remove_csi_nodes: Sequence[str] = ()
    upsert_csi_drivers: Sequence[CSIDriver] = ()
    remove_csi_drivers: Sequence[str] = ()
    upsert_csi_storage_capacities: Sequence[CSIStorageCapacity] = ()
    remove_csi_storage_capacities: Sequence[str] = ()
    upsert_volume_attachments: Sequence[VolumeAttachment] = ()
    remove_volume_attachments: Sequence[str] = ()
    # scheduling.k8s.io/v1beta1 (model_pod_group.py); removals "namespace/name", first
    upsert_pod_groups: Sequence[PodGroup] = ()
    remove_pod_groups: Sequence[str] = ()
    upsert_workloads: Sequence[Workload] = ()
    remove_workloads: Sequence[str] = ()

    @property
    def nodes_changed(self) -> bool:
        """Nodes are added, removed or relabelled: cluster-wide score inputs move."""
        return bool(self.upsert_nodes or self.remove_nodes)

    @property
    def storage_changed(self) -> bool:
        """Storage objects are upserted or removed: any volume plugin's verdict may move."""
        return any(getattr(self, f) for f in STORAGE_FIELDS)


# SnapshotUpdate's storage lists: (upsert field, remove field, StorageState's dict)
STORAGE_KINDS = (
    ("upsert_persistent_volumes", "remove_persistent_volumes", "pvs"),
    ("upsert_persistent_volume_claims", "remove_persistent_volume_claims", "pvcs"),
    ("upsert_storage_classes", "remove_storage_classes", "classes"),
    ("upsert_csi_nodes", "remove_csi_nodes", "csi_nodes"),
    ("upsert_csi_drivers", "remove_csi_drivers", "csi_drivers"),
    ("upsert_csi_storage_capacities", "remove_csi_storage_capacities", "capacities"),
    ("upsert_volume_attachments", "remove_volume_attachments", "attachments"),
)
STORAGE_FIELDS = tuple(f for upsert, remove, _ in STORAGE_KINDS for f in (upsert, remove))


@dataclass(frozen=True, slots=True)
class UpdateResult:
    generation: int
    nodes: int
    pods: int
    epoch: str
    staged_replace: str = ""  # the open staged replace a chunk built ("" once committed)
