"""What the pods on nodes use of storage, kept as the pods come and go: the claims they name
(kube's snapshot usedPVCRefCounts, which VolumeRestrictions reads), their inline disks per node
(VolumeRestrictions' disk conflicts) and, per node, the pods with volumes NodeVolumeLimits
counts. A snapshot builds the index on first use (`PodVolumeIndex.for_snapshot`); pods
without volumes cost it one tuple check each.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, MutableMapping

import numpy as np
import numpy.typing as npt

from ..model import Pod
from ..model_volume import Volume
from .overlay import OverlayMap, OwnedValues
from .pod_record import PodRecord
from .snapshot import Snapshot

__all__ = [
    "CHANGE_LOG_LIMIT", "DiskKey", "ForkedPodVolumeIndex", "PodVolumeIndex", "disk_keys",
    "counted_by_limits",
]

CountArray = npt.NDArray[np.int32]
# how many volume-pod changes the index keeps for consumers to catch up from; one left
# further behind rebuilds (a full recount costs about what this many row updates cost)
CHANGE_LOG_LIMIT = 4096
# (source, identity...): one inline disk as VolumeRestrictions compares them
DiskKey = tuple[str, ...]

# inline sources NodeVolumeLimits may translate to CSI (kube's IsInlineMigratable)
_MIGRATABLE_KINDS = frozenset(
    {
        "awsElasticBlockStore", "gcePersistentDisk", "azureDisk", "azureFile", "cinder",
        "vsphereVolume", "portworxVolume",
    }
)


def disk_keys(v: Volume) -> Iterator[tuple[DiskKey, bool]]:
    """The identities of `v`'s inline disk, each with whether it is read-only (two read-only
    uses do not conflict). EBS counts as writable whatever its flag (kube: always a conflict);
    RBD yields one identity per monitor (two RBD disks conflict when their monitors overlap)."""
    d = v.disk
    if d.gce_persistent_disk is not None:
        yield ("gce", d.gce_persistent_disk.pd_name), d.gce_persistent_disk.read_only
    elif d.aws_elastic_block_store is not None:
        yield ("aws", d.aws_elastic_block_store.volume_id), False
    elif d.iscsi is not None:
        yield ("iscsi", d.iscsi.iqn), d.iscsi.read_only
    elif d.rbd is not None:
        for m in dict.fromkeys(d.rbd.monitors):
            yield ("rbd", d.rbd.pool, d.rbd.image, m), d.rbd.read_only


def counted_by_limits(v: Volume) -> bool:
    """NodeVolumeLimits' PreFilter: a claim, an ephemeral volume or a migratable inline disk."""
    return v.kind in ("persistentVolumeClaim", "ephemeral") or v.kind in _MIGRATABLE_KINDS


def _keep(
    table: MutableMapping[int, dict[object, Pod]], row: int, key: object, pod: Pod, delta: int
) -> None:
    on_row = table.setdefault(row, {})
    if delta > 0:
        on_row[key] = pod
        return
    on_row.pop(key, None)
    if not on_row:
        del table[row]


class PodVolumeIndex:
    """A PodListener. `claim_refs` counts each "namespace/claim" over the persistentVolumeClaim
    volumes of the pods on nodes (not the nominated temporaries: kube's snapshot does not hold
    them); `disks[key]` per row the inline disks with that identity, `writable[key]` those not
    read-only; `volume_pods[row]` the pods there with a volume NodeVolumeLimits counts.

    Every change to `volume_pods` (an add or remove, a nominated temporary's included) is
    logged by row, so what is derived from it per row (NodeVolumeLimits' attach counts) can
    recompute just those rows: `volume_changes_since(position)`."""

    __slots__ = (
        "_snap", "claim_refs", "disks", "writable", "volume_pods", "temporaries",
        "capacity", "derived", "_changed_rows", "_changes_start",
    )

    def __init__(self, snap: Snapshot) -> None:
        # weakly: the snapshot holds its listeners
        self._snap = weakref.ref(snap)
        # dicts here, overlays in a fork (ForkedPodVolumeIndex)
        self.claim_refs: MutableMapping[str, int] = {}
        self.disks: dict[DiskKey, CountArray] = {}
        self.writable: dict[DiskKey, CountArray] = {}
        self.volume_pods: MutableMapping[int, dict[object, Pod]] = {}
        # row -> the nominated temporaries there with a claim (kube's AddPod of VolumeRestrictions)
        self.temporaries: MutableMapping[int, dict[object, Pod]] = {}
        self.capacity = snap.capacity
        # what a plugin derives from the snapshot's storage objects and keeps with it, by
        # plugin name (NodeVolumeLimits' CSINode columns), valid as long as its own key says
        self.derived: dict[str, object] = {}
        # the rows whose volume_pods changed, oldest first; _changes_start is the position
        # (count of changes ever logged) of the first one kept
        self._changed_rows: list[int] = []
        self._changes_start = 0

    @classmethod
    def for_snapshot(cls, snap: Snapshot) -> PodVolumeIndex:
        """The snapshot's index, built (from every pod on a node) on first use."""
        return snap.listener_of(cls, lambda: cls(snap))

    @property
    def volume_position(self) -> int:
        """The position after the last logged change to `volume_pods`."""
        return self._changes_start + len(self._changed_rows)

    def volume_changes_since(self, position: int) -> list[int] | None:
        """The rows (repeats possible) whose `volume_pods` changed since `position`; None
        when those changes are no longer kept (the consumer rebuilds from `volume_pods`)."""
        if position < self._changes_start:
            return None
        return self._changed_rows[position - self._changes_start:]

    def _log_change(self, row: int) -> None:
        if len(self._changed_rows) >= CHANGE_LOG_LIMIT:
            drop = CHANGE_LOG_LIMIT // 2  # amortized: one shift per half a limit of changes
            del self._changed_rows[:drop]
            self._changes_start += drop
        self._changed_rows.append(row)

    def is_used(self, claim_key: str) -> bool:
        """kube's IsPVCUsedByPods."""
        return self.claim_refs.get(claim_key, 0) > 0

    def _count(
        self, table: MutableMapping[DiskKey, CountArray], key: DiskKey, row: int, delta: int
    ) -> None:
        arr = table.get(key)
        if arr is None:
            arr = table[key] = np.zeros(self.capacity, dtype=np.int32)
        arr[row] += delta
        if delta < 0 and not arr.any():
            del table[key]

    def _update(self, rec: PodRecord, row: int, delta: int) -> None:
        pod = rec.pod
        if not pod.volumes:
            return
        has_claim = False
        counted = False
        for v in pod.volumes:
            if v.kind == "persistentVolumeClaim":
                has_claim = True
                if rec.temporary is None:
                    key = f"{pod.namespace}/{v.claim_name}"
                    n = self.claim_refs.get(key, 0) + delta
                    if n:
                        self.claim_refs[key] = n
                    else:
                        self.claim_refs.pop(key, None)
            for dk, read_only in disk_keys(v):
                self._count(self.disks, dk, row, delta)
                if not read_only:
                    self._count(self.writable, dk, row, delta)
            counted = counted or counted_by_limits(v)
        if has_claim and rec.temporary is not None:
            _keep(self.temporaries, row, rec.key, pod, delta)
        if counted:
            _keep(self.volume_pods, row, rec.key, pod, delta)
            self._log_change(row)

    def pod_added(self, rec: PodRecord, row: int) -> None:
        self._update(rec, row, +1)

    def pod_removed(self, rec: PodRecord, row: int) -> None:
        self._update(rec, row, -1)

    def grow(self, capacity: int) -> None:
        if capacity <= self.capacity:
            return
        for table in (self.disks, self.writable):
            for k, arr in table.items():
                grown = np.zeros(capacity, dtype=np.int32)
                grown[: len(arr)] = arr
                table[k] = grown
        self.capacity = capacity

    # ---- forks (framework/fork.py) -----------------------------------------------------------
    def fork(self, snap: Snapshot) -> ForkedPodVolumeIndex:
        """This index as seen by `snap`, a fork of its snapshot: see ForkedPodVolumeIndex."""
        return ForkedPodVolumeIndex(self, snap)


class ForkedPodVolumeIndex(PodVolumeIndex):
    """PodVolumeIndex of a fork: claim counts and the per-row pod tables are overlays (a
    row's table copied on the fork's first write of it), disk arrays shared and copied on
    the first write of each. `derived` starts empty: what a plugin keeps there may be
    changed in place when it is read (an incremental cache), so it is never shared."""

    __slots__ = ("origin", "_shared")

    def __init__(self, origin: PodVolumeIndex, snap: Snapshot) -> None:
        super().__init__(snap)  # what is not taken below starts as in a new index
        self.origin = origin
        self.claim_refs = OverlayMap(origin.claim_refs)
        self.disks = dict(origin.disks)
        self.writable = dict(origin.writable)
        self.volume_pods = OwnedValues(origin.volume_pods)
        self.temporaries = OwnedValues(origin.temporaries)
        self.capacity = origin.capacity
        self._shared = {id(a) for t in (origin.disks, origin.writable) for a in t.values()}

    def _count(
        self, table: MutableMapping[DiskKey, CountArray], key: DiskKey, row: int, delta: int
    ) -> None:
        arr = table.get(key)
        if arr is not None and id(arr) in self._shared:
            table[key] = arr.copy()  # the id stays shared: the other table may hold it too
        super()._count(table, key, row, delta)

    def commit(self) -> None:
        """The origin (itself a fork's index) takes this one's tables; what it derived
        before is dropped (it may name state this fork replaced)."""
        o = self.origin
        for mine, theirs in (
            (self.claim_refs, o.claim_refs), (self.volume_pods, o.volume_pods),
            (self.temporaries, o.temporaries),
        ):
            assert isinstance(mine, OverlayMap)
            mine.merge_into(theirs)
        o.disks, o.writable, o.capacity = self.disks, self.writable, self.capacity
        o.derived = {}
