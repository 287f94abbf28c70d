"""Storage domain types (model_storage.py, model_volume.py) -> schedsvc.v1 messages, the
inverse of the server's convert_storage.py / convert_csi.py / convert_volume.py on valid input
(`pv_from_pb(pv_to_pb(v)) == v`). Imported from this module (not the package) by the tests
and tools that send storage objects."""

from __future__ import annotations

from schedsvc import model_storage as ms
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders.to_pb import KIND_FIELDS, disk_to_pb, label_selector_to_pb

__all__ = [
    "attachment_to_pb",
    "capacity_to_pb",
    "csi_driver_to_pb",
    "csi_node_to_pb",
    "pv_to_pb",
    "pvc_to_pb",
    "storage_class_to_pb",
]

def pv_to_pb(v: ms.PersistentVolume) -> pb.PersistentVolume:
    out = pb.PersistentVolume(
        name=v.name, labels=dict(v.labels), annotations=dict(v.annotations),
        storage_class_name=v.storage_class_name, access_modes=v.access_modes,
        volume_mode=v.volume_mode, phase=v.phase, deleting=v.deleting,
    )
    if v.capacity is not None:
        out.capacity["storage"] = str(v.capacity)
    if v.volume_attributes_class_name is not None:
        out.volume_attributes_class_name = v.volume_attributes_class_name
    if v.node_affinity is not None:
        out.node_affinity.required.node_selector_terms.extend(
            [pb.NodeSelectorTerm(
                match_expressions=[pb.NodeSelectorRequirement(
                    key=r.key, operator=r.operator, values=r.values) for r in t.match_expressions],
                match_fields=[pb.NodeSelectorRequirement(
                    key=r.key, operator=r.operator, values=r.values) for r in t.match_fields],
            ) for t in v.node_affinity])
    if v.claim_ref is not None:
        out.claim_ref.CopyFrom(pb.ClaimReference(
            namespace=v.claim_ref.namespace, name=v.claim_ref.name, uid=v.claim_ref.uid))
    if v.csi is not None:
        out.csi.CopyFrom(pb.CSIPersistentVolumeSource(
            driver=v.csi.driver, volume_handle=v.csi.volume_handle, read_only=v.csi.read_only))
    elif v.source_kind in KIND_FIELDS:
        for name, src in disk_to_pb(v.disk).items():
            getattr(out, name).CopyFrom(src)
    elif v.source_kind:
        out.other = v.source_kind
    return out


def pvc_to_pb(c: ms.PersistentVolumeClaim) -> pb.PersistentVolumeClaim:
    out = pb.PersistentVolumeClaim(
        name=c.name, namespace=c.namespace, uid=c.uid, annotations=dict(c.annotations),
        access_modes=c.access_modes, volume_name=c.volume_name, volume_mode=c.volume_mode,
        phase=c.phase, deleting=c.deleting, controller_uid=c.controller_uid,
    )
    if c.request is not None:
        out.requests["storage"] = str(c.request)
    if c.selector is not None:
        out.selector.CopyFrom(label_selector_to_pb(c.selector))
    if c.storage_class_name is not None:
        out.storage_class_name = c.storage_class_name
    if c.volume_attributes_class_name is not None:
        out.volume_attributes_class_name = c.volume_attributes_class_name
    return out


def storage_class_to_pb(s: ms.StorageClass) -> pb.StorageClass:
    return pb.StorageClass(
        name=s.name, provisioner=s.provisioner, volume_binding_mode=s.volume_binding_mode,
        allowed_topologies=[
            pb.TopologySelectorTerm(match_label_expressions=[
                pb.TopologySelectorLabelRequirement(key=k, values=vs)
                for k, vs in t.match_label_expressions])
            for t in s.allowed_topologies
        ],
    )


def csi_node_to_pb(n: ms.CSINode) -> pb.CSINode:
    out = pb.CSINode(name=n.name, annotations=dict(n.annotations))
    for d in n.drivers:
        entry = out.drivers.add(name=d.name)
        if d.allocatable_count is not None:
            entry.allocatable.count = d.allocatable_count
    return out


def csi_driver_to_pb(d: ms.CSIDriver) -> pb.CSIDriver:
    return pb.CSIDriver(name=d.name, storage_capacity=d.storage_capacity,
                        prevent_pod_scheduling_if_missing=d.prevent_pod_scheduling_if_missing)


def capacity_to_pb(c: ms.CSIStorageCapacity) -> pb.CSIStorageCapacity:
    out = pb.CSIStorageCapacity(name=c.name, namespace=c.namespace,
                                storage_class_name=c.storage_class_name)
    if c.node_topology is not None:
        out.node_topology.CopyFrom(label_selector_to_pb(c.node_topology))
    if c.capacity is not None:
        out.capacity = str(c.capacity)
    if c.maximum_volume_size is not None:
        out.maximum_volume_size = str(c.maximum_volume_size)
    return out


def attachment_to_pb(a: ms.VolumeAttachment) -> pb.VolumeAttachment:
    return pb.VolumeAttachment(name=a.name, attacher=a.attacher, node_name=a.node_name,
                               persistent_volume_name=a.persistent_volume_name)
