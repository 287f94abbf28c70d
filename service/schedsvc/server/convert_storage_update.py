"""The storage lists of an UpdateSnapshotRequest -> SnapshotUpdate's: each object converted
(convert_storage.py, convert_csi.py), each removal key checked, errors naming the list entry
(`upsert_persistent_volumes[3].capacity`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from schedsvc.v1 import schedule_pb2 as pb

from .cache import PodCaches
from .convert_csi import (
    attachment_from_pb,
    capacity_from_pb,
    csi_driver_from_pb,
    csi_node_from_pb,
    name_key,
    namespaced_key,
)
from .convert_storage import pv_from_pb, pvc_from_pb, storage_class_from_pb

__all__ = ["STORAGE_LISTS", "storage_update_fields"]

# the request's (and SnapshotUpdate's) storage lists, upserts and removals
STORAGE_LISTS = (
    "upsert_persistent_volumes", "remove_persistent_volumes",
    "upsert_persistent_volume_claims", "remove_persistent_volume_claims",
    "upsert_storage_classes", "remove_storage_classes",
    "upsert_csi_nodes", "remove_csi_nodes",
    "upsert_csi_drivers", "remove_csi_drivers",
    "upsert_csi_storage_capacities", "remove_csi_storage_capacities",
    "upsert_volume_attachments", "remove_volume_attachments",
)
_NAMESPACED = frozenset({"remove_persistent_volume_claims", "remove_csi_storage_capacities"})


def _converters(caches: PodCaches, n: int) -> Mapping[str, Callable[[Any, str], object]]:
    return {
        "upsert_persistent_volumes": lambda m, p: pv_from_pb(m, p, caches, n),
        "upsert_persistent_volume_claims": lambda m, p: pvc_from_pb(m, p, caches, n),
        "upsert_storage_classes": lambda m, p: storage_class_from_pb(m, p, n),
        "upsert_csi_nodes": lambda m, p: csi_node_from_pb(m, p, n),
        "upsert_csi_drivers": csi_driver_from_pb,
        "upsert_csi_storage_capacities": lambda m, p: capacity_from_pb(m, p, caches, n),
        "upsert_volume_attachments": attachment_from_pb,
    }


def storage_update_fields(
    request: pb.UpdateSnapshotRequest, caches: PodCaches, max_items: int
) -> dict[str, Any]:
    """SnapshotUpdate's storage fields, only those the request sets (most set none)."""
    out: dict[str, Any] = {}
    convert = None
    for fname in STORAGE_LISTS:
        items = getattr(request, fname)
        if not items:
            continue
        if fname.startswith("remove_"):
            check = namespaced_key if fname in _NAMESPACED else name_key
            out[fname] = [check(k, f"{fname}[{i}]") for i, k in enumerate(items)]
            continue
        convert = convert or _converters(caches, max_items)
        one = convert[fname]
        out[fname] = [one(m, f"{fname}[{i}]") for i, m in enumerate(items)]
    return out
