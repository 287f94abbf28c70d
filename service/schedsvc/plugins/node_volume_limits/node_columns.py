"""The CSINodes and VolumeAttachments of the snapshot as columns over node rows, rebuilt when
the storage objects or the node set change: which rows have a CSINode, each driver's limit
and installation per row, and the volumes each row's VolumeAttachments attach.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ...framework.snapshot import BoolArray, Snapshot
from ...model_storage import ANN_MIGRATED_PLUGINS, CSINode
from .translation import PORTWORX

__all__ = ["NodeColumns", "node_columns"]

LimitArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class NodeColumns:
    """`limits[d][row]`: driver d's allocatable count there (-1: none); `installed[d][row]`:
    the row's CSINode lists d; `attached[row]`: unique name -> driver of the volumes its
    VolumeAttachments attach (kube's getNodeVolumeAttachmentInfo)."""

    key: tuple[int, int, int, int]
    csi_nodes: dict[int, CSINode]
    has_csi_node: BoolArray
    portworx_migrated: BoolArray
    has_limits: BoolArray
    limits: dict[str, LimitArray]
    installed: dict[str, BoolArray]
    attached: dict[int, dict[str, str]]


def _key(snap: Snapshot) -> tuple[int, int, int, int]:
    # not storage.generation: an assume moves it and changes nothing read here
    return (
        id(snap.storage), snap.storage.objects_generation, snap.static_generation, snap.capacity
    )


def _attachments(snap: Snapshot) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {}
    storage = snap.storage
    for va in storage.attachments.values():
        row = snap.row_of(va.node_name) if va.node_name else None
        pv = storage.pvs.get(va.persistent_volume_name) if va.persistent_volume_name else None
        if row is None or not va.attacher or pv is None or pv.csi is None:
            continue
        out.setdefault(row, {})[f"{va.attacher}/{pv.csi.volume_handle}"] = va.attacher
    return out


def _build(snap: Snapshot) -> NodeColumns:
    cap = snap.capacity
    has = np.zeros(cap, dtype=np.bool_)
    px = np.zeros(cap, dtype=np.bool_)
    has_limits = np.zeros(cap, dtype=np.bool_)
    limits: dict[str, LimitArray] = {}
    installed: dict[str, BoolArray] = {}
    csi_nodes: dict[int, CSINode] = {}
    for name, csi_node in snap.storage.csi_nodes.items():
        row = snap.row_of(name)
        if row is None:
            continue
        csi_nodes[row] = csi_node
        has[row] = True
        px[row] = PORTWORX in csi_node.annotations.get(ANN_MIGRATED_PLUGINS, "").split(",")
        for d in csi_node.drivers:
            installed.setdefault(d.name, np.zeros(cap, dtype=np.bool_))[row] = True
            if d.allocatable_count is not None:
                limits.setdefault(d.name, np.full(cap, -1, dtype=np.int64))[row] = (
                    d.allocatable_count
                )
                has_limits[row] = True
    return NodeColumns(
        _key(snap), csi_nodes, has, px, has_limits, limits, installed, _attachments(snap)
    )


def node_columns(snap: Snapshot, last: NodeColumns | None) -> NodeColumns:
    """`last` when still current, else the columns built again."""
    if last is not None and last.key == _key(snap):
        return last
    return _build(snap)
