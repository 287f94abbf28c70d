"""Workload files shaped like kube's scheduler_perf configs, expanded into proto messages.

A file is one workload::

    name: SchedulingBasic
    config: two-profiles.yaml        # optional server config, relative to this file
    workloads:                       # sizes, as scheduler_perf's `workloads:` list
      - {name: small, params: {nodes: 500, initPods: 500, pods: 1000}}
    workloadTemplate:
      - {opcode: createNodes, countParam: $nodes, zones: 3, nodeTemplate: {...}}
      - {opcode: createPods, countParam: $initPods, podTemplate: {...}}
      - {opcode: createPods, countParam: $pods, collectMetrics: true, podTemplate: {...}}

Any string value that is exactly `$name` is replaced by that parameter, so sizes change counts
without copying the ops. Pod templates are Kubernetes Pod objects (converted once by kube.py,
then copied per pod); node templates are `{labels, allocatable, taints, unschedulable, images}`.
`{{index}}` (and `{{zone}}` for nodes) in names and label values are substituted per object.

`createPods` with `deployments: K` stamps the template into K Deployments, as a cluster holds
them: Deployment k's pods carry the template's labels (`{{deployment}}` replaced by k) plus a
`pod-template-hash`, and are owned by its ReplicaSet, which a Service selects too. The pods'
`default_selector` comes from those objects through kube.py's DefaultSelector, so
PodTopologySpread's system default constraints apply to them as kube applies them to
Deployment pods. With `runLength`, the Deployments take turns in runs.

`podGroups` puts a createPods op's pods in PodGroups (workload_groups.py).
`createStorage` (CSINodes, a StorageClass, a CSIDriver, PVs) and `createStatefulSets` (pods
with a claim per volumeClaimTemplate, the claims sent first) are in workload_storage.py.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from schedsvc.v1 import schedule_pb2 as pb

from .kube import default_selector_for, node_from_kube, pod_from_kube
from .workload_groups import PodGroups, parse_pod_groups
from .workload_storage import STORAGE_OPCODES, CreateStatefulSets, CreateStorage, parse_storage_op

__all__ = [
    "WorkloadError", "Workload", "CreateNodes", "CreatePods", "Churn", "DeletePods", "Barrier",
    "CreateStorage", "CreateStatefulSets", "Op", "shipped_workloads", "load_workload",
    "resolve_workload_path",
]

ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"


class WorkloadError(ValueError):
    """A workload file we cannot run; the message names the op and field."""


@dataclass(frozen=True, slots=True)
class CreateNodes:
    count: int
    template: pb.Node
    zones: int
    name_pattern: str

    def nodes(self) -> Iterator[pb.Node]:
        """Nodes `0..count-1`, zones assigned round robin (index % zones)."""
        subst_labels = {k: v for k, v in self.template.labels.items() if "{{" in v}
        for i in range(self.count):
            node = pb.Node()
            node.CopyFrom(self.template)
            zone = f"zone-{i % self.zones}" if self.zones else ""
            node.name = _subst(self.name_pattern, i, zone)
            for k, v in subst_labels.items():
                node.labels[k] = _subst(v, i, zone)
            node.labels.setdefault(HOSTNAME_LABEL, node.name)
            if zone:
                node.labels[ZONE_LABEL] = zone
            yield node


@dataclass(frozen=True, slots=True)
class CreatePods:
    count: int
    templates: tuple[pb.Pod, ...]
    run_length: int
    collect_metrics: bool
    name_pattern: str
    groups: PodGroups | None = None  # podGroups: workload_groups.py

    def pods(self, op_index: int) -> Iterator[pb.Pod]:
        """Pods in order; template k serves runs of `run_length` pods, cycling through them."""
        for i in range(self.count):
            tpl = self.templates[(i // self.run_length) % len(self.templates)]
            pod = pb.Pod()
            pod.CopyFrom(tpl)
            pod.name = _subst(self.name_pattern, i, "").replace("{{op}}", str(op_index))
            pod.uid = f"op{op_index}-{i}"
            if self.groups is not None:
                pod.scheduling_group.pod_group_name = self.groups.name(op_index, i)
            for k, v in tpl.labels.items():
                if "{{" in v:
                    pod.labels[k] = _subst(v, i, "")
            yield pod


@dataclass(frozen=True, slots=True)
class Churn:
    """While later createPods run: every `every` scheduled pods, delete `delete` of them."""

    every: int
    delete: int


@dataclass(frozen=True, slots=True)
class DeletePods:
    """Delete `count` scheduled pods (oldest first) now, before the next op."""

    count: int


@dataclass(frozen=True, slots=True)
class Barrier:
    """Wait until every deletion started by churn has been applied by the server."""


Op = CreateNodes | CreatePods | Churn | DeletePods | Barrier | CreateStorage | CreateStatefulSets


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    size: str
    params: Mapping[str, Any]
    ops: tuple[Op, ...]
    config: str | None = None  # server config file, absolute path
    description: str = ""
    feature_gates: str = ""  # the file's featureGates, when the command line gives none
    sizes: tuple[str, ...] = field(default=())

    @property
    def nodes(self) -> int:
        return sum(op.count for op in self.ops if isinstance(op, CreateNodes))

    @property
    def pods(self) -> int:
        return sum(op.count for op in self.ops if isinstance(op, CreatePods | CreateStatefulSets))

    @property
    def measured_pods(self) -> int:
        return sum(op.count for op in self.ops
                   if isinstance(op, CreatePods | CreateStatefulSets) and op.collect_metrics)


def _subst(text: str, index: int, zone: str) -> str:
    return text.replace("{{index}}", str(index)).replace("{{zone}}", zone)


def _substitute(value: Any, params: Mapping[str, Any], where: str) -> Any:
    """Replace every string that is exactly `$name` by params[name], recursively."""
    if isinstance(value, str) and value.startswith("$"):
        key = value[1:]
        if key not in params:
            raise WorkloadError(f"{where}: unknown parameter {value!r}")
        return params[key]
    if isinstance(value, list):
        return [_substitute(v, params, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _substitute(v, params, f"{where}.{k}") for k, v in value.items()}
    return value


def _count(raw: Mapping[str, Any], where: str) -> int:
    value = raw.get("count", raw.get("countParam"))
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise WorkloadError(f"{where}.count: expected a non-negative integer, got {value!r}")
    return value


def _positive(raw: Mapping[str, Any], key: str, where: str, default: int | None = None) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise WorkloadError(f"{where}.{key}: expected a positive integer, got {value!r}")
    return value


def _node_template(raw: Any, where: str) -> pb.Node:
    raw = raw or {}
    if not isinstance(raw, Mapping):
        raise WorkloadError(f"{where}: expected a mapping")
    unknown = set(raw) - {"labels", "allocatable", "taints", "unschedulable", "images"}
    if unknown:
        raise WorkloadError(f"{where}: unknown fields {sorted(unknown)}")
    obj = {
        "metadata": {"name": "template", "labels": raw.get("labels") or {}},
        "spec": {"taints": raw.get("taints"), "unschedulable": raw.get("unschedulable")},
        "status": {"allocatable": raw.get("allocatable") or {}, "images": raw.get("images")},
    }
    try:
        return node_from_kube(obj, where)
    except ValueError as exc:
        raise WorkloadError(str(exc)) from None


def _pod_template(
    raw: Any, where: str, namespace: str, scheduler_name: str,
    objects: list[dict[str, Any]] | None = None,
) -> pb.Pod:
    """A template pod; `objects` (Services, ReplicaSets) give it its default_selector."""
    if not isinstance(raw, Mapping):
        raise WorkloadError(f"{where}: expected a Kubernetes Pod object")
    obj = dict(raw)
    meta = dict(obj.get("metadata") or {})
    meta.setdefault("name", "template")
    if namespace:
        meta["namespace"] = namespace
    obj["metadata"] = meta
    try:
        selector = default_selector_for(obj, objects) if objects else None
        pod = pod_from_kube(obj, where, default_selector=selector)
    except ValueError as exc:
        raise WorkloadError(str(exc)) from None
    if namespace:
        pod.namespace = namespace
    if scheduler_name:
        pod.scheduler_name = scheduler_name
    return pod


def _deployment(
    raw: Any, k: int, where: str, namespace: str, scheduler_name: str
) -> pb.Pod:
    """Deployment `k` of a template: labels with `{{deployment}}` replaced and a
    pod-template-hash, owned by a ReplicaSet that, with a Service, selects them."""
    if not isinstance(raw, Mapping):
        raise WorkloadError(f"{where}: expected a Kubernetes Pod object")
    meta = dict(raw.get("metadata") or {})
    labels = {
        str(key): str(v).replace("{{deployment}}", str(k))
        for key, v in (meta.get("labels") or {}).items()
    }
    if not labels:
        raise WorkloadError(f"{where}.metadata.labels: a Deployment template needs labels")
    app = labels.get("app", f"deployment-{k}")
    pod_hash = hashlib.sha256(f"{app}/{k}".encode()).hexdigest()[:10]
    rs_name = f"{app}-{pod_hash}"
    ns = namespace or "default"
    meta["labels"] = {**labels, "pod-template-hash": pod_hash}
    meta["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs_name, "controller": True}
    ]
    objects: list[dict[str, Any]] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet",
         "metadata": {"name": rs_name, "namespace": ns},
         "spec": {"selector": {"matchLabels": dict(meta["labels"])}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": app, "namespace": ns},
         "spec": {"selector": labels}},
    ]
    return _pod_template({**raw, "metadata": meta}, where, namespace, scheduler_name, objects)


def _parse_op(raw: Any, where: str) -> Op:
    if not isinstance(raw, Mapping) or "opcode" not in raw:
        raise WorkloadError(f"{where}: expected a mapping with an opcode")
    code = raw["opcode"]
    if code == "createNodes":
        return CreateNodes(
            count=_count(raw, where),
            template=_node_template(raw.get("nodeTemplate"), f"{where}.nodeTemplate"),
            zones=int(raw.get("zones", 0)),
            name_pattern=str(raw.get("namePattern", "node-{{index}}")),
        )
    if code == "createPods":
        ns = str(raw.get("namespace", ""))
        sched = str(raw.get("schedulerName", ""))
        if "podTemplates" in raw:
            raws = raw["podTemplates"]
            if not isinstance(raws, list) or not raws:
                raise WorkloadError(f"{where}.podTemplates: expected a non-empty list")
        elif "podTemplate" in raw:
            raws = [raw["podTemplate"]]
        else:
            raise WorkloadError(f"{where}: createPods needs podTemplate or podTemplates")
        if "deployments" in raw:
            if len(raws) != 1:
                raise WorkloadError(f"{where}.deployments: needs exactly one podTemplate")
            templates = tuple(
                _deployment(raws[0], k, f"{where}.podTemplate", ns, sched)
                for k in range(_positive(raw, "deployments", where))
            )
        else:
            templates = tuple(
                _pod_template(t, f"{where}.podTemplates[{i}]", ns, sched)
                for i, t in enumerate(raws)
            )
        try:
            groups = parse_pod_groups(raw.get("podGroups"), f"{where}.podGroups", ns)
        except ValueError as exc:
            raise WorkloadError(str(exc)) from None
        return CreatePods(
            count=_count(raw, where),
            templates=templates,
            run_length=_positive(raw, "runLength", where, 1),
            collect_metrics=bool(raw.get("collectMetrics", False)),
            name_pattern=str(raw.get("namePattern", "pod-{{op}}-{{index}}")),
            groups=groups,
        )
    if code in STORAGE_OPCODES:  # workload_storage.py
        count = _count(raw, where) if code == "createStatefulSets" else 0
        try:
            return parse_storage_op(raw, where, count)
        except ValueError as exc:
            raise WorkloadError(str(exc)) from None
    if code == "churn":
        return Churn(every=_positive(raw, "every", where), delete=_positive(raw, "delete", where))
    if code == "deletePods":
        return DeletePods(count=_count(raw, where))
    if code == "barrier":
        return Barrier()
    raise WorkloadError(f"{where}.opcode: unknown opcode {code!r}")


def _coerce(text: str) -> Any:
    """`--param k=v` values: ints stay ints, so counts work."""
    try:
        return int(text)
    except ValueError:
        return text


def shipped_workloads() -> dict[str, str]:
    """Name (file stem) -> path of the workload files shipped with this package."""
    root = resources.files("schedsvc_client") / "workloads"
    out: dict[str, str] = {}
    for entry in root.iterdir():
        if entry.name.endswith(".yaml") and not entry.name.startswith("config-"):
            out[entry.name[: -len(".yaml")]] = str(entry)
    return dict(sorted(out.items()))


def resolve_workload_path(name_or_path: str) -> str:
    """A shipped workload's name, or a file path."""
    if os.path.exists(name_or_path):
        return name_or_path
    shipped = shipped_workloads()
    if name_or_path in shipped:
        return shipped[name_or_path]
    raise WorkloadError(
        f"no workload file {name_or_path!r}; shipped workloads: {', '.join(shipped)}"
    )


def load_workload(
    name_or_path: str, size: str = "small", overrides: Mapping[str, str] | None = None
) -> Workload:
    """Read a workload file and expand it for one size, with `--param` overrides on top."""
    path = resolve_workload_path(name_or_path)
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    if not isinstance(doc, Mapping):
        raise WorkloadError(f"{path}: expected a mapping")
    sizes: dict[str, Mapping[str, Any]] = {}
    for i, w in enumerate(doc.get("workloads") or []):
        if not isinstance(w, Mapping) or "name" not in w:
            raise WorkloadError(f"{path}: workloads[{i}] needs a name")
        sizes[str(w["name"])] = w.get("params") or {}
    if sizes and size not in sizes:
        raise WorkloadError(f"{path}: no size {size!r}; sizes: {', '.join(sizes)}")
    params: dict[str, Any] = dict(sizes.get(size, {}))
    params.update({k: _coerce(v) for k, v in (overrides or {}).items()})
    template = doc.get("workloadTemplate")
    if not isinstance(template, list):
        raise WorkloadError(f"{path}: workloadTemplate must be a list of ops")
    ops = tuple(
        _parse_op(_substitute(raw, params, f"workloadTemplate[{i}]"), f"workloadTemplate[{i}]")
        for i, raw in enumerate(template)
    )
    config = doc.get("config")
    if config:
        config = os.path.join(os.path.dirname(os.path.abspath(path)), str(config))
    return Workload(
        name=str(doc.get("name", os.path.basename(path))),
        size=size,
        params=params,
        ops=ops,
        config=config or None,
        description=str(doc.get("description", "")),
        sizes=tuple(sizes),
        feature_gates=str(doc.get("featureGates", "")),
    )
