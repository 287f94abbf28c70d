"""Pods with volumes and storage objects, for the tables of VolumeRestrictions, VolumeZone and
NodeVolumeLimits (kube's volume test fixtures: st.MakePod().PVC(...), makePV, makePVC...)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Node, Pod
from schedsvc.model_storage import (
    ANN_BIND_COMPLETED,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIPersistentVolumeSource,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from schedsvc.model_volume import DiskSources, Volume

__all__ = [
    "DISK_KINDS",
    "claim_volume",
    "ephemeral_volume",
    "disk_volume",
    "pod_with_volumes",
    "csi_pv",
    "disk_pv",
    "make_pvc",
    "make_csi_node",
    "volume_snapshot",
]

# DiskSources field -> the source's Kubernetes name (Volume.kind)
DISK_KINDS = {
    "gce_persistent_disk": "gcePersistentDisk",
    "aws_elastic_block_store": "awsElasticBlockStore",
    "iscsi": "iscsi",
    "rbd": "rbd",
    "azure_disk": "azureDisk",
    "cinder": "cinder",
    "portworx_volume": "portworxVolume",
}


def claim_volume(claim: str, name: str = "") -> Volume:
    return Volume(name=name or claim, kind="persistentVolumeClaim", claim_name=claim)


def ephemeral_volume(name: str) -> Volume:
    return Volume(name=name, kind="ephemeral", ephemeral_template=b"{}")


def disk_volume(name: str = "vol", **source: object) -> Volume:
    """One in-tree disk, e.g. disk_volume(gce_persistent_disk=GCEPersistentDisk("foo"))."""
    (field,) = source
    return Volume(name=name, kind=DISK_KINDS[field], disk=DiskSources(**source))  # type: ignore[arg-type]


def pod_with_volumes(
    name: str, *volumes: Volume, namespace: str = "default", uid: str = "", priority: int = 0
) -> Pod:
    return Pod(
        uid=uid or f"{namespace}/{name}", name=name, namespace=namespace, volumes=volumes,
        priority=priority,
    )


def csi_pv(name: str, driver: str, handle: str = "", labels: Mapping[str, str] | None = None
           ) -> PersistentVolume:
    return PersistentVolume(
        name=name, labels=dict(labels or {}), source_kind="csi",
        csi=CSIPersistentVolumeSource(driver=driver, volume_handle=handle or name),
    )


def disk_pv(name: str, labels: Mapping[str, str] | None = None, **source: object
            ) -> PersistentVolume:
    """A PV with an in-tree source (or, without one, a hostPath PV)."""
    kind = DISK_KINDS[next(iter(source))] if source else "hostPath"
    return PersistentVolume(
        name=name, labels=dict(labels or {}), source_kind=kind,
        disk=DiskSources(**source),  # type: ignore[arg-type]
    )


def make_pvc(
    name: str, volume_name: str = "", storage_class: str | None = None,
    access_modes: tuple[str, ...] = (), namespace: str = "default", owner_uid: str = "",
) -> PersistentVolumeClaim:
    """A claim; one with a volume name is fully bound (kube's bind-completed annotation)."""
    return PersistentVolumeClaim(
        name=name, namespace=namespace, volume_name=volume_name,
        annotations={ANN_BIND_COMPLETED: "yes"} if volume_name else {},
        storage_class_name=storage_class, access_modes=access_modes, controller_uid=owner_uid,
    )


def make_csi_node(
    name: str, limits: Mapping[str, int | None], annotations: Mapping[str, str] | None = None
) -> CSINode:
    """A CSINode with one driver per entry, its allocatable count the value (None: none)."""
    drivers = tuple(CSINodeDriver(d, n) for d, n in limits.items())
    return CSINode(name=name, drivers=drivers, annotations=dict(annotations or {}))


def volume_snapshot(
    nodes: Iterable[Node],
    placed: Iterable[tuple[Pod, str]] = (),
    pvs: Iterable[PersistentVolume] = (),
    pvcs: Iterable[PersistentVolumeClaim] = (),
    classes: Iterable[StorageClass] = (),
    csi_nodes: Iterable[CSINode] = (),
    drivers: Iterable[CSIDriver] = (),
    attachments: Iterable[VolumeAttachment] = (),
) -> Snapshot:
    """The nodes, the storage objects, then the pods placed."""
    snap = Snapshot()
    for n in nodes:
        snap.upsert_node(n)
    st = snap.storage
    st.pvs.update((p.name, p) for p in pvs)
    st.pvcs.update((c.key, c) for c in pvcs)
    st.classes.update((c.name, c) for c in classes)
    st.csi_nodes.update((c.name, c) for c in csi_nodes)
    st.csi_drivers.update((d.name, d) for d in drivers)
    st.attachments.update((a.name, a) for a in attachments)
    st.generation += 1
    for p, node_name in placed:
        snap.add_pod(p, node_name)
    return snap
