"""schedsvc.v1 storage objects -> domain (model_storage.py): PersistentVolumes, claims and
StorageClasses here, the CSI objects in convert_csi.py. Validated as kube's API server
validates the fields we read, with its defaults applied (volumeMode Filesystem, phases Pending,
volumeBindingMode Immediate). A reference to an object the cluster lacks (a claim's class, a
PV's claim) is no error here: it is the plugins' verdict when a pod needs it.
"""

from __future__ import annotations

from schedsvc.errors import InvalidArgument
from schedsvc.model_storage import (
    BINDING_MODES,
    IMMEDIATE,
    PV_PHASES,
    PVC_PHASES,
    ClaimRef,
    CSIPersistentVolumeSource,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorTerm,
)
from schedsvc.model_volume import DiskSources
from schedsvc.v1 import schedule_pb2 as pb

from .cache import PodCaches
from .convert_selectors import node_selector_terms
from .convert_volume import SOURCE_KINDS, access_modes, claim_spec, disk_sources, volume_mode
from .counts import check_counts
from .validation import (
    annotation_map,
    check_key,
    dns1123_label_error,
    dns1123_subdomain_error,
    field_key,
    label_value_error,
    labels,
    to_storage,
)

__all__ = ["namespace", "object_name", "pv_from_pb", "pvc_from_pb", "storage_class_from_pb"]


def object_name(name: str, path: str) -> str:
    """metadata.name: a DNS-1123 subdomain, required."""
    if not name:
        raise InvalidArgument(path, "required")
    if (err := dns1123_subdomain_error(name)) is not None:
        raise InvalidArgument(path, err)
    return name


def namespace(ns: str, path: str) -> str:
    """metadata.namespace: "" is "default"; otherwise a DNS-1123 label."""
    ns = ns or "default"
    if (err := dns1123_label_error(ns)) is not None:
        raise InvalidArgument(path, f"not a namespace name: {err}")
    return ns


def _phase(phase: str, allowed: tuple[str, ...], path: str) -> str:
    if phase and phase not in allowed:
        raise InvalidArgument(path, f"unknown phase {phase!r} (one of {', '.join(allowed)})")
    return phase or "Pending"


def _capacity(msg: pb.PersistentVolume, path: str) -> int | None:
    for k in msg.capacity:
        if k != "storage":
            raise InvalidArgument(f"{path}{field_key(k)}", "a PV's capacity is storage only")
    if "storage" not in msg.capacity:
        return None
    return to_storage(msg.capacity["storage"], f'{path}["storage"]')


def _pv_source(
    msg: pb.PersistentVolume, prefix: str
) -> tuple[str, CSIPersistentVolumeSource | None, DiskSources]:
    """(the source's Kubernetes name, its CSI source, its in-tree disk source)."""
    which, disk = disk_sources(msg, prefix)
    if which == "other":
        kind = msg.other
        if not kind or kind in SOURCE_KINDS.values():
            raise InvalidArgument(f"{prefix}.other", f"{kind!r}: name a source set nowhere else")
        return kind, None, disk
    csi = None
    if which == "csi":
        if not msg.csi.driver:
            raise InvalidArgument(f"{prefix}.csi.driver", "required")
        if not msg.csi.volume_handle:
            raise InvalidArgument(f"{prefix}.csi.volume_handle", "required")
        csi = CSIPersistentVolumeSource(msg.csi.driver, msg.csi.volume_handle, msg.csi.read_only)
    return SOURCE_KINDS[which], csi, disk


def pv_from_pb(
    msg: pb.PersistentVolume, prefix: str, caches: PodCaches, max_items: int
) -> PersistentVolume:
    """A PersistentVolume (cluster-scoped, named as a DNS subdomain)."""
    name = object_name(msg.name, f"{prefix}.name")
    check_counts(msg, prefix, max_items)
    kind, csi, disk = _pv_source(msg, prefix)
    affinity = None
    if msg.HasField("node_affinity"):
        path = f"{prefix}.node_affinity.required.node_selector_terms"
        terms = msg.node_affinity.required.node_selector_terms
        if not terms:
            raise InvalidArgument(path, "must have at least one node selector term")
        affinity = node_selector_terms(terms, path)
    claim_ref = None
    if msg.HasField("claim_ref"):
        ref = msg.claim_ref
        claim_ref = ClaimRef(
            namespace=namespace(ref.namespace, f"{prefix}.claim_ref.namespace"),
            name=object_name(ref.name, f"{prefix}.claim_ref.name"), uid=ref.uid,
        )
    return PersistentVolume(
        name=name,
        labels=labels(msg.labels, f"{prefix}.labels"),
        annotations=annotation_map(msg.annotations, f"{prefix}.annotations"),
        storage_class_name=msg.storage_class_name,
        capacity=_capacity(msg, f"{prefix}.capacity"),
        access_modes=access_modes(msg.access_modes, f"{prefix}.access_modes"),
        volume_mode=volume_mode(msg.volume_mode, f"{prefix}.volume_mode"),
        volume_attributes_class_name=(
            msg.volume_attributes_class_name if msg.HasField("volume_attributes_class_name")
            else None),
        node_affinity=affinity,
        claim_ref=claim_ref,
        csi=csi,
        disk=disk,
        source_kind=kind,
        phase=_phase(msg.phase, PV_PHASES, f"{prefix}.phase"),
        deleting=msg.deleting,
    )


def pvc_from_pb(
    msg: pb.PersistentVolumeClaim, prefix: str, caches: PodCaches, max_items: int
) -> PersistentVolumeClaim:
    """A PersistentVolumeClaim (namespaced)."""
    name = object_name(msg.name, f"{prefix}.name")
    ns = namespace(msg.namespace, f"{prefix}.namespace")
    check_counts(msg, prefix, max_items)
    spec = claim_spec(msg, prefix, caches)
    return PersistentVolumeClaim(
        name=name,
        namespace=ns,
        uid=msg.uid,
        annotations=annotation_map(msg.annotations, f"{prefix}.annotations"),
        storage_class_name=spec.storage_class_name,
        volume_name=spec.volume_name,
        access_modes=spec.access_modes,
        request=spec.request,
        selector=spec.selector,
        volume_mode=spec.volume_mode,
        volume_attributes_class_name=spec.volume_attributes_class_name,
        phase=_phase(msg.phase, PVC_PHASES, f"{prefix}.phase"),
        deleting=msg.deleting,
        controller_uid=msg.controller_uid,
    )


def _topology_term(t: pb.TopologySelectorTerm, path: str) -> TopologySelectorTerm:
    out = []
    for i, r in enumerate(t.match_label_expressions):
        rpath = f"{path}.match_label_expressions[{i}]"
        check_key(r.key, f"{rpath}.key")
        if not r.values:
            raise InvalidArgument(f"{rpath}.values", "must be non-empty")
        for j, v in enumerate(r.values):
            if (err := label_value_error(v)) is not None:
                raise InvalidArgument(f"{rpath}.values[{j}]", err)
        out.append((r.key, tuple(r.values)))
    return TopologySelectorTerm(match_label_expressions=tuple(out))


def storage_class_from_pb(
    msg: pb.StorageClass, prefix: str, max_items: int
) -> StorageClass:
    """A StorageClass; volumeBindingMode "" is Immediate (the API default)."""
    name = object_name(msg.name, f"{prefix}.name")
    check_counts(msg, prefix, max_items)
    mode = msg.volume_binding_mode or IMMEDIATE
    if mode not in BINDING_MODES:
        raise InvalidArgument(
            f"{prefix}.volume_binding_mode",
            f"unknown binding mode {msg.volume_binding_mode!r} (Immediate, WaitForFirstConsumer)",
        )
    return StorageClass(
        name=name,
        provisioner=msg.provisioner,
        volume_binding_mode=mode,
        allowed_topologies=tuple(
            _topology_term(t, f"{prefix}.allowed_topologies[{i}]")
            for i, t in enumerate(msg.allowed_topologies)
        ),
    )
