"""Storage objects from Kubernetes JSON (`kubectl get pv,pvc,storageclass,csinode,csidriver,
csistoragecapacity,volumeattachment -o json`) into the contract: the fields kube's volume
plugins read (docs/kube-fields.md), metadata and spec side by side as the contract has them.
Errors name the JSON path of the bad field. The server applies the API server's defaults, so
a field left out here is left out there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from google.protobuf.message import Message

from schedsvc.v1 import schedule_pb2 as pb

from .kube_json import (
    KubeObjectError,
    as_bool,
    as_object,
    as_str,
    controller_field,
    join,
    object_parts,
    quantities,
    quantity_text,
    str_map,
)
from .kube_proto import parse_into
from .kube_volumes import MODELLED_SOURCES, claim_spec_into

__all__ = ["STORAGE_KINDS", "storage_object_from_kube"]

# a PersistentVolume's spec keys that are not its source
_PV_SPEC = frozenset({
    "capacity", "accessModes", "claimRef", "persistentVolumeReclaimPolicy", "storageClassName",
    "mountOptions", "volumeMode", "nodeAffinity", "volumeAttributesClassName",
})
# PersistentVolumeSource's members read by no plugin beyond "not CSI, not migratable"
_PV_OTHER_SOURCES = frozenset({
    "hostPath", "glusterfs", "nfs", "cephfs", "fc", "flocker", "flexVolume", "quobyte",
    "photonPersistentDisk", "scaleIO", "local", "storageos",
})


def _name(meta: Mapping[str, Any], path: str, kind: str) -> str:
    name = as_str(meta.get("name"), join(path, "metadata.name"))
    if not name:
        raise KubeObjectError(join(path, "metadata.name"), f"a {kind} needs a name")
    return name


def _pv_source(out: pb.PersistentVolume, spec: Mapping[str, Any], path: str) -> None:
    sources = [k for k, v in spec.items() if k not in _PV_SPEC and v is not None]
    if len(sources) != 1:
        raise KubeObjectError(join(path, "spec"),
                              f"a PersistentVolume has exactly one source, not {sorted(sources)}")
    kind = sources[0]
    field = MODELLED_SOURCES.get(kind)
    if field in ("persistent_volume_claim", "ephemeral") or (
            field is None and kind not in _PV_OTHER_SOURCES):
        raise KubeObjectError(join(path, f"spec.{kind}"), f"unknown volume source {kind!r}")
    if field is None:
        out.other = kind
        return
    getattr(out, field).SetInParent()
    parse_into(out, {kind: as_object(spec[kind], join(path, f"spec.{kind}"))}, join(path, "spec"))


def pv_from_kube(obj: Mapping[str, Any], path: str) -> pb.PersistentVolume:
    meta, spec, status = object_parts(obj, path)
    out = pb.PersistentVolume(
        name=_name(meta, path, "PersistentVolume"),
        labels=str_map(meta.get("labels"), join(path, "metadata.labels")),
        annotations=str_map(meta.get("annotations"), join(path, "metadata.annotations")),
        storage_class_name=as_str(
            spec.get("storageClassName"), join(path, "spec.storageClassName")),
        capacity=quantities(spec.get("capacity"), join(path, "spec.capacity")),
        volume_mode=as_str(spec.get("volumeMode"), join(path, "spec.volumeMode")),
        phase=as_str(status.get("phase"), join(path, "status.phase")),
        deleting=meta.get("deletionTimestamp") is not None,
    )
    passed = {k: spec[k] for k in ("accessModes", "nodeAffinity", "claimRef")
              if spec.get(k) is not None}
    if passed:
        parse_into(out, passed, join(path, "spec"))
    if spec.get("volumeAttributesClassName") is not None:
        out.volume_attributes_class_name = as_str(
            spec["volumeAttributesClassName"], join(path, "spec.volumeAttributesClassName"))
    _pv_source(out, spec, path)
    return out


def pvc_from_kube(obj: Mapping[str, Any], path: str) -> pb.PersistentVolumeClaim:
    meta, spec, status = object_parts(obj, path)
    out = pb.PersistentVolumeClaim(
        name=_name(meta, path, "PersistentVolumeClaim"),
        namespace=as_str(meta.get("namespace"), join(path, "metadata.namespace")),
        uid=as_str(meta.get("uid"), join(path, "metadata.uid")),
        annotations=str_map(meta.get("annotations"), join(path, "metadata.annotations")),
        phase=as_str(status.get("phase"), join(path, "status.phase")),
        deleting=meta.get("deletionTimestamp") is not None,
        controller_uid=controller_field(meta, path, "uid"),
    )
    claim_spec_into(out, spec, join(path, "spec"))
    return out


def storage_class_from_kube(obj: Mapping[str, Any], path: str) -> pb.StorageClass:
    meta = as_object(obj.get("metadata"), join(path, "metadata"))
    out = pb.StorageClass(
        name=_name(meta, path, "StorageClass"),
        provisioner=as_str(obj.get("provisioner"), join(path, "provisioner")),
        volume_binding_mode=as_str(obj.get("volumeBindingMode"), join(path, "volumeBindingMode")),
    )
    if obj.get("allowedTopologies") is not None:
        parse_into(out, {"allowedTopologies": obj["allowedTopologies"]}, path)
    return out


def csi_node_from_kube(obj: Mapping[str, Any], path: str) -> pb.CSINode:
    meta, spec, _ = object_parts(obj, path)
    out = pb.CSINode(
        name=_name(meta, path, "CSINode"),
        annotations=str_map(meta.get("annotations"), join(path, "metadata.annotations")),
    )
    if spec.get("drivers") is not None:
        parse_into(out, {"drivers": spec["drivers"]}, join(path, "spec"))
    return out


def csi_driver_from_kube(obj: Mapping[str, Any], path: str) -> pb.CSIDriver:
    meta, spec, _ = object_parts(obj, path)
    return pb.CSIDriver(
        name=_name(meta, path, "CSIDriver"),
        storage_capacity=as_bool(spec.get("storageCapacity"), join(path, "spec.storageCapacity")),
        prevent_pod_scheduling_if_missing=as_bool(
            spec.get("preventPodSchedulingIfMissing"),
            join(path, "spec.preventPodSchedulingIfMissing")),
    )


def capacity_from_kube(obj: Mapping[str, Any], path: str) -> pb.CSIStorageCapacity:
    meta = as_object(obj.get("metadata"), join(path, "metadata"))
    out = pb.CSIStorageCapacity(
        name=_name(meta, path, "CSIStorageCapacity"),
        namespace=as_str(meta.get("namespace"), join(path, "metadata.namespace")),
        storage_class_name=as_str(obj.get("storageClassName"), join(path, "storageClassName")),
    )
    for key, field in (("capacity", "capacity"), ("maximumVolumeSize", "maximum_volume_size")):
        if obj.get(key) is not None:
            setattr(out, field, quantity_text(obj[key], join(path, key)))
    if obj.get("nodeTopology") is not None:
        parse_into(out, {"nodeTopology": obj["nodeTopology"]}, path)
    return out


def attachment_from_kube(obj: Mapping[str, Any], path: str) -> pb.VolumeAttachment:
    meta, spec, _ = object_parts(obj, path)
    source = as_object(spec.get("source"), join(path, "spec.source"))
    return pb.VolumeAttachment(
        name=_name(meta, path, "VolumeAttachment"),
        attacher=as_str(spec.get("attacher"), join(path, "spec.attacher")),
        node_name=as_str(spec.get("nodeName"), join(path, "spec.nodeName")),
        persistent_volume_name=as_str(source.get("persistentVolumeName"),
                                      join(path, "spec.source.persistentVolumeName")),
    )


# kind -> (UpdateSnapshotRequest's upsert list, the reader)
STORAGE_KINDS: Mapping[str, tuple[str, Callable[[Mapping[str, Any], str], Message]]] = {
    "PersistentVolume": ("upsert_persistent_volumes", pv_from_kube),
    "PersistentVolumeClaim": ("upsert_persistent_volume_claims", pvc_from_kube),
    "StorageClass": ("upsert_storage_classes", storage_class_from_kube),
    "CSINode": ("upsert_csi_nodes", csi_node_from_kube),
    "CSIDriver": ("upsert_csi_drivers", csi_driver_from_kube),
    "CSIStorageCapacity": ("upsert_csi_storage_capacities", capacity_from_kube),
    "VolumeAttachment": ("upsert_volume_attachments", attachment_from_kube),
}


def storage_object_from_kube(kind: str, obj: Any, path: str) -> Message:
    """One storage object of `kind` (a key of STORAGE_KINDS)."""
    return STORAGE_KINDS[kind][1](as_object(obj, path), path)
