"""Storage objects for VolumeBinding's tests, after kube's volumebinding test helpers
(makePV, makePVC, makeCapacity, makeNode, makePod().withPVCVolume): PVs, claims, classes,
capacity objects, pods that use claims, and a snapshot holding them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import (
    LabelSelector,
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    frozen_map,
)
from schedsvc.model_storage import (
    ANN_BIND_COMPLETED,
    IMMEDIATE,
    WAIT_FOR_FIRST_CONSUMER,
    ClaimRef,
    CSIDriver,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorTerm,
)
from schedsvc.model_volume import Volume
from tests.builders.snapshots import snapshot_of

__all__ = [
    "Gi", "G", "NODE_KEY", "make_storage_node", "affinity", "make_pv", "make_pvc",
    "make_class", "make_capacity", "driver", "pod_with_claims", "storage_snapshot",
]

Gi = 2**30
G = 10**9
NODE_KEY = "nodeKey"  # kube's nodeLabelKey


def make_storage_node(name: str, **labels: str) -> Node:
    """makeNode: the hostname label and any others."""
    return Node(name=name, labels={"kubernetes.io/hostname": name, **labels},
                allocatable={"cpu": 4000, "memory": 8 * Gi, "pods": 110})


def affinity(pairs: Mapping[str, Sequence[str]]) -> tuple[NodeSelectorTerm, ...]:
    """withNodeAffinity: one term, a key In values requirement per key."""
    return (NodeSelectorTerm(tuple(
        NodeSelectorRequirement(k, "In", tuple(v)) for k, v in pairs.items()
    )),)


def make_pv(
    name: str, cls: str = "", capacity: int | None = None, *, node: str = "",
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None, phase: str = "Available",
    claim: PersistentVolumeClaim | None = None, **kw: object,
) -> PersistentVolume:
    """makePV: `node` sets kube's binder-test affinity `nodeKey In [node]`; `claim` a claimRef
    to it with bound-by-controller."""
    if node:
        node_affinity = affinity({NODE_KEY: [node]})
    ann: dict[str, str] = {}
    ref = None
    if claim is not None:
        ref = ClaimRef(claim.namespace, claim.name, claim.uid)
        ann["pv.kubernetes.io/bound-by-controller"] = "yes"
    return PersistentVolume(
        name=name, storage_class_name=cls, capacity=capacity, node_affinity=node_affinity,
        phase=phase, claim_ref=ref, annotations=frozen_map(ann), **kw,  # type: ignore[arg-type]
    )


def make_pvc(
    name: str, cls: str | None = "", request: int | None = None, *, bound_to: str = "",
    volume_name: str = "", namespace: str = "default", uid: str = "", **kw: object,
) -> PersistentVolumeClaim:
    """makePVC: `bound_to` a PV with bind-completed (withBoundPV); `volume_name` alone is a
    prebound claim."""
    ann = dict(kw.pop("annotations", {}) or {})  # type: ignore[call-overload]
    if bound_to:
        ann[ANN_BIND_COMPLETED] = "yes"
        volume_name = bound_to
    return PersistentVolumeClaim(
        name=name, namespace=namespace, uid=uid or f"{name}-uid", storage_class_name=cls,
        request=request, volume_name=volume_name, annotations=frozen_map(ann),
        **kw,  # type: ignore[arg-type]
    )


def make_class(
    name: str, mode: str = WAIT_FOR_FIRST_CONSUMER, provisioner: str = "",
    topologies: Iterable[Mapping[str, Sequence[str]]] = (),
) -> StorageClass:
    return StorageClass(
        name=name, provisioner=provisioner, volume_binding_mode=mode or IMMEDIATE,
        allowed_topologies=tuple(
            TopologySelectorTerm(tuple((k, tuple(v)) for k, v in t.items())) for t in topologies
        ),
    )


def make_capacity(
    name: str, cls: str, node_key: str | None, capacity: int | None,
    maximum: int | None = None, namespace: str = "",
) -> CSIStorageCapacity:
    """makeCapacity: nodeTopology {} or matchLabels {nodeKey: node_key}."""
    topo = LabelSelector(((NODE_KEY, node_key),) if node_key is not None else ())
    return CSIStorageCapacity(name=name, namespace=namespace, storage_class_name=cls,
                              node_topology=topo, capacity=capacity, maximum_volume_size=maximum)


def driver(name: str, storage_capacity: bool) -> CSIDriver:
    return CSIDriver(name=name, storage_capacity=storage_capacity)


def pod_with_claims(
    name: str, *claims: str, ephemeral: Sequence[str] = (), namespace: str = "default",
    uid: str = "", other: Sequence[str] = (),
) -> Pod:
    """makePod(name).withPVCVolume(claim, ...): a volume per claim, then generic ephemeral
    volumes, then volumes of other sources (emptyDir, configMap, ...)."""
    vols = [Volume(name=f"vol-{c}", kind="persistentVolumeClaim", claim_name=c) for c in claims]
    vols += [Volume(name=e, kind="ephemeral", ephemeral_template=b"{}") for e in ephemeral]
    vols += [Volume(name=f"o{i}", kind="other", other_source=o) for i, o in enumerate(other)]
    return Pod(uid=uid or name, name=name, namespace=namespace, volumes=tuple(vols))


def storage_snapshot(
    nodes: Iterable[Node], *, pvs: Iterable[PersistentVolume] = (),
    pvcs: Iterable[PersistentVolumeClaim] = (), classes: Iterable[StorageClass] = (),
    drivers: Iterable[CSIDriver] = (), capacities: Iterable[CSIStorageCapacity] = (),
) -> Snapshot:
    """A snapshot of `nodes` whose storage holds the objects given."""
    snap = snapshot_of(nodes)
    st = snap.storage
    st.pvs.update((p.name, p) for p in pvs)
    st.pvcs.update((c.key, c) for c in pvcs)
    st.classes.update((c.name, c) for c in classes)
    st.csi_drivers.update((d.name, d) for d in drivers)
    st.capacities.update((c.key, c) for c in capacities)
    return snap
