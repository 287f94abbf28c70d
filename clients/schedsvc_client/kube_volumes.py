"""A pod's spec.volumes from Kubernetes JSON into the contract (pb.Volume): the sources kube's
volume plugins read become their own fields, any other known source is sent as `other` by its
name (no scheduler plugin reads it), a source we do not know is refused by name.

The source messages carry Kubernetes' JSON names (json_name where protobuf's camelCase differs:
volumeID, diskURI), so each parses as it stands; an ephemeral volume's template is flattened
by hand (its labels, annotations and the claim spec the server signs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedsvc.v1 import schedule_pb2 as pb

from .kube_json import KubeObjectError, as_list, as_object, as_str, join, quantities, str_map
from .kube_proto import parse_into

__all__ = ["MODELLED_SOURCES", "OTHER_SOURCES", "claim_spec_into", "volumes_from_kube"]

# spec.volumes[].<source> -> its field on pb.Volume
MODELLED_SOURCES: Mapping[str, str] = {
    "persistentVolumeClaim": "persistent_volume_claim",
    "ephemeral": "ephemeral",
    "csi": "csi",
    "gcePersistentDisk": "gce_persistent_disk",
    "awsElasticBlockStore": "aws_elastic_block_store",
    "iscsi": "iscsi",
    "rbd": "rbd",
    "azureDisk": "azure_disk",
    "cinder": "cinder",
    "portworxVolume": "portworx_volume",
    "azureFile": "azure_file",
    "vsphereVolume": "vsphere_volume",
}
# core/v1 VolumeSource's other members: read by no scheduler plugin (docs/kube-fields.md)
OTHER_SOURCES = frozenset({
    "hostPath", "emptyDir", "gitRepo", "secret", "nfs", "glusterfs", "flexVolume", "cephfs",
    "flocker", "downwardAPI", "fc", "configMap", "quobyte", "photonPersistentDisk", "projected",
    "scaleIO", "storageos", "image",
})


def claim_spec_into(out: Any, spec: Mapping[str, Any], path: str) -> None:
    """A claim's spec (PersistentVolumeClaim.spec, an ephemeral template's spec) into `out`,
    a pb.PersistentVolumeClaim or pb.PersistentVolumeClaimSpec: requests.storage only."""
    out.access_modes.extend(
        as_str(m, f"{join(path, 'accessModes')}[{i}]")
        for i, m in enumerate(as_list(spec.get("accessModes"), join(path, "accessModes"))))
    if spec.get("selector") is not None:
        parse_into(out, {"selector": spec["selector"]}, path)
    res = as_object(spec.get("resources"), join(path, "resources"))
    requests = quantities(res.get("requests"), join(path, "resources.requests"))
    if "storage" in requests:
        out.requests["storage"] = requests["storage"]
    out.volume_name = as_str(spec.get("volumeName"), join(path, "volumeName"))
    out.volume_mode = as_str(spec.get("volumeMode"), join(path, "volumeMode"))
    for key, field in (("storageClassName", "storage_class_name"),
                       ("volumeAttributesClassName", "volume_attributes_class_name")):
        if spec.get(key) is not None:  # unset differs from ""
            setattr(out, field, as_str(spec[key], join(path, key)))


def _ephemeral(src: Mapping[str, Any], path: str) -> pb.EphemeralVolumeSource:
    tpl_path = join(path, "volumeClaimTemplate")
    tpl = as_object(src.get("volumeClaimTemplate"), tpl_path)
    meta = as_object(tpl.get("metadata"), join(tpl_path, "metadata"))
    out = pb.EphemeralVolumeSource()
    if src.get("volumeClaimTemplate") is None:
        return out  # the server refuses it, naming the field
    t = out.volume_claim_template
    t.labels.update(str_map(meta.get("labels"), join(tpl_path, "metadata.labels")))
    t.annotations.update(str_map(meta.get("annotations"), join(tpl_path, "metadata.annotations")))
    claim_spec_into(t.spec, as_object(tpl.get("spec"), join(tpl_path, "spec")),
                    join(tpl_path, "spec"))
    return out


def _volume(obj: Any, path: str) -> pb.Volume:
    vol = as_object(obj, path)
    out = pb.Volume(name=as_str(vol.get("name"), join(path, "name")))
    sources = [k for k, v in vol.items() if k != "name" and v is not None]
    if len(sources) != 1:
        raise KubeObjectError(path, f"a volume has exactly one source, not {sorted(sources)}")
    kind = sources[0]
    src_path = join(path, kind)
    field = MODELLED_SOURCES.get(kind)
    if field == "ephemeral":
        out.ephemeral.CopyFrom(_ephemeral(as_object(vol[kind], src_path), src_path))
    elif field is not None:
        getattr(out, field).SetInParent()
        parse_into(out, {kind: as_object(vol[kind], src_path)}, path)
    elif kind in OTHER_SOURCES:
        out.other = kind
    else:
        raise KubeObjectError(src_path, f"unknown volume source {kind!r}")
    return out


def volumes_from_kube(spec: Mapping[str, Any], path: str) -> list[pb.Volume]:
    """spec.volumes, each with its one source."""
    list_path = join(path, "spec.volumes")
    return [_volume(v, f"{list_path}[{i}]") for i, v in enumerate(as_list(spec.get("volumes"),
                                                                          list_path))]
