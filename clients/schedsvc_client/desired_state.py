"""The desired snapshot of one cluster, as the client last pushed or learned it: what a replay
after a server restart sends back, in chunks the server accepts."""

from __future__ import annotations

from typing import Any

from schedsvc.v1 import schedule_pb2 as pb

__all__ = ["OBJECT_FIELDS", "STORAGE_FIELDS", "DesiredState", "replay_chunks"]

# UpdateSnapshotRequest's storage lists: (upsert, remove), and whether the key is namespaced
_STORAGE = (
    ("upsert_persistent_volumes", "remove_persistent_volumes", False),
    ("upsert_persistent_volume_claims", "remove_persistent_volume_claims", True),
    ("upsert_storage_classes", "remove_storage_classes", False),
    ("upsert_csi_nodes", "remove_csi_nodes", False),
    ("upsert_csi_drivers", "remove_csi_drivers", False),
    ("upsert_csi_storage_capacities", "remove_csi_storage_capacities", True),
    ("upsert_volume_attachments", "remove_volume_attachments", False),
)
STORAGE_FIELDS = tuple(f for upsert, remove, _ in _STORAGE for f in (upsert, remove))
# scheduling.k8s.io/v1beta1 (gang scheduling): kept as the storage lists are
_POD_GROUPS = (
    ("upsert_pod_groups", "remove_pod_groups", True),
    ("upsert_workloads", "remove_workloads", True),
)
_KEYED = (*_STORAGE, *_POD_GROUPS)
# the lists SchedClient.update_snapshot takes by keyword beyond its own parameters
OBJECT_FIELDS = tuple(f for upsert, remove, _ in _KEYED for f in (upsert, remove))


def _key(obj: Any, namespaced: bool) -> str:
    return f"{obj.namespace or 'default'}/{obj.name}" if namespaced else str(obj.name)


class DesiredState:
    """The desired snapshot of one cluster, as this client last pushed or learned it."""

    def __init__(self) -> None:
        self.nodes: dict[str, pb.Node] = {}
        self.pods: dict[str, pb.Pod] = {}  # bound (node_name) or nominated pods, by uid
        self.namespaces: dict[str, pb.Namespace] = {}
        self.pdbs: dict[str, pb.PodDisruptionBudget] = {}  # "namespace/name"
        # storage objects, PodGroups and Workloads by upsert list, then by key (name, or
        # "namespace/name")
        self.storage: dict[str, dict[str, Any]] = {upsert: {} for upsert, _, _ in _KEYED}

    def copy(self) -> DesiredState:
        out = DesiredState()
        out.nodes, out.pods, out.namespaces = dict(self.nodes), dict(self.pods), {
            **self.namespaces
        }
        out.pdbs = dict(self.pdbs)
        out.storage = {k: dict(v) for k, v in self.storage.items()}
        return out

    def apply(self, req: pb.UpdateSnapshotRequest) -> None:
        """Mirror the server's update order: replace, remove nodes (and their pods), namespaces,
        nodes, remove pods, upsert pods."""
        if req.replace:
            self.nodes.clear()
            self.pods.clear()
            self.namespaces.clear()
            self.pdbs.clear()
            for objects in self.storage.values():
                objects.clear()
        gone = set(req.remove_nodes)
        for name in gone:
            self.nodes.pop(name, None)
        if gone:
            self.pods = {u: p for u, p in self.pods.items() if p.node_name not in gone}
        for ns in req.upsert_namespaces:
            self.namespaces[ns.name] = ns
        for node in req.upsert_nodes:
            self.nodes[node.name] = node
        for uid in req.remove_pods:
            self.pods.pop(uid, None)
        for pod in req.upsert_pods:
            self.pods[pod.uid] = pod
        for key in req.remove_pod_disruption_budgets:
            self.pdbs.pop(key, None)
        for b in req.upsert_pod_disruption_budgets:
            self.pdbs[f"{b.namespace or 'default'}/{b.name}"] = b
        for upsert, remove, namespaced in _KEYED:
            objects = self.storage[upsert]
            for key in getattr(req, remove):
                objects.pop(key, None)
            for obj in getattr(req, upsert):
                objects[_key(obj, namespaced)] = obj

    def bind(self, pod: pb.Pod, node_name: str) -> None:
        """Remember `pod` as placed on `node_name` (no longer nominated anywhere)."""
        bound = pb.Pod()
        bound.CopyFrom(pod)
        bound.node_name = node_name
        bound.ClearField("nominated_node_name")
        self.pods[pod.uid] = bound


def replay_chunks(state: DesiredState, chunk: int) -> list[pb.UpdateSnapshotRequest]:
    """`state` as requests of at most `chunk` objects each, in the order the server needs them
    (a pod's node before the pod); always at least one request."""
    items: list[tuple[str, Any]] = [
        *(("upsert_namespaces", ns) for ns in state.namespaces.values()),
        *(("upsert_pod_disruption_budgets", b) for b in state.pdbs.values()),
        *((upsert, o) for upsert, objects in state.storage.items() for o in objects.values()),
        *(("upsert_nodes", n) for n in state.nodes.values()),
        *(("upsert_pods", p) for p in state.pods.values()),
    ]
    out = []
    for i in range(0, max(1, len(items)), max(1, chunk)):
        req = pb.UpdateSnapshotRequest()
        for fname, obj in items[i: i + chunk]:
            getattr(req, fname).append(obj)
        out.append(req)
    return out
