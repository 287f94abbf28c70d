"""schedsvc.v1 CSI objects -> domain (model_storage.py): CSINodes, CSIDrivers,
CSIStorageCapacities, VolumeAttachments; and the keys the remove_* lists of storage objects
name. PersistentVolumes, claims and classes are convert_storage.py.
"""

from __future__ import annotations

from schedsvc.errors import InvalidArgument
from schedsvc.model_storage import (
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    VolumeAttachment,
)
from schedsvc.v1 import schedule_pb2 as pb

from .cache import PodCaches
from .convert_selectors import label_selector
from .convert_storage import namespace, object_name
from .counts import check_counts
from .validation import annotation_map, to_storage

__all__ = [
    "attachment_from_pb",
    "capacity_from_pb",
    "csi_driver_from_pb",
    "csi_node_from_pb",
    "name_key",
    "namespaced_key",
]

# a CSI driver's name: kube's ValidateCSIDriverName (at most 63 characters, a DNS subdomain
# once lower-cased: upper case is allowed)
_MAX_DRIVER_NAME = 63


def _driver_name(name: str, path: str) -> str:
    if len(name) > _MAX_DRIVER_NAME:
        raise InvalidArgument(path, f"must be no more than {_MAX_DRIVER_NAME} characters")
    object_name(name.lower(), path)
    return name


def csi_node_from_pb(msg: pb.CSINode, prefix: str, max_items: int) -> CSINode:
    """A CSINode (named as its node): its drivers, unique by name, and their attach limits."""
    name = object_name(msg.name, f"{prefix}.name")
    check_counts(msg, prefix, max_items)
    drivers = []
    seen: set[str] = set()
    for i, d in enumerate(msg.drivers):
        path = f"{prefix}.drivers[{i}]"
        dname = _driver_name(d.name, f"{path}.name")
        if dname in seen:
            raise InvalidArgument(f"{path}.name", f"duplicate driver {dname!r}")
        seen.add(dname)
        count = None
        if d.HasField("allocatable") and d.allocatable.HasField("count"):
            count = d.allocatable.count
            if count < 0:
                raise InvalidArgument(f"{path}.allocatable.count", "must not be negative")
        drivers.append(CSINodeDriver(name=dname, allocatable_count=count))
    return CSINode(
        name=name, drivers=tuple(drivers),
        annotations=annotation_map(msg.annotations, f"{prefix}.annotations"),
    )


def csi_driver_from_pb(msg: pb.CSIDriver, prefix: str) -> CSIDriver:
    return CSIDriver(
        name=_driver_name(msg.name, f"{prefix}.name"),
        storage_capacity=msg.storage_capacity,
        prevent_pod_scheduling_if_missing=msg.prevent_pod_scheduling_if_missing,
    )


def capacity_from_pb(
    msg: pb.CSIStorageCapacity, prefix: str, caches: PodCaches, max_items: int
) -> CSIStorageCapacity:
    """A CSIStorageCapacity; its class is required (kube's API), quantities are optional."""
    name = object_name(msg.name, f"{prefix}.name")
    ns = namespace(msg.namespace, f"{prefix}.namespace")
    check_counts(msg, prefix, max_items)
    return CSIStorageCapacity(
        name=name,
        namespace=ns,
        storage_class_name=object_name(msg.storage_class_name, f"{prefix}.storage_class_name"),
        node_topology=(
            label_selector(msg.node_topology, f"{prefix}.node_topology", caches)
            if msg.HasField("node_topology") else None
        ),
        capacity=to_storage(msg.capacity, f"{prefix}.capacity") if msg.capacity else None,
        maximum_volume_size=(
            to_storage(msg.maximum_volume_size, f"{prefix}.maximum_volume_size")
            if msg.maximum_volume_size else None
        ),
    )


def attachment_from_pb(msg: pb.VolumeAttachment, prefix: str) -> VolumeAttachment:
    """A VolumeAttachment: the node and PV names must be names (either may be "": an
    attachment of an inline spec, which NodeVolumeLimits ignores)."""
    name = object_name(msg.name, f"{prefix}.name")
    for field in ("node_name", "persistent_volume_name"):
        value = getattr(msg, field)
        if value:
            object_name(value, f"{prefix}.{field}")
    if msg.attacher:
        _driver_name(msg.attacher, f"{prefix}.attacher")
    return VolumeAttachment(
        name=name, attacher=msg.attacher, node_name=msg.node_name,
        persistent_volume_name=msg.persistent_volume_name,
    )


def name_key(key: str, path: str) -> str:
    """A remove_* entry of a cluster-scoped object: its name."""
    return object_name(key, path)


def namespaced_key(key: str, path: str) -> str:
    """A remove_* entry of a namespaced object: "namespace/name"."""
    if len(key) > 63 + 1 + 253:
        raise InvalidArgument(path, "too long to be \"namespace/name\"")
    ns, sep, name = key.partition("/")
    if not sep or not ns or not name:
        raise InvalidArgument(path, f"{key!r} is not \"namespace/name\"")
    namespace(ns, path)
    object_name(name, path)
    return key
