"""A pod's volumes as kube's volume plugins read them (spec.volumes[]): the claim a volume
names, and the in-tree disk sources VolumeRestrictions checks for conflicts and
NodeVolumeLimits counts. The cluster's storage objects are in model_storage.py.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "GCEPersistentDisk",
    "AWSElasticBlockStore",
    "ISCSI",
    "RBD",
    "AzureDisk",
    "Cinder",
    "PortworxVolume",
    "DiskSources",
    "NO_DISK",
    "Volume",
]


# ---- in-tree disk sources (pod volumes and PersistentVolumes) -------------------------------
@dataclass(frozen=True, slots=True)
class GCEPersistentDisk:
    pd_name: str
    partition: int = 0
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class AWSElasticBlockStore:
    volume_id: str
    partition: int = 0
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class ISCSI:
    iqn: str
    target_portal: str = ""
    lun: int = 0
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class RBD:
    monitors: tuple[str, ...]
    image: str
    pool: str = "rbd"  # the API default
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class AzureDisk:
    disk_name: str
    disk_uri: str
    kind: str = "Shared"  # the API default; kube's CSI translation accepts only Managed
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class Cinder:
    volume_id: str
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class PortworxVolume:
    volume_id: str
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class DiskSources:
    """The in-tree sources a volume (or a PV) may name; at most one is set."""

    gce_persistent_disk: GCEPersistentDisk | None = None
    aws_elastic_block_store: AWSElasticBlockStore | None = None
    iscsi: ISCSI | None = None
    rbd: RBD | None = None
    azure_disk: AzureDisk | None = None
    cinder: Cinder | None = None
    portworx_volume: PortworxVolume | None = None
    # present but never counted nor checked for conflicts: NodeVolumeLimits' PreFilter only
    # notices them (it does not skip a pod that has one)
    azure_file: bool = False
    vsphere_volume: bool = False


NO_DISK = DiskSources()


@dataclass(frozen=True, slots=True)
class Volume:
    """One entry of a pod's spec.volumes, as the volume plugins see it. `kind` is the source's
    Kubernetes name (persistentVolumeClaim, ephemeral, csi, gcePersistentDisk, ...); sources
    no scheduler plugin reads (emptyDir, configMap, secret, projected, ...) are `other` with
    `other_source` naming it, kept for the batching signature only."""

    name: str
    kind: str
    claim_name: str = ""  # persistentVolumeClaim.claimName
    read_only: bool = False  # persistentVolumeClaim.readOnly (read by no plugin)
    disk: DiskSources = NO_DISK  # the in-tree disk source, when kind names one
    csi_driver: str = ""  # csi.driver of an inline CSI volume (counted by no plugin)
    # a generic ephemeral volume's template, canonical bytes: pods of one ReplicaSet sign equal
    ephemeral_template: bytes = b""
    other_source: str = ""

    def claim(self, pod_name: str) -> str:
        """The claim this volume uses: its claimName, or `<pod>-<volume>` for an ephemeral
        one (kube's ephemeral.VolumeClaimName); "" for other sources."""
        if self.kind == "persistentVolumeClaim":
            return self.claim_name
        if self.kind == "ephemeral":
            return f"{pod_name}-{self.name}"
        return ""
