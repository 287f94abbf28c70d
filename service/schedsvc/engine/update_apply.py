"""An UpdateSnapshot's changes applied to a snapshot, and the rows whose verdicts they touch.

Called once `validate_update` has passed, so nothing here raises on input: an update is applied
whole or (rejected before this) not at all. The live snapshot and a staged replace's snapshot
take the same changes; only the live one has batch state to tell about the rows.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any

from ..framework.affinity_index import pod_has_pod_affinity
from ..framework.podinfo import PodInfo
from ..framework.snapshot import Snapshot
from .update_types import STORAGE_KINDS

if TYPE_CHECKING:
    from .update_types import SnapshotUpdate

__all__ = ["apply_update"]


def _holds_pod_terms(snap: Snapshot, node_name: str) -> bool:
    """Whether a pod on the node has inter-pod (anti-)affinity. Such a pod's terms change other
    pods' filters and scores on every node of a topology domain, not only on its own node."""
    row = snap.index.get(node_name)
    return row is not None and any(
        pod_has_pod_affinity(rec.pod) for rec in snap.pods_on_row[row].values()
    )


def _apply_storage(snap: Snapshot, upd: SnapshotUpdate) -> None:
    """Storage objects: removals, then upserts, each kind keyed as kube keys it. Any change
    moves the storage generation and the snapshot's (the batch state is told by the cluster:
    ClusterBatches.updated drops it for any storage change)."""
    st = snap.storage
    changed = False
    for upsert, remove, attr in STORAGE_KINDS:
        objects = getattr(st, attr)
        for key in getattr(upd, remove):
            changed = objects.pop(key, None) is not None or changed
        for obj in getattr(upd, upsert):
            objects[getattr(obj, "key", None) or obj.name] = obj
            changed = True
    if changed:
        st.generation += 1
        st.objects_generation += 1
        snap.generation += 1
def _restore_assumed_on(snap: Snapshot, node_name: str) -> None:
    """The placed pods a removed node takes with it were never bound: give back what their
    Reserve assumed, as for a placed pod the client removes."""
    row = snap.index.get(node_name)
    if row is None or not snap.storage.assumed:
        return
    for uid, rec in snap.pods_on_row[row].items():
        if rec.assumed:
            snap.storage.restore(uid)


def _apply_keyed(
    snap: Snapshot, table: MutableMapping[str, Any], removals: Sequence[str],
    upserts: Sequence[Any],
) -> None:
    """Objects kept by "namespace/name" (`.key`) that no filter or score reads: budgets (they
    steer preemption), PodGroups (pod group cycles), Workloads (nothing); batch state stays.
    Removals first, each change moving the generation."""
    for key in removals:
        if table.pop(key, None) is not None:
            snap.generation += 1
    for obj in upserts:
        table[obj.key] = obj
        snap.generation += 1


def _apply_budgets(snap: Snapshot, upd: SnapshotUpdate) -> None:
    _apply_keyed(snap, snap.pdbs, upd.remove_pod_disruption_budgets,
                 upd.upsert_pod_disruption_budgets)


def _apply_pod_groups(snap: Snapshot, upd: SnapshotUpdate) -> None:
    _apply_keyed(snap, snap.pod_groups, upd.remove_pod_groups, upd.upsert_pod_groups)
    _apply_keyed(snap, snap.workloads, upd.remove_workloads, upd.upsert_workloads)


def apply_update(
    snap: Snapshot, upd: SnapshotUpdate, infos: Mapping[str, PodInfo]
) -> tuple[set[int] | None, set[int]]:
    """Apply `upd` (its replace already done by the caller, who passes a fresh snapshot) and
    return the rows whose node or pods changed (None: all of them) and the rows of upserted
    nodes."""
    dirty: set[int] | None = set()
    node_rows: set[int] = set()
    if upd.replace or upd.upsert_namespaces:
        dirty = None
    for name in upd.remove_nodes:
        if dirty is not None and _holds_pod_terms(snap, name):
            dirty = None  # the pods it drops had terms reaching their whole domains
        _restore_assumed_on(snap, name)
        snap.remove_node(name)
    for ns in upd.upsert_namespaces:
        snap.upsert_namespace(ns)
    if upd.storage_changed:
        _apply_storage(snap, upd)
    _apply_budgets(snap, upd)
    _apply_pod_groups(snap, upd)
    for node in upd.upsert_nodes:
        if dirty is not None and _holds_pod_terms(snap, node.name):
            dirty = None  # its labels place those terms' domains
        snap.upsert_node(node)
        if dirty is not None:
            dirty.add(snap.index[node.name])
            node_rows.add(snap.index[node.name])
    for uid in upd.remove_pods:
        rec = snap.remove_pod(uid)
        if rec is not None and rec.assumed:
            snap.storage.restore(uid)  # placed, never bound: its claims' PVs are free again
        if rec is not None and dirty is not None:
            if pod_has_pod_affinity(rec.pod):
                dirty = None  # its terms reach every node of their topology domains
            elif rec.node_name and rec.node_name in snap.index:
                dirty.add(snap.index[rec.node_name])
            elif not rec.node_name:
                dirty = None  # a nominated pod: other pods' filters may change
    for pod in upd.upsert_pods:
        if pod.uid in snap.nominated:
            dirty = None  # a nomination goes away: other pods' filters may change
        old = snap.pods.get(pod.uid)
        if old is not None and old.assumed:
            snap.storage.forget(pod.uid)  # bound: what its Reserve assumed stays
        if pod_has_pod_affinity(pod) or (old is not None and pod_has_pod_affinity(old.pod)):
            dirty = None  # its terms reach every node of their topology domains
        if old is not None and dirty is not None:
            dirty.add(snap.index[old.node_name])  # a pod that moves frees its old node
        if pod.node_name:
            snap.add_pod(pod, pod.node_name, assumed=False, info=infos[pod.uid])
            if dirty is not None:
                dirty.add(snap.index[pod.node_name])
        else:
            snap.add_nominated(pod, infos[pod.uid])
            dirty = None
    if snap.compact():
        dirty = None  # column numbers and value ids moved: cached states name old ones
    return dirty, node_rows
