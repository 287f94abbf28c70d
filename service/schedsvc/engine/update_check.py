"""Checks an UpdateSnapshot must pass before it changes anything: a rejected update changes
nothing, not even a node upserted earlier in the same request.

Besides references (pods on known nodes, no duplicates), usage is checked in exact integers:
each node's summed requests of the pods bound to it, and of the pods nominated to it, must stay
within MAX_QUANTITY, so the int64 columns of the snapshot can never wrap (see model.MAX_QUANTITY).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..errors import InvalidArgument
from ..framework.podinfo import PodInfo, pod_info
from ..framework.snapshot import Snapshot
from ..model import MAX_QUANTITY
from .update_types import STORAGE_KINDS

if TYPE_CHECKING:
    from .update_types import SnapshotUpdate

__all__ = ["validate_update"]

_NONZERO = ("nonzero cpu", "nonzero memory")  # the scoring sums (100m/200Mi defaults)


def validate_update(snap: Snapshot, upd: SnapshotUpdate) -> dict[str, PodInfo]:
    """Raise InvalidArgument for the first problem; otherwise the PodInfo of every upserted
    pod, by uid, for the update to reuse."""
    removed = set(upd.remove_nodes)
    upserted: set[str] = set()
    for i, node in enumerate(upd.upsert_nodes):
        if node.name in upserted:
            raise InvalidArgument(f"upsert_nodes[{i}].name", f"duplicate node {node.name!r}")
        upserted.add(node.name)
    for i, name in enumerate(upd.remove_nodes):
        if not name:
            raise InvalidArgument(f"remove_nodes[{i}]", "empty node name")

    def exists(name: str) -> bool:
        if name in upserted:
            return True
        return not upd.replace and name in snap.index and name not in removed

    _check_storage(upd)
    _check_pod_groups(upd)
    keys: set[str] = set()
    for i, pdb in enumerate(upd.upsert_pod_disruption_budgets):
        if pdb.key in keys:
            raise InvalidArgument(
                f"upsert_pod_disruption_budgets[{i}].name", f"duplicate budget {pdb.key!r}"
            )
        keys.add(pdb.key)
    uids: set[str] = set()
    infos: dict[str, PodInfo] = {}
    for i, pod in enumerate(upd.upsert_pods):
        if pod.uid in uids:
            raise InvalidArgument(f"upsert_pods[{i}].uid", f"duplicate uid {pod.uid!r}")
        uids.add(pod.uid)
        _check_group_unchanged(snap, upd, i)
        if pod.node_name:
            if not exists(pod.node_name):
                raise InvalidArgument(
                    f"upsert_pods[{i}].node_name", f"unknown node {pod.node_name!r}"
                )
        elif pod.nominated_node_name:
            if not exists(pod.nominated_node_name):
                raise InvalidArgument(
                    f"upsert_pods[{i}].nominated_node_name",
                    f"unknown node {pod.nominated_node_name!r}",
                )
        else:
            raise InvalidArgument(
                f"upsert_pods[{i}].node_name",
                "a snapshot pod must be bound (node_name) or nominated (nominated_node_name)",
            )
        infos[pod.uid] = pod_info(pod)
    _check_usage(snap, upd, infos, removed)
    return infos


def _check_storage(upd: SnapshotUpdate) -> None:
    """No storage object is upserted twice in one update (kube keys: name, or namespace/name
    for claims and capacities). References between objects are not checked: a claim naming
    a class the cluster lacks is kube's verdict when a pod needs it, not a bad update."""
    for upsert, _, _ in STORAGE_KINDS:
        seen: set[str] = set()
        for i, obj in enumerate(getattr(upd, upsert)):
            key = getattr(obj, "key", None) or obj.name
            if key in seen:
                raise InvalidArgument(f"{upsert}[{i}].name", f"duplicate {key!r}")
            seen.add(key)


def _check_pod_groups(upd: SnapshotUpdate) -> None:
    """No PodGroup or Workload upserted twice in one update ("namespace/name")."""
    for fname in ("upsert_pod_groups", "upsert_workloads"):
        seen: set[str] = set()
        for i, obj in enumerate(getattr(upd, fname)):
            if obj.key in seen:
                raise InvalidArgument(f"{fname}[{i}].name", f"duplicate {obj.key!r}")
            seen.add(obj.key)


def _check_group_unchanged(snap: Snapshot, upd: SnapshotUpdate, i: int) -> None:
    """spec.schedulingGroup is immutable in kube (a pod update changing it is refused), so a
    known uid keeps its pod group; a replace starts over and checks nothing."""
    if upd.replace:
        return
    pod = upd.upsert_pods[i]
    rec = snap.pods.get(pod.uid) or snap.nominated.get(pod.uid)
    if rec is None:
        return
    old = rec.pod.pod_group
    if old != pod.pod_group and pod.uid not in upd.remove_pods:
        raise InvalidArgument(
            f"upsert_pods[{i}].scheduling_group.pod_group_name",
            f"field is immutable: pod {pod.uid!r} is in pod group {old!r}, not "
            f"{pod.pod_group!r} (spec.schedulingGroup cannot change; remove the pod first)",
        )


def _sums(info: PodInfo) -> dict[str, int]:
    out = dict(info.requests)
    out[_NONZERO[0]] = info.nonzero_cpu
    out[_NONZERO[1]] = info.nonzero_memory
    return out


def _add(acc: dict[str, int], sums: Mapping[str, int], sign: int) -> None:
    for k, v in sums.items():
        acc[k] = acc.get(k, 0) + sign * v


def _check_usage(
    snap: Snapshot, upd: SnapshotUpdate, infos: Mapping[str, PodInfo], removed: set[str]
) -> None:
    """Every node an upserted pod lands on (bound or nominated) keeps its summed usage within
    MAX_QUANTITY, counting what it holds now less what this update takes off it."""
    bound: dict[str, dict[str, int]] = {}
    nominated: dict[str, dict[str, int]] = {}
    for pod in upd.upsert_pods:
        target = bound if pod.node_name else nominated
        _add(target.setdefault(pod.node_name or pod.nominated_node_name, {}),
             _sums(infos[pod.uid]), +1)
    if not bound and not nominated:
        return
    gone = set(upd.remove_pods) | set(infos)  # removed, or replaced by their new version
    if not upd.replace:
        for name, acc in bound.items():
            row = snap.index.get(name)
            if row is None or name in removed:
                continue  # a new node, or one this update empties first
            used = snap.requested[row].tolist()
            for col, res in enumerate(snap.resource_names):
                if used[col]:
                    acc[res] = acc.get(res, 0) + int(used[col])
            nz = snap.nonzero_requested[row].tolist()
            acc[_NONZERO[0]] = acc.get(_NONZERO[0], 0) + int(nz[0])
            acc[_NONZERO[1]] = acc.get(_NONZERO[1], 0) + int(nz[1])
            for uid, rec in snap.pods_on_row[row].items():
                if uid in gone:
                    _add(acc, _sums(rec.info), -1)
        for uid, rec in snap.nominated.items():
            held = nominated.get(rec.nominated_node_name)
            if held is not None and uid not in gone:
                _add(held, _sums(rec.info), +1)
    for kind, per_node in (("bound to", bound), ("nominated to", nominated)):
        for name, acc in per_node.items():
            for res, total in acc.items():
                if total > MAX_QUANTITY:
                    i = next(
                        i for i, p in enumerate(upd.upsert_pods)
                        if (p.node_name or p.nominated_node_name) == name
                        and bool(p.node_name) == (kind == "bound to")
                        and res in _sums(infos[p.uid])
                    )
                    raise InvalidArgument(
                        f"upsert_pods[{i}]",
                        f"the pods {kind} node {name!r} would request {total} {res} in all, "
                        f"above the limit {MAX_QUANTITY}",
                    )

