"""The storage ops of a workload file (issue 26), expanded into proto messages.

`createStorage` gives each node of a `createNodes` op its CSINode (one CSI driver with an
attach limit, `allocatable.count`), adds that driver's CSIDriver, a WaitForFirstConsumer
StorageClass it provisions, and `pvs` pre-provisioned PVs (Available, of that class, each with
node affinity to one node, spread over the nodes)::

    - {opcode: createStorage, nodes: $nodes, driver: ebs.csi.aws.com, allocatable: 25,
       storageClass: ebs-wffc, pvs: $pvs, pvSize: 20Gi}

`createStatefulSets` stamps a Pod template into K StatefulSets as the controller creates
them: pod j of set k is `<set>-<j>` (labels `app: <set>`, owned by the StatefulSet, whose
selector is the pod's default_selector), and each `volumeClaimTemplates` entry gives it a claim
`<template>-<set>-<j>`, created unbound before the pod, as the controller creates it::

    - {opcode: createStatefulSets, countParam: $pods, statefulSets: 20, collectMetrics: true,
       podTemplate: {...}, volumeClaimTemplates: [{metadata: {name: data}, spec: {...}}]}

Pods are numbered across the sets in turn (pod i is set i % K, ordinal i // K), so the sets
scale up together. Errors are ValueError naming the field; workload.py reports them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from schedsvc.v1 import schedule_pb2 as pb

from .kube import default_selector_for, pod_from_kube
from .kube_storage import pvc_from_kube

__all__ = ["STORAGE_OPCODES", "CreateStorage", "CreateStatefulSets", "parse_storage_op"]

HOSTNAME_LABEL = "kubernetes.io/hostname"


@dataclass(frozen=True, slots=True)
class CreateStorage:
    nodes: int
    name_pattern: str
    driver: str
    allocatable: int
    storage_class: str
    pvs: int
    pv_size: str

    def node_name(self, i: int) -> str:
        return self.name_pattern.replace("{{index}}", str(i))

    def objects(self) -> pb.UpdateSnapshotRequest:
        """The class, the driver and the PVs (CSINodes come in `csi_nodes`, by chunks)."""
        req = pb.UpdateSnapshotRequest(
            upsert_storage_classes=[pb.StorageClass(
                name=self.storage_class, provisioner=self.driver,
                volume_binding_mode="WaitForFirstConsumer")],
            upsert_csi_drivers=[pb.CSIDriver(name=self.driver)],
        )
        stride = max(self.nodes // max(self.pvs, 1), 1)
        for i in range(self.pvs):
            pv = req.upsert_persistent_volumes.add(
                name=f"pv-{i}", storage_class_name=self.storage_class, phase="Available",
                access_modes=["ReadWriteOnce"], capacity={"storage": self.pv_size},
                csi=pb.CSIPersistentVolumeSource(driver=self.driver, volume_handle=f"vol-{i}"))
            term = pv.node_affinity.required.node_selector_terms.add()
            term.match_expressions.add(key=HOSTNAME_LABEL, operator="In",
                                       values=[self.node_name((i * stride) % self.nodes)])
        return req

    def csi_nodes(self) -> Iterator[pb.CSINode]:
        for i in range(self.nodes):
            yield pb.CSINode(name=self.node_name(i), drivers=[pb.CSINodeDriver(
                name=self.driver, allocatable=pb.VolumeNodeResources(count=self.allocatable))])


@dataclass(frozen=True, slots=True)
class CreateStatefulSets:
    count: int
    templates: tuple[pb.Pod, ...]  # one per set, its claim volumes named by template only
    claim_templates: tuple[tuple[str, Mapping[str, Any]], ...]  # (name, spec)
    collect_metrics: bool
    namespace: str

    @property
    def sets(self) -> int:
        return len(self.templates)

    def _names(self, i: int) -> tuple[str, str]:
        """(set name, pod name) of pod i."""
        k, j = i % self.sets, i // self.sets
        return self.templates[k].labels["app"], f"{self.templates[k].labels['app']}-{j}"

    def pods(self, op_index: int) -> Iterator[pb.Pod]:
        for i in range(self.count):
            _, name = self._names(i)
            pod = pb.Pod()
            pod.CopyFrom(self.templates[i % self.sets])
            pod.name = name
            pod.uid = f"op{op_index}-{i}"
            pod.labels["statefulset.kubernetes.io/pod-name"] = name
            for v in pod.volumes:
                if v.WhichOneof("source") == "persistent_volume_claim":
                    v.persistent_volume_claim.claim_name = f"{v.name}-{name}"
            yield pod

    def claims(self) -> Iterator[pb.PersistentVolumeClaim]:
        """Every pod's claims, unbound, named as the StatefulSet controller names them."""
        for i in range(self.count):
            _, name = self._names(i)
            for tname, spec in self.claim_templates:
                obj = {"metadata": {"name": f"{tname}-{name}", "namespace": self.namespace,
                                    "uid": f"{tname}-{name}-uid"},
                       "spec": spec, "status": {"phase": "Pending"}}
                yield pvc_from_kube(obj, f"volumeClaimTemplates[{tname}]")


def _set_template(
    raw: Mapping[str, Any], k: int, claims: list[str], namespace: str, where: str
) -> pb.Pod:
    """Set k's pod: labels `app: ss-<k>`, owned by the StatefulSet, a volume per claim
    template (its claim name completed per pod)."""
    meta = dict(raw.get("metadata") or {})
    name = f"ss-{k}"
    labels = {**{str(a): str(b) for a, b in (meta.get("labels") or {}).items()}, "app": name}
    meta.update(name=name, namespace=namespace, labels=labels, ownerReferences=[
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name, "controller": True}])
    spec = dict(raw.get("spec") or {})
    spec["volumes"] = [*(spec.get("volumes") or []), *(
        {"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims)]
    obj = {**raw, "metadata": meta, "spec": spec}
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet",
             "metadata": {"name": name, "namespace": namespace},
             "spec": {"selector": {"matchLabels": {"app": name}}}}
    return pod_from_kube(obj, where, default_selector=default_selector_for(obj, [owner]))


def _int(raw: Mapping[str, Any], key: str, where: str, minimum: int) -> int:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{where}.{key}: expected an integer >= {minimum}, got {value!r}")
    return value


def _claim_templates(raw: Any, where: str) -> tuple[tuple[str, Mapping[str, Any]], ...]:
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"{where}.volumeClaimTemplates: expected a non-empty list")
    out = []
    for i, t in enumerate(raw):
        name = (t.get("metadata") or {}).get("name") if isinstance(t, Mapping) else None
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}.volumeClaimTemplates[{i}].metadata.name: required")
        out.append((name, dict(t.get("spec") or {})))
    return tuple(out)


def _statefulsets(raw: Mapping[str, Any], where: str, count: int) -> CreateStatefulSets:
    ns = str(raw.get("namespace", "") or "default")
    claims = _claim_templates(raw.get("volumeClaimTemplates"), where)
    pod = raw.get("podTemplate")
    if not isinstance(pod, Mapping):
        raise ValueError(f"{where}.podTemplate: expected a Kubernetes Pod object")
    templates = tuple(
        _set_template(pod, k, [n for n, _ in claims], ns, f"{where}.podTemplate")
        for k in range(_int(raw, "statefulSets", where, 1)))
    return CreateStatefulSets(count=count, templates=templates, claim_templates=claims,
                              collect_metrics=bool(raw.get("collectMetrics", False)),
                              namespace=ns)


def parse_storage_op(
    raw: Mapping[str, Any], where: str, count: int
) -> CreateStorage | CreateStatefulSets:
    """One op whose opcode is in STORAGE_OPCODES; `count` is its count (countParam)."""
    if raw["opcode"] == "createStatefulSets":
        return _statefulsets(raw, where, count)
    return CreateStorage(
        nodes=_int(raw, "nodes", where, 0),
        name_pattern=str(raw.get("namePattern", "node-{{index}}")),
        driver=str(raw.get("driver", "ebs.csi.aws.com")),
        allocatable=_int(raw, "allocatable", where, 0),
        storage_class=str(raw.get("storageClass", "wffc")),
        pvs=_int({"pvs": raw.get("pvs", 0)}, "pvs", where, 0),
        pv_size=str(raw.get("pvSize", "10Gi")),
    )


STORAGE_OPCODES = frozenset({"createStorage", "createStatefulSets"})
