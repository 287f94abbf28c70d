"""What each node's pods and VolumeAttachments already attach (the first half of kube's
CSILimits.Filter: filterAttachableVolumes over nodeInfo.Pods with the node's CSINode, then the
VolumeAttachments' volumes not counted yet), kept across filters, so that a new pod's Filter
compares per-driver counts with the limits in numpy instead of recounting every visited row's
pods: with StatefulSets every node soon holds pods with volumes.

What a row's existing pods attach depends only on
- its pods with volumes (PodVolumeIndex.volume_pods[row]), whose change log names the rows
  to recount: adds and removes, nominated temporaries and preemption's victims included;
- the storage objects an update changes (objects_generation) and the node set with its
  CSINodes and VolumeAttachments: all in the NodeColumns key, whose change rebuilds the counts;
- the feature gates (1.35's Portworx annotation), kept with the counts.

Not on an assume (VolumeBinding's Reserve, StorageState.assume/restore), which is why the
counts need not move with storage.generation: an assume puts in copies of PVs that differ only
in claimRef and the bound-by-controller annotation, and copies of claims that differ only in
the selected-node annotation (volume_binding/assume.py); restore puts the originals back. Of a
claim attachable.py reads its existence, namespace, controller uid, volumeName and class (the
storage-class annotation, else spec); of a PV (translation.pv_handle) its CSI source, in-tree
source and labels; of a class its provisioner. An assume changes none of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from ...framework.feature import Features
from ...framework.pod_volumes import PodVolumeIndex
from ...framework.snapshot import BoolArray
from ...framework.storage import StorageState
from .attachable import AttachError, attachable
from .node_columns import NodeColumns

__all__ = ["AttachCounts", "attach_counts"]

CountArray = npt.NDArray[np.int64]
Rows = npt.NDArray[np.intp]
# where PodVolumeIndex.derived keeps the counts (the NodeColumns are under the plugin's name)
KEY = "NodeVolumeLimits/attached"


class AttachCounts:
    """Over the rows with a limit (has_limits: the others are never counted): `errors[row]` the
    AttachError of the first of its pods (in volume_pods order) that cannot be counted, kube's
    Error there whatever the new pod; else `attached[row]` what its pods attach (unique name ->
    driver, rows where they attach any), `counts[d][row]` how many distinct volumes of driver
    d its pods and VolumeAttachments attach, and `holders[unique]` the rows whose pods attach
    that volume: there a new pod's same volume is not counted again (a VolumeAttachment's is:
    kube dedups the new pod's volumes against its pods' only)."""

    __slots__ = (
        "owner", "cols", "features", "position", "errors", "error_rows", "attached", "counts",
        "holders", "_drivers",
    )

    def __init__(
        self, cols: NodeColumns, features: Features, index: PodVolumeIndex, storage: StorageState
    ) -> None:
        # updated in place: kept for this index only (a fork's index builds its own)
        self.owner = index
        self.cols = cols
        self.features = features
        self.position = index.volume_position
        self.errors: dict[int, AttachError] = {}
        self.error_rows = np.zeros(len(cols.has_limits), dtype=np.bool_)
        self.attached: dict[int, dict[str, str]] = {}
        self.counts: dict[str, CountArray] = {}
        self.holders: dict[str, set[int]] = {}
        self._drivers: dict[int, tuple[str, ...]] = {}  # row -> the drivers counted there
        for row in sorted(set(index.volume_pods) | set(cols.attached)):
            self._set_row(row, index, storage)

    def refresh(self, index: PodVolumeIndex, storage: StorageState) -> bool:
        """Recount the rows whose pods with volumes changed since the last call; False when
        the index no longer keeps those changes (then build the counts again)."""
        changed = index.volume_changes_since(self.position)
        if changed is None:
            return False
        for row in dict.fromkeys(changed):
            self._clear_row(row)
            self._set_row(row, index, storage)
        self.position = index.volume_position
        return True

    def _set_row(self, row: int, index: PodVolumeIndex, storage: StorageState) -> None:
        cols = self.cols
        if not cols.has_limits[row]:
            return
        attached: dict[str, str] = {}
        try:
            for p in index.volume_pods.get(row, {}).values():
                attachable(p, False, storage, cols.csi_nodes[row], self.features, attached)
        except AttachError as e:
            self.errors[row] = e
            self.error_rows[row] = True
            return
        if attached:
            self.attached[row] = attached
            for unique in attached:
                self.holders.setdefault(unique, set()).add(row)
        per_driver = Counter(attached.values())
        for unique, driver in cols.attached.get(row, {}).items():
            if unique not in attached:
                per_driver[driver] += 1
        for driver, n in per_driver.items():
            arr = self.counts.get(driver)
            if arr is None:
                arr = self.counts[driver] = np.zeros(len(cols.has_limits), dtype=np.int64)
            arr[row] = n
        self._drivers[row] = tuple(per_driver)

    def _clear_row(self, row: int) -> None:
        if self.errors.pop(row, None) is not None:
            self.error_rows[row] = False
        for unique in self.attached.pop(row, {}):
            held = self.holders[unique]
            held.discard(row)
            if not held:
                del self.holders[unique]
        for driver in self._drivers.pop(row, ()):
            self.counts[driver][row] = 0

    def decide(
        self, new_vol: Mapping[str, str], sub: Rows
    ) -> tuple[BoolArray, list[tuple[int, AttachError]]]:
        """For the rows `sub` (each with a limit) and the new pod's volumes there: which rows
        a driver's count would take past its limit, and the positions in `sub` whose existing
        pods cannot be counted (with their error). Rows holding none of the new volumes are
        decided in numpy; the few that hold one, one by one. The limit columns are the
        CSINodes' counts exactly (drivers unique by name, counts >= 0: convert_csi.py)."""
        over = np.zeros(len(sub), dtype=np.bool_)
        special = self.error_rows[sub]
        held = {r for u in new_vol for r in self.holders.get(u, ())}
        if held:
            special = special | np.isin(sub, np.fromiter(held, dtype=np.intp, count=len(held)))
        plain = ~special
        for driver, n in Counter(new_vol.values()).items():
            lim = self.cols.limits.get(driver)
            if lim is None:
                continue
            lims = lim[sub]
            have = self.counts.get(driver)
            total = n if have is None else have[sub] + n
            over |= plain & (lims >= 0) & (total > lims)
        errors: list[tuple[int, AttachError]] = []
        for p in np.flatnonzero(special).tolist():
            row = int(sub[p])
            err = self.errors.get(row)
            if err is not None:
                errors.append((p, err))
            else:
                over[p] = self._exceeds(row, new_vol)
        return over, errors

    def _exceeds(self, row: int, new_vol: Mapping[str, str]) -> bool:
        """One row whose pods attach some of the new volumes: the others count on top."""
        mine = self.attached[row]
        for driver, n in Counter(d for u, d in new_vol.items() if u not in mine).items():
            lim = self.cols.limits.get(driver)
            if lim is None or lim[row] < 0:
                continue
            have = self.counts.get(driver)
            if (0 if have is None else int(have[row])) + n > lim[row]:
                return True
        return False


def attach_counts(
    index: PodVolumeIndex, cols: NodeColumns, features: Features, storage: StorageState
) -> AttachCounts:
    """The index's counts brought up to date, or built again when the columns (the storage
    objects, the nodes) or the features changed or the index no longer has the changes."""
    last = index.derived.get(KEY)
    if (
        isinstance(last, AttachCounts) and last.owner is index and last.cols is cols
        and last.features == features and last.refresh(index, storage)
    ):
        return last
    fresh = AttachCounts(cols, features, index, storage)
    index.derived[KEY] = fresh
    return fresh
