"""In-tree volume sources as the CSI volumes they migrate to (kube's csi-translation-lib, the
same in 1.35 and 1.37): the driver and the volume handle NodeVolumeLimits counts them by.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ...framework.feature import Features
from ...model_storage import ANN_MIGRATED_PLUGINS, CSINode, PersistentVolume
from ...model_volume import DiskSources

__all__ = [
    "AWS_EBS",
    "PORTWORX",
    "CSI_DRIVER_OF_PLUGIN",
    "PLUGIN_OF_KIND",
    "TranslationError",
    "migration_on",
    "plugin_of_disk",
    "disk_handle",
    "pv_handle",
]

AWS_EBS = "kubernetes.io/aws-ebs"
GCE_PD = "kubernetes.io/gce-pd"
AZURE_DISK = "kubernetes.io/azure-disk"
AZURE_FILE = "kubernetes.io/azure-file"
CINDER = "kubernetes.io/cinder"
VSPHERE = "kubernetes.io/vsphere-volume"
PORTWORX = "kubernetes.io/portworx-volume"
CSI_DRIVER_OF_PLUGIN = {
    AWS_EBS: "ebs.csi.aws.com",
    GCE_PD: "pd.csi.storage.gke.io",
    AZURE_DISK: "disk.csi.azure.com",
    AZURE_FILE: "file.csi.azure.com",
    CINDER: "cinder.csi.openstack.org",
    VSPHERE: "csi.vsphere.vmware.com",
    PORTWORX: "pxd.portworx.com",
}
# a volume's (or PV's) source kind -> its in-tree plugin (kube's IsInlineMigratable sources)
PLUGIN_OF_KIND = {
    "awsElasticBlockStore": AWS_EBS,
    "gcePersistentDisk": GCE_PD,
    "azureDisk": AZURE_DISK,
    "azureFile": AZURE_FILE,
    "cinder": CINDER,
    "vsphereVolume": VSPHERE,
    "portworxVolume": PORTWORX,
}
_PLUGIN_OF_FIELD = (
    ("aws_elastic_block_store", AWS_EBS),
    ("gce_persistent_disk", GCE_PD),
    ("azure_disk", AZURE_DISK),
    ("azure_file", AZURE_FILE),
    ("cinder", CINDER),
    ("vsphere_volume", VSPHERE),
    ("portworx_volume", PORTWORX),
)
# the plugins isCSIMigrationOn knows (azureFile and vSphere are never counted)
_COUNTED = frozenset({AWS_EBS, GCE_PD, AZURE_DISK, CINDER, PORTWORX})
_AWS_VOLUME = re.compile(r"^vol-[^/]*$")
_UNSPECIFIED = "UNSPECIFIED"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_GA_ZONE = "topology.kubernetes.io/zone"


class TranslationError(Exception):
    """The source cannot be translated to CSI (kube's translator error)."""


def migration_on(plugin: str, csi_node: CSINode | None, features: Features) -> bool:
    """kube's isCSIMigrationOn: only on a node with a CSINode; 1.35 also needs Portworx listed
    in its migrated-plugins annotation (split on ",", untrimmed)."""
    if csi_node is None or plugin not in _COUNTED:
        return False
    if plugin == PORTWORX and features.portworx_needs_migrated_annotation:
        return PORTWORX in csi_node.annotations.get(ANN_MIGRATED_PLUGINS, "").split(",")
    return True


def plugin_of_disk(disk: DiskSources) -> str:
    """The in-tree plugin of the source set in `disk` ("" for none)."""
    for attr, plugin in _PLUGIN_OF_FIELD:
        if getattr(disk, attr):
            return plugin
    return ""


def _ebs_volume_id(volume_id: str) -> str:
    """kube's KubernetesVolumeIDToEBSVolumeID."""
    if not volume_id.startswith("aws://"):
        return volume_id
    url = urlsplit(volume_id)
    if url.scheme != "aws":
        raise TranslationError(f"Invalid scheme for AWS volume ({volume_id})")
    aws_id = url.path.strip("/")
    if not _AWS_VOLUME.match(aws_id):
        raise TranslationError(
            "failed to translate Kubernetes ID to EBS Volume ID "
            f"Invalid format for AWS volume ({volume_id})"
        )
    return aws_id


def _gce_pv_handle(pd_name: str, labels: dict[str, str]) -> str:
    """The PV's zone (beta label first) or region (several zones of one region)."""
    zone = labels.get(_BETA_ZONE) or labels.get(_GA_ZONE) or ""
    zones = zone.split("__") if zone else []
    if len(zones) == 1 and zones[0]:
        return f"projects/{_UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
    if len(zones) > 1:
        regions = set()
        for z in zones:
            parts = z.split("-")
            if len(parts) != 3:
                raise TranslationError(f"zone in unexpected format, expected <region>-<zone>: {z}")
            regions.add("-".join(parts[:2]))
        if len(regions) != 1:
            raise TranslationError(f"multiple regions are not allowed: {sorted(regions)}")
        return f"projects/{_UNSPECIFIED}/regions/{regions.pop()}/disks/{pd_name}"
    return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd_name}"


def disk_handle(disk: DiskSources, labels: dict[str, str] | None = None) -> tuple[str, str] | None:
    """(CSI driver, volume handle) of an in-tree source; None when it has no CSI form
    (azureFile, vSphere: never counted). `labels` are the PV's, None for an inline volume."""
    if disk.aws_elastic_block_store is not None:
        return CSI_DRIVER_OF_PLUGIN[AWS_EBS], _ebs_volume_id(disk.aws_elastic_block_store.volume_id)
    if disk.gce_persistent_disk is not None:
        name = disk.gce_persistent_disk.pd_name
        if labels is None:
            handle = f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{name}"
        else:
            handle = _gce_pv_handle(name, labels)
        return CSI_DRIVER_OF_PLUGIN[GCE_PD], handle
    if disk.azure_disk is not None:
        kind = disk.azure_disk.kind
        if kind and kind.lower() != "managed":
            raise TranslationError(f"kind({kind}) is not supported in csi migration")
        return CSI_DRIVER_OF_PLUGIN[AZURE_DISK], disk.azure_disk.disk_uri
    if disk.cinder is not None:
        return CSI_DRIVER_OF_PLUGIN[CINDER], disk.cinder.volume_id
    if disk.portworx_volume is not None:
        return CSI_DRIVER_OF_PLUGIN[PORTWORX], disk.portworx_volume.volume_id
    return None


def pv_handle(
    pv: PersistentVolume, csi_node: CSINode | None, features: Features
) -> tuple[str, str] | None:
    """kube's getCSIDriverInfo for a PV: its CSI source, else its migrated in-tree source on a
    node migrating it; None when not counted (a translation error included)."""
    if pv.csi is not None:
        return pv.csi.driver, pv.csi.volume_handle
    if not migration_on(plugin_of_disk(pv.disk), csi_node, features):
        return None
    try:
        return disk_handle(pv.disk, dict(pv.labels))
    except TranslationError:
        return None
