"""Domain types of storage: the cluster objects kube's four volume plugins read
(VolumeBinding, VolumeZone, NodeVolumeLimits, VolumeRestrictions); a pod's volumes are in
model_volume.py.

Each object carries exactly the fields those plugins read (docs/kube-fields.md lists them),
with kube's names in snake_case and kube's API defaults already applied by the server layer
(a StorageClass without volumeBindingMode is Immediate, a volume mode left out is Filesystem).
Quantities are bytes. Frozen, as the rest of the model: a snapshot shares them freely.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .model import LabelSelector, NodeSelectorTerm, frozen_map
from .model_volume import NO_DISK, DiskSources

__all__ = [
    "READ_WRITE_ONCE",
    "READ_ONLY_MANY",
    "READ_WRITE_MANY",
    "READ_WRITE_ONCE_POD",
    "ACCESS_MODES",
    "FILESYSTEM",
    "BLOCK",
    "VOLUME_MODES",
    "IMMEDIATE",
    "WAIT_FOR_FIRST_CONSUMER",
    "BINDING_MODES",
    "PV_PHASES",
    "PVC_PHASES",
    "ANN_STORAGE_CLASS",
    "ANN_SELECTED_NODE",
    "ANN_BIND_COMPLETED",
    "ANN_MIGRATED_PLUGINS",
    "NO_PROVISIONER",
    "ClaimRef",
    "CSIPersistentVolumeSource",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "TopologySelectorTerm",
    "StorageClass",
    "CSINodeDriver",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
    "VolumeBindingResult",
]

# core/v1 PersistentVolumeAccessMode values
READ_WRITE_ONCE = "ReadWriteOnce"
READ_ONLY_MANY = "ReadOnlyMany"
READ_WRITE_MANY = "ReadWriteMany"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
ACCESS_MODES = (READ_WRITE_ONCE, READ_ONLY_MANY, READ_WRITE_MANY, READ_WRITE_ONCE_POD)
# core/v1 PersistentVolumeMode values (the API default is Filesystem)
FILESYSTEM = "Filesystem"
BLOCK = "Block"
VOLUME_MODES = (FILESYSTEM, BLOCK)
# storage/v1 VolumeBindingMode values (the API default is Immediate)
IMMEDIATE = "Immediate"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
BINDING_MODES = (IMMEDIATE, WAIT_FOR_FIRST_CONSUMER)
# status.phase values (the API default is Pending for both)
PV_PHASES = ("Pending", "Available", "Bound", "Released", "Failed")
PVC_PHASES = ("Pending", "Bound", "Lost")

# annotation keys the plugins read
ANN_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"  # PV and PVC: beats the field
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"  # PVC: provisioning targets a node
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"  # PVC: fully bound with volumeName
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"  # CSINode
# a StorageClass provisioner that cannot provision (as an empty one)
NO_PROVISIONER = "kubernetes.io/no-provisioner"


# ---- PersistentVolume ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ClaimRef:
    namespace: str
    name: str
    uid: str = ""


@dataclass(frozen=True, slots=True)
class CSIPersistentVolumeSource:
    driver: str
    volume_handle: str
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    name: str
    labels: Mapping[str, str] = field(default_factory=frozen_map)
    annotations: Mapping[str, str] = field(default_factory=frozen_map)
    storage_class_name: str = ""
    capacity: int | None = None  # spec.capacity.storage; None: not set
    access_modes: tuple[str, ...] = ()
    volume_mode: str = FILESYSTEM
    volume_attributes_class_name: str | None = None
    # spec.nodeAffinity.required.nodeSelectorTerms; None: no node affinity
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None
    claim_ref: ClaimRef | None = None
    csi: CSIPersistentVolumeSource | None = None
    disk: DiskSources = NO_DISK
    # the source's Kubernetes name (csi, gcePersistentDisk, local, hostPath, nfs, ...)
    source_kind: str = ""
    phase: str = "Pending"
    deleting: bool = False  # metadata.deletionTimestamp set

    def class_name(self) -> str:
        """The PV's class: the beta annotation, else spec.storageClassName (kube's
        GetPersistentVolumeClass)."""
        ann = self.annotations.get(ANN_STORAGE_CLASS)
        return ann if ann is not None else self.storage_class_name


# ---- PersistentVolumeClaim ------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    name: str
    namespace: str = "default"
    uid: str = ""
    annotations: Mapping[str, str] = field(default_factory=frozen_map)
    # None: the field is not set (kube: nil), which differs from "" (no class)
    storage_class_name: str | None = None
    volume_name: str = ""
    access_modes: tuple[str, ...] = ()
    request: int | None = None  # spec.resources.requests.storage; None: not set
    selector: LabelSelector | None = None
    volume_mode: str = FILESYSTEM
    volume_attributes_class_name: str | None = None
    phase: str = "Pending"
    deleting: bool = False  # metadata.deletionTimestamp set
    controller_uid: str = ""  # the ownerReference with controller: true, if any

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def class_name(self) -> str:
        """The claim's class: the beta annotation (even ""), else spec.storageClassName, else
        "" (kube's storagehelpers.GetPersistentVolumeClaimClass)."""
        ann = self.annotations.get(ANN_STORAGE_CLASS)
        if ann is not None:
            return ann
        return self.storage_class_name or ""

    def fully_bound(self) -> bool:
        """kube's binder: a volume name and the bind-completed annotation."""
        return bool(self.volume_name) and ANN_BIND_COMPLETED in self.annotations


# ---- StorageClass ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TopologySelectorTerm:
    """allowedTopologies[].matchLabelExpressions: (key, values) pairs, all of which hold."""

    match_label_expressions: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class StorageClass:
    name: str
    provisioner: str = ""
    volume_binding_mode: str = IMMEDIATE
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()


# ---- CSI ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    name: str
    allocatable_count: int | None = None  # spec.drivers[].allocatable.count; None: no limit


@dataclass(frozen=True, slots=True)
class CSINode:
    """Named as its node."""

    name: str
    drivers: tuple[CSINodeDriver, ...] = ()
    annotations: Mapping[str, str] = field(default_factory=frozen_map)

    def migrated_plugins(self) -> frozenset[str]:
        """The in-tree plugins the node migrated to CSI (the migrated-plugins annotation)."""
        raw = self.annotations.get(ANN_MIGRATED_PLUGINS, "")
        return frozenset(p.strip() for p in raw.split(",") if p.strip())


@dataclass(frozen=True, slots=True)
class CSIDriver:
    name: str
    storage_capacity: bool = False
    # spec.preventPodSchedulingIfMissing (v1.37, read under VolumeLimitScaling)
    prevent_pod_scheduling_if_missing: bool = False


@dataclass(frozen=True, slots=True)
class CSIStorageCapacity:
    name: str
    namespace: str = "default"
    storage_class_name: str = ""
    node_topology: LabelSelector | None = None  # None: no node has access
    capacity: int | None = None
    maximum_volume_size: int | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class VolumeAttachment:
    """storage/v1 VolumeAttachment: NodeVolumeLimits counts the PV it attaches on its node."""

    name: str
    attacher: str = ""
    node_name: str = ""
    persistent_volume_name: str = ""  # spec.source.persistentVolumeName ("" for inline specs)


@dataclass(frozen=True, slots=True)
class VolumeBindingResult:
    """What VolumeBinding's Reserve decided for one of a placed pod's unbound claims (kube's
    assume cache): the PersistentVolume it binds to, or provisioning on the selected node."""

    claim: str  # "namespace/name"
    volume_name: str = ""  # the PV chosen (static binding); "" when provisioned
    provisioned: bool = False  # dynamic provisioning: the claim's selected-node annotation
    selected_node: str = ""

