"""NodeVolumeLimits: a node's CSI drivers attach at most `allocatable.count` volumes each
(kube's nodevolumelimits/csi.go, CSILimits).

PreFilter skips a pod without a claim, an ephemeral volume or a migratable in-tree disk. Filter
counts, per node, the new pod's volumes (which depend on the node only through its CSINode:
in-tree disks migrate only where there is one), then the volumes the node's pods and its
VolumeAttachments already attach: those are kept per row across filters (attach_counts.py,
recounted for the rows whose pods with volumes changed), so rows are decided in numpy from
the CSINode columns and the counts, except the few whose pods attach one of the new pod's
volumes or cannot be counted. No PreFilterExtensions: preemption re-runs Filter without the
victims, as kube's Filter recounts the cloned node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import ConfigError
from ...framework import SKIP, Code, FilterResult, PluginTraits, PreFilterResult, Rows, Skip
from ...framework.feature import DEFAULT_FEATURES, Features
from ...framework.pod_volumes import PodVolumeIndex, counted_by_limits
from ...framework.podinfo import PodInfo
from ...framework.snapshot import BoolArray, Snapshot
from ..volume_common import has_storage_volumes
from .attach_counts import attach_counts
from .attachable import AttachError, attachable
from .node_columns import NodeColumns, node_columns

__all__ = ["NAME", "ERR_REASON_MAX_VOLUME_COUNT", "driver_not_installed", "NodeVolumeLimits", "new"]

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"


def driver_not_installed(driver: str) -> str:
    return f"{driver} CSI driver is not installed on the node"


class _Verdicts:
    """The block's rejections: reason -> (mask, code)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.masks: dict[str, BoolArray] = {}
        self.codes: dict[str, Code] = {}

    def reject(self, reason: str, where: Any, code: Code = Code.UNSCHEDULABLE) -> None:
        """Reject the block positions `where` (an index array or one position)."""
        mask = self.masks.get(reason)
        if mask is None:
            mask = self.masks[reason] = np.zeros(self.n, dtype=np.bool_)
            self.codes[reason] = code
        mask[where] = True

    def result(self) -> FilterResult:
        bad = np.zeros(self.n, dtype=np.bool_)
        for m in self.masks.values():
            bad |= m
        unresolvable = np.zeros(self.n, dtype=np.bool_)
        for reason, m in self.masks.items():
            if self.codes[reason] is Code.UNRESOLVABLE:
                unresolvable |= m
        return FilterResult(
            feasible=~bad, reasons=list(self.masks.items()), code=Code.UNSCHEDULABLE,
            reason_codes=dict(self.codes), unresolvable=unresolvable,
        )


def _code(e: AttachError) -> Code:
    """kube's status code for a volume that cannot be counted."""
    return Code.UNRESOLVABLE if e.unresolvable else Code.ERROR


class NodeVolumeLimits:
    name = NAME
    traits = PluginTraits(
        pre_filter_assume_stable=True,  # a pod it can sign has no volume: always Skip
    )

    def __init__(self, features: Features) -> None:
        self.features = features

    def pre_filter(self, pod: PodInfo, snap: Snapshot) -> PreFilterResult | Skip:
        vols = pod.pod.volumes
        if not vols or not any(counted_by_limits(v) for v in vols):
            return SKIP
        return PreFilterResult()

    def _columns(self, snap: Snapshot) -> tuple[PodVolumeIndex, NodeColumns]:
        index = PodVolumeIndex.for_snapshot(snap)
        last = index.derived.get(NAME)
        cols = node_columns(snap, last if isinstance(last, NodeColumns) else None)
        index.derived[NAME] = cols
        return index, cols

    def filter(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult:
        out = _Verdicts(len(rows))
        if not pod.pod.volumes:
            return out.result()
        index, cols = self._columns(snap)
        has_csi = cols.has_csi_node[rows]
        # the new pod's volumes per CSINode context: none, or one (1.35: Portworx migrated?)
        px = cols.portworx_migrated[rows] & self.features.portworx_needs_migrated_annotation
        contexts = (
            (~has_csi, None),
            (has_csi & ~px, False),
            (has_csi & px, True),
        )
        for where, ctx in contexts:
            if where.any():
                self._filter_context(pod, snap, rows, where, ctx, index, cols, out)
        return out.result()

    def _filter_context(
        self, pod: PodInfo, snap: Snapshot, rows: Rows, where: BoolArray, ctx: bool | None,
        index: PodVolumeIndex, cols: NodeColumns, out: _Verdicts,
    ) -> None:
        """The rows `where` of the block, whose CSINodes give the new pod the same volumes."""
        pos = np.flatnonzero(where)
        csi_node = None if ctx is None else cols.csi_nodes[int(rows[pos[0]])]
        new_vol: dict[str, str] = {}
        try:
            attachable(pod.pod, True, snap.storage, csi_node, self.features, new_vol)
        except AttachError as e:  # a missing claim is unresolvable, anything else an Error
            out.reject(str(e), pos, _code(e))
            return
        if not new_vol:
            return
        live = pos
        if self.features.volume_limit_scaling:
            live = self._drivers_installed(new_vol, snap, rows, live, cols, out)
        if ctx is None:  # no CSINode: no limits
            return
        live = live[cols.has_limits[rows[live]]]
        over, errors = attach_counts(index, cols, self.features, snap.storage).decide(
            new_vol, rows[live]
        )
        if over.any():
            out.reject(ERR_REASON_MAX_VOLUME_COUNT, live[over])
        for p, err in errors:  # kube's Error (an existing pod's volume)
            out.reject(str(err), int(live[p]), _code(err))

    def _drivers_installed(
        self, new_vol: dict[str, str], snap: Snapshot, rows: Rows, pos: Rows, cols: NodeColumns,
        out: _Verdicts,
    ) -> Rows:
        """VolumeLimitScaling: a driver whose CSIDriver prevents scheduling where it is missing
        must be on the node's CSINode. Returns the positions left (drivers in sorted order:
        kube's map order is random when several are missing)."""
        for driver in sorted(set(new_vol.values())):
            d = snap.storage.csi_drivers.get(driver)
            if d is None or not d.prevent_pod_scheduling_if_missing:
                continue
            inst = cols.installed.get(driver)
            ok = inst[rows[pos]] if inst is not None else np.zeros(len(pos), dtype=np.bool_)
            out.reject(driver_not_installed(driver), pos[~ok])
            pos = pos[ok]
        return pos

    def sign(self, pod: PodInfo) -> bytes | None:
        return None if has_storage_volumes(pod.pod) else b""


def new(args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES) -> NodeVolumeLimits:
    if args:
        raise ConfigError(f"pluginConfig[{NAME}].args", "takes no arguments")
    return NodeVolumeLimits(features)
