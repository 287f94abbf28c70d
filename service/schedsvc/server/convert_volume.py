"""schedsvc.v1 volume sources -> domain (model_volume.py): a pod's spec.volumes, the in-tree
disk sources a pod or a PersistentVolume may name, and a claim's spec (a claim's own, or a
generic ephemeral volume's template), validated as kube's API server validates them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from schedsvc import model_volume as mv
from schedsvc.errors import InvalidArgument
from schedsvc.model import LabelSelector
from schedsvc.model_storage import ACCESS_MODES, FILESYSTEM, READ_WRITE_ONCE_POD, VOLUME_MODES
from schedsvc.v1 import schedule_pb2 as pb

from .cache import PodCaches
from .convert_selectors import label_selector
from .validation import dns1123_label_error, field_key, to_storage

__all__ = [
    "SOURCE_KINDS",
    "ClaimSpec",
    "access_modes",
    "claim_spec",
    "disk_sources",
    "pod_volumes",
    "volume_mode",
]

# the proto oneof's field -> the source's Kubernetes name
SOURCE_KINDS: Mapping[str, str] = {
    "persistent_volume_claim": "persistentVolumeClaim",
    "ephemeral": "ephemeral",
    "csi": "csi",
    "gce_persistent_disk": "gcePersistentDisk",
    "aws_elastic_block_store": "awsElasticBlockStore",
    "iscsi": "iscsi",
    "rbd": "rbd",
    "azure_disk": "azureDisk",
    "cinder": "cinder",
    "portworx_volume": "portworxVolume",
    "azure_file": "azureFile",
    "vsphere_volume": "vsphereVolume",
}
_READ_BY_PLUGINS = frozenset(SOURCE_KINDS.values()) - {"csi"}
_AZURE_DISK_KINDS = frozenset({"Shared", "Dedicated", "Managed"})


def _need(value: str, path: str) -> str:
    if not value:
        raise InvalidArgument(path, "required")
    return value


def _partition(n: int, path: str) -> int:
    if not 0 <= n <= 255:
        raise InvalidArgument(path, f"{n} is not in 0..255")
    return n


def _iscsi(s: pb.ISCSIVolumeSource, path: str) -> mv.ISCSI:
    _need(s.target_portal, f"{path}.target_portal")
    iqn = _need(s.iqn, f"{path}.iqn")
    if not iqn.startswith(("iqn.", "eui.", "naa.")):
        raise InvalidArgument(f"{path}.iqn", "must be in iqn, eui or naa format")
    if not 0 <= s.lun <= 255:
        raise InvalidArgument(f"{path}.lun", f"{s.lun} is not in 0..255")
    return mv.ISCSI(iqn=iqn, target_portal=s.target_portal, lun=s.lun, read_only=s.read_only)


def _azure_disk(s: pb.AzureDiskVolumeSource, path: str) -> mv.AzureDisk:
    kind = s.kind or "Shared"  # the API default
    if kind not in _AZURE_DISK_KINDS:
        raise InvalidArgument(f"{path}.kind", f"{s.kind!r} is not Shared, Dedicated or Managed")
    return mv.AzureDisk(
        disk_name=_need(s.disk_name, f"{path}.disk_name"),
        disk_uri=_need(s.disk_uri, f"{path}.disk_uri"),
        kind=kind, read_only=s.read_only,
    )


def _disk(kind: str, s: Any, path: str) -> mv.DiskSources:
    """The DiskSources of one in-tree source message `s` (the oneof's `kind` field)."""
    if kind == "gce_persistent_disk":
        return mv.DiskSources(gce_persistent_disk=mv.GCEPersistentDisk(
            _need(s.pd_name, f"{path}.pd_name"), _partition(s.partition, f"{path}.partition"),
            s.read_only))
    if kind == "aws_elastic_block_store":
        return mv.DiskSources(aws_elastic_block_store=mv.AWSElasticBlockStore(
            _need(s.volume_id, f"{path}.volume_id"),
            _partition(s.partition, f"{path}.partition"), s.read_only))
    if kind == "iscsi":
        return mv.DiskSources(iscsi=_iscsi(s, path))
    if kind == "rbd":
        if not s.monitors:
            raise InvalidArgument(f"{path}.monitors", "required")
        return mv.DiskSources(rbd=mv.RBD(
            tuple(s.monitors), _need(s.image, f"{path}.image"), s.pool or "rbd", s.read_only))
    if kind == "azure_disk":
        return mv.DiskSources(azure_disk=_azure_disk(s, path))
    if kind == "cinder":
        return mv.DiskSources(cinder=mv.Cinder(_need(s.volume_id, f"{path}.volume_id"),
                                               s.read_only))
    if kind == "portworx_volume":
        return mv.DiskSources(portworx_volume=mv.PortworxVolume(
            _need(s.volume_id, f"{path}.volume_id"), s.read_only))
    if kind == "azure_file":
        return mv.DiskSources(azure_file=True)
    if kind == "vsphere_volume":
        return mv.DiskSources(vsphere_volume=True)
    return mv.NO_DISK


def disk_sources(msg: pb.Volume | pb.PersistentVolume, path: str) -> tuple[str, mv.DiskSources]:
    """The oneof `source` of a volume or a PV: (its proto field, the in-tree disk it names)."""
    which = msg.WhichOneof("source")
    if which is None:
        raise InvalidArgument(f"{path}.source", "exactly one volume source is required")
    return which, _disk(which, getattr(msg, which), f"{path}.{which}")


def _other(name: str, path: str) -> str:
    """An `other` source: a Kubernetes source name no scheduler plugin reads."""
    if not name or not name.isidentifier() or not name[0].islower() or len(name) > 63:
        raise InvalidArgument(path, f"{name[:64]!r} is not a volume source name (e.g. emptyDir)")
    if name in _READ_BY_PLUGINS or name == "csi":
        raise InvalidArgument(path, f"{name} is a source of its own: set that field, not other")
    return name


def access_modes(modes: Iterable[str], path: str) -> tuple[str, ...]:
    out = tuple(modes)
    for i, m in enumerate(out):
        if m not in ACCESS_MODES:
            raise InvalidArgument(f"{path}[{i}]", f"unknown access mode {m!r}")
    if READ_WRITE_ONCE_POD in out and len(out) > 1:
        raise InvalidArgument(path, "may not use ReadWriteOncePod with other access modes")
    return out


def volume_mode(mode: str, path: str) -> str:
    """"" is Filesystem (the API default)."""
    if mode and mode not in VOLUME_MODES:
        raise InvalidArgument(path, f"{mode!r} is not Filesystem or Block")
    return mode or FILESYSTEM


@dataclass(frozen=True, slots=True)
class ClaimSpec:
    """The fields a PersistentVolumeClaim and an ephemeral volume's template share."""

    access_modes: tuple[str, ...]
    selector: LabelSelector | None
    request: int | None
    volume_name: str
    storage_class_name: str | None
    volume_mode: str
    volume_attributes_class_name: str | None


def claim_spec(
    s: pb.PersistentVolumeClaimSpec | pb.PersistentVolumeClaim, path: str, caches: PodCaches
) -> ClaimSpec:
    """A claim's spec, checked (its fields have the same names in both messages)."""
    for k in s.requests:
        if k != "storage":
            raise InvalidArgument(f"{path}.requests{field_key(k)}", "only storage is requested")
    return ClaimSpec(
        access_modes=access_modes(s.access_modes, f"{path}.access_modes"),
        selector=(label_selector(s.selector, f"{path}.selector", caches)
                  if s.HasField("selector") else None),
        request=(to_storage(s.requests["storage"], f'{path}.requests["storage"]')
                 if "storage" in s.requests else None),
        volume_name=s.volume_name,
        storage_class_name=(s.storage_class_name if s.HasField("storage_class_name") else None),
        volume_mode=volume_mode(s.volume_mode, f"{path}.volume_mode"),
        volume_attributes_class_name=(
            s.volume_attributes_class_name if s.HasField("volume_attributes_class_name")
            else None),
    )


def _volume(v: pb.Volume, path: str, caches: PodCaches) -> mv.Volume:
    if (err := dns1123_label_error(v.name)) is not None:
        raise InvalidArgument(f"{path}.name", err)
    which, disk = disk_sources(v, path)
    kind = SOURCE_KINDS.get(which, "other")
    if which == "persistent_volume_claim":
        pvc = v.persistent_volume_claim
        out = mv.Volume(v.name, kind, claim_name=_need(
            pvc.claim_name, f"{path}.persistent_volume_claim.claim_name"), read_only=pvc.read_only)
    elif which == "ephemeral":
        tpl = v.ephemeral.volume_claim_template
        tpath = f"{path}.ephemeral.volume_claim_template"
        if not v.ephemeral.HasField("volume_claim_template"):
            raise InvalidArgument(tpath, "required")
        claim_spec(tpl.spec, f"{tpath}.spec", caches)
        out = mv.Volume(v.name, kind, ephemeral_template=tpl.SerializeToString(deterministic=True))
    elif which == "csi":
        out = mv.Volume(v.name, kind, csi_driver=_need(v.csi.driver, f"{path}.csi.driver"),
                        read_only=v.csi.read_only)
    elif which == "other":
        out = mv.Volume(v.name, kind, other_source=_other(v.other, f"{path}.other"))
    else:
        out = mv.Volume(v.name, kind, disk=disk)
    return out


def pod_volumes(
    vs: Iterable[pb.Volume], prefix: str, caches: PodCaches
) -> tuple[mv.Volume, ...]:
    """A pod's spec.volumes: names unique, each with one valid source."""
    out = tuple([_volume(v, f"{prefix}.volumes[{i}]", caches) for i, v in enumerate(vs)])
    seen: set[str] = set()
    for i, v in enumerate(out):
        if v.name in seen:
            raise InvalidArgument(f"{prefix}.volumes[{i}].name", f"duplicate volume {v.name!r}")
        seen.add(v.name)
    return out
