"""Kubernetes objects (as `kubectl get -o json|yaml` prints them) -> schedsvc.v1 messages.

Our proto keeps Kubernetes' field names in snake_case, so the affinity, tolerations,
topologySpreadConstraints, taints and images parts parse with protobuf's JSON mapping unchanged;
only metadata, containers and quantities are flattened here. Errors name the JSON path of the
bad field (`items[3].spec.containers[0].resources.requests.cpu`), so a user can find it in a
large dump. Quantities are checked here too, so the error points into the user's file rather than
at a field of the gRPC request.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from schedsvc.v1 import schedule_pb2 as pb

from .kube_context import PriorityClasses, default_selector_for
from .kube_files import Source, flat_objects
from .kube_json import KubeObjectError, as_object, as_str, join, object_parts, quantities, str_map
from .kube_pod import TERMINAL_PHASES, is_terminal, pod_from_kube
from .kube_pod_groups import POD_GROUP_KINDS, pod_group_from_kube, workload_from_kube
from .kube_preemption import pdb_from_kube
from .kube_proto import parse_into
from .kube_storage import STORAGE_KINDS, storage_object_from_kube
from .unmodelled import FieldPolicy, LoadReport, UnmodelledFieldWarning

__all__ = [
    "KubeObjectError",
    "node_from_kube",
    "pod_from_kube",
    "pod_group_from_kube",
    "workload_from_kube",
    "namespace_from_kube",
    "default_selector_for",
    "load_objects",
    "KubeCluster",
    "load_cluster",
    "Source",
    "TERMINAL_PHASES",
    "is_terminal",
]

# --- objects -----------------------------------------------------------------------------------


def node_from_kube(obj: Mapping[str, Any], path: str = "") -> pb.Node:
    """A v1.Node. Allocatable falls back to capacity, as the API server defaults it."""
    obj = as_object(obj, path)
    meta, spec, status = object_parts(obj, path)
    name = as_str(meta.get("name"), join(path, "metadata.name"))
    if not name:
        raise KubeObjectError(join(path, "metadata.name"), "a node needs a name")
    alloc_key = "allocatable" if status.get("allocatable") is not None else "capacity"
    unschedulable = spec.get("unschedulable")
    if unschedulable is not None and not isinstance(unschedulable, bool):
        raise KubeObjectError(join(path, "spec.unschedulable"), "expected a boolean")
    node = pb.Node(
        name=name,
        labels=str_map(meta.get("labels"), join(path, "metadata.labels")),
        allocatable=quantities(status.get(alloc_key), join(path, f"status.{alloc_key}")),
        unschedulable=bool(unschedulable),
    )
    if spec.get("taints") is not None:
        parse_into(node, {"taints": spec["taints"]}, join(path, "spec"))
    if status.get("images") is not None:
        parse_into(node, {"images": status["images"]}, join(path, "status"))
    return node


def namespace_from_kube(obj: Mapping[str, Any], path: str = "") -> pb.Namespace:
    """A v1.Namespace: its labels feed pod affinity's namespaceSelector."""
    obj = as_object(obj, path)
    meta = as_object(obj.get("metadata"), join(path, "metadata"))
    name = as_str(meta.get("name"), join(path, "metadata.name"))
    if not name:
        raise KubeObjectError(join(path, "metadata.name"), "a namespace needs a name")
    return pb.Namespace(
        name=name, labels=str_map(meta.get("labels"), join(path, "metadata.labels"))
    )


# --- files -------------------------------------------------------------------------------------

_SELECTING_KINDS = {"Service", "ReplicaSet", "StatefulSet", "ReplicationController"}
# kinds load_cluster reads beside nodes, pods and namespaces
_READ_ELSEWHERE = {"PriorityClass", "PodDisruptionBudget", *STORAGE_KINDS, *POD_GROUP_KINDS}


def load_objects(
    source: Source | Sequence[Source],
    *,
    ignore_unmodelled: bool = False,
    report: LoadReport | None = None,
    reschedule_all: bool = False,
) -> tuple[list[pb.Node], list[pb.Pod], list[pb.Namespace]]:
    """Nodes, pods and namespaces from a file name, a path or the JSON/YAML text itself, or a
    list of those read as one input.

    Accepts single objects, `kind: List` / NodeList / PodList, and multi-document YAML. Each
    pod's default_selector is computed from the Services, ReplicaSets, StatefulSets and
    ReplicationControllers anywhere in the input, and a pod without spec.priority takes its
    PriorityClass's value from it. With several sources, an error's path starts with the
    source's file name (`pods.json:items[3]...`) or its index (`[1].items[3]...`). Succeeded
    and Failed pods are left out, as kube-scheduler leaves them out. A pod to schedule (no
    spec.nodeName) that uses a field kube acts on and we do not model is refused
    (KubeObjectError naming the field), unless `ignore_unmodelled`: then the field is dropped
    and counted in `report` (a warning if there is none). `reschedule_all` reads every pod as
    a new one to schedule: spec.nodeName and status dropped.
    """
    return _convert(flat_objects(source), ignore_unmodelled, report, reschedule_all)


def _convert(
    flat: list[tuple[str, Any, str]], ignore_unmodelled: bool, report: LoadReport | None,
    reschedule_all: bool,
) -> tuple[list[pb.Node], list[pb.Pod], list[pb.Namespace]]:
    selecting = [obj for kind, obj, _ in flat if kind in _SELECTING_KINDS]
    classes = PriorityClasses.from_objects(obj for kind, obj, _ in flat if kind == "PriorityClass")
    own = report if report is not None else LoadReport()
    nodes: list[pb.Node] = []
    pods: list[pb.Pod] = []
    namespaces: list[pb.Namespace] = []
    for kind, obj, path in flat:
        if kind == "Node":
            nodes.append(node_from_kube(obj, path))
        elif kind == "Pod":
            if is_terminal(obj):
                own.terminal_pods += 1
                continue
            if reschedule_all:
                obj = _as_new_pod(obj, path)
            selector = default_selector_for(obj, selecting) if selecting else None
            pods.append(pod_from_kube(obj, path, selector, ignore_unmodelled=ignore_unmodelled,
                                      report=own, priority_classes=classes))
        elif kind == "Namespace":
            namespaces.append(namespace_from_kube(obj, path))
        elif kind not in _SELECTING_KINDS and kind not in _READ_ELSEWHERE:
            own.unused_kinds[kind] += 1
    if report is None and own.ignored:
        warnings.warn(own.render(), UnmodelledFieldWarning, stacklevel=3)
    return nodes, pods, namespaces


def _as_new_pod(obj: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The pod as it was created: no node, no status (statuses describe the old placement)."""
    spec = dict(as_object(obj.get("spec"), join(path, "spec")))
    spec.pop("nodeName", None)
    return {**obj, "spec": spec, "status": {}}


@dataclass(frozen=True)
class KubeCluster:
    """What `load_cluster` read: the snapshot parts of a `kubectl get -o json` dump. Each
    storage list is named as UpdateSnapshotRequest's upsert list without `upsert_`."""

    nodes: list[pb.Node] = field(default_factory=list)
    pods: list[pb.Pod] = field(default_factory=list)
    namespaces: list[pb.Namespace] = field(default_factory=list)
    pod_disruption_budgets: list[pb.PodDisruptionBudget] = field(default_factory=list)
    persistent_volumes: list[pb.PersistentVolume] = field(default_factory=list)
    persistent_volume_claims: list[pb.PersistentVolumeClaim] = field(default_factory=list)
    storage_classes: list[pb.StorageClass] = field(default_factory=list)
    csi_nodes: list[pb.CSINode] = field(default_factory=list)
    csi_drivers: list[pb.CSIDriver] = field(default_factory=list)
    csi_storage_capacities: list[pb.CSIStorageCapacity] = field(default_factory=list)
    volume_attachments: list[pb.VolumeAttachment] = field(default_factory=list)
    # scheduling.k8s.io/v1beta1 (kube_pod_groups.py): what gang scheduling reads
    pod_groups: list[pb.PodGroup] = field(default_factory=list)
    workloads: list[pb.Workload] = field(default_factory=list)

    def storage_lists(self) -> dict[str, list[Any]]:
        """The storage objects as UpdateSnapshotRequest's keyword arguments (upsert_*)."""
        return {upsert: getattr(self, upsert.removeprefix("upsert_"))
                for upsert, _ in STORAGE_KINDS.values()}


def load_cluster(
    source: Source | Sequence[Source],
    *,
    ignore_unmodelled: bool = False,
    report: LoadReport | None = None,
    reschedule_all: bool = False,
) -> KubeCluster:
    """load_objects plus policy/v1 PodDisruptionBudgets (what DefaultPreemption reads) and the
    storage objects the volume plugins read (PersistentVolumes, claims, StorageClasses,
    CSINodes, CSIDrivers, CSIStorageCapacities, VolumeAttachments), and the
    scheduling.k8s.io/v1beta1 PodGroups and Workloads of gang scheduling."""
    flat = flat_objects(source)
    nodes, pods, namespaces = _convert(flat, ignore_unmodelled, report, reschedule_all)
    pdbs = [pdb_from_kube(obj, path) for kind, obj, path in flat if kind == "PodDisruptionBudget"]
    out = KubeCluster(nodes, pods, namespaces, pdbs)
    policy = FieldPolicy(ignore_unmodelled, report)
    for kind, obj, path in flat:
        if kind in STORAGE_KINDS:
            upsert = STORAGE_KINDS[kind][0]
            getattr(out, upsert.removeprefix("upsert_")).append(
                storage_object_from_kube(kind, obj, path))
        elif kind == "PodGroup":
            out.pod_groups.append(pod_group_from_kube(obj, path, policy=policy))
        elif kind == "Workload":
            out.workloads.append(workload_from_kube(obj, path, policy=policy))
    return out
