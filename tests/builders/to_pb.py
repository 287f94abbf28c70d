"""Domain types -> schedsvc.v1 messages: the way back, for clients, tests and replays.

The inverse of convert.py on valid input: `pod_from_pb(pod_to_pb(p)) == p`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from schedsvc import model
from schedsvc import model_volume as mv
from schedsvc.v1 import schedule_pb2 as pb

__all__ = [
    "node_to_pb",
    "pod_to_pb",
    "namespace_to_pb",
    "label_selector_to_pb",
    "quantity_text",
    "disk_to_pb",
    "volume_to_pb",
]


def quantity_text(resource: str, value: int) -> str:
    """Canonical units back to a quantity string that parses to the same value."""
    return f"{value}m" if resource == model.CPU else str(value)


def _quantities(m: Mapping[str, int]) -> dict[str, str]:
    return {k: quantity_text(k, v) for k, v in m.items()}


def label_selector_to_pb(s: model.LabelSelector) -> pb.LabelSelector:
    return pb.LabelSelector(
        match_labels=dict(s.match_labels),
        match_expressions=[
            pb.LabelSelectorRequirement(key=r.key, operator=r.operator, values=r.values)
            for r in s.match_expressions
        ],
    )


def _node_selector_term_to_pb(t: model.NodeSelectorTerm) -> pb.NodeSelectorTerm:
    def reqs(rs: Iterable[model.NodeSelectorRequirement]) -> list[pb.NodeSelectorRequirement]:
        return [
            pb.NodeSelectorRequirement(key=r.key, operator=r.operator, values=r.values) for r in rs
        ]

    return pb.NodeSelectorTerm(
        match_expressions=reqs(t.match_expressions), match_fields=reqs(t.match_fields)
    )


def _pod_affinity_term_to_pb(t: model.PodAffinityTerm) -> pb.PodAffinityTerm:
    out = pb.PodAffinityTerm(
        namespaces=t.namespaces,
        topology_key=t.topology_key,
        match_label_keys=t.match_label_keys,
        mismatch_label_keys=t.mismatch_label_keys,
    )
    if t.label_selector is not None:
        out.label_selector.CopyFrom(label_selector_to_pb(t.label_selector))
    if t.namespace_selector is not None:
        out.namespace_selector.CopyFrom(label_selector_to_pb(t.namespace_selector))
    return out


def _pod_affinity_to_pb(a: model.PodAffinity, out: pb.PodAffinity) -> None:
    out.SetInParent()
    out.required_during_scheduling_ignored_during_execution.extend(
        _pod_affinity_term_to_pb(t) for t in a.required
    )
    out.preferred_during_scheduling_ignored_during_execution.extend(
        pb.WeightedPodAffinityTerm(
            weight=w.weight, pod_affinity_term=_pod_affinity_term_to_pb(w.term)
        )
        for w in a.preferred
    )


def _affinity_to_pb(a: model.Affinity, out: pb.Affinity) -> None:
    out.SetInParent()
    if a.node_affinity is not None:
        na = out.node_affinity
        na.SetInParent()
        if a.node_affinity.required is not None:
            req = na.required_during_scheduling_ignored_during_execution
            req.SetInParent()
            req.node_selector_terms.extend(
                _node_selector_term_to_pb(t) for t in a.node_affinity.required
            )
        na.preferred_during_scheduling_ignored_during_execution.extend(
            pb.PreferredSchedulingTerm(
                weight=p.weight, preference=_node_selector_term_to_pb(p.preference)
            )
            for p in a.node_affinity.preferred
        )
    if a.pod_affinity is not None:
        _pod_affinity_to_pb(a.pod_affinity, out.pod_affinity)
    if a.pod_anti_affinity is not None:
        _pod_affinity_to_pb(a.pod_anti_affinity, out.pod_anti_affinity)


def _container_to_pb(c: model.Container) -> pb.Container:
    return pb.Container(
        name=c.name,
        image=c.image,
        requests=_quantities(c.requests),
        ports=[
            pb.ContainerPort(
                container_port=p.container_port,
                host_port=p.host_port,
                protocol=p.protocol,
                host_ip=p.host_ip,
            )
            for p in c.ports
        ],
        restart_policy=c.restart_policy,
    )


def _spread_to_pb(c: model.TopologySpreadConstraint) -> pb.TopologySpreadConstraint:
    out = pb.TopologySpreadConstraint(
        max_skew=c.max_skew,
        topology_key=c.topology_key,
        when_unsatisfiable=c.when_unsatisfiable,
        min_domains=c.min_domains,
        node_affinity_policy=c.node_affinity_policy,
        node_taints_policy=c.node_taints_policy,
        match_label_keys=c.match_label_keys,
    )
    if c.label_selector is not None:
        out.label_selector.CopyFrom(label_selector_to_pb(c.label_selector))
    return out


def pod_to_pb(pod: model.Pod) -> pb.Pod:
    """The message a client would send for `pod` (defaults spelled out)."""
    out = pb.Pod(
        uid=pod.uid,
        name=pod.name,
        namespace=pod.namespace,
        labels=dict(pod.labels),
        scheduler_name=pod.scheduler_name,
        priority=pod.priority,
        containers=[_container_to_pb(c) for c in pod.containers],
        init_containers=[_container_to_pb(c) for c in pod.init_containers],
        overhead=_quantities(pod.overhead),
        node_selector=dict(pod.node_selector),
        tolerations=[
            pb.Toleration(
                key=t.key,
                operator=t.operator,
                value=t.value,
                effect=t.effect,
                toleration_seconds=t.toleration_seconds,
            )
            for t in pod.tolerations
        ],
        topology_spread_constraints=[_spread_to_pb(c) for c in pod.topology_spread_constraints],
        node_name=pod.node_name,
        nominated_node_name=pod.nominated_node_name,
        terminating_by_preemption=pod.terminating_by_preemption,
        terminating=pod.terminating,
    )
    if pod.preemption_policy is not model.PreemptionPolicy.PREEMPT_LOWER_PRIORITY:
        out.preemption_policy = pod.preemption_policy.value
    if pod.start_time is not None:
        out.start_time.FromNanoseconds(pod.start_time)
    if pod.affinity is not None:
        _affinity_to_pb(pod.affinity, out.affinity)
    if pod.default_selector is not None:
        out.default_selector.CopyFrom(label_selector_to_pb(pod.default_selector))
    if pod.requests:
        out.resources.requests.update(_quantities(pod.requests))
    out.volumes.extend(volume_to_pb(v) for v in pod.volumes)
    if pod.disruption is not None:
        d = pod.disruption
        out.disruption.CopyFrom(pb.PodDisruption(
            controller_kind=d.controller_kind, mirror=d.mirror, safe_to_evict=d.safe_to_evict,
            safe_to_evict_local_volumes=d.safe_to_evict_local_volumes,
        ))
    if pod.pod_group:
        out.scheduling_group.pod_group_name = pod.pod_group
    return out


def node_to_pb(node: model.Node) -> pb.Node:
    return pb.Node(
        name=node.name,
        labels=dict(node.labels),
        taints=[pb.Taint(key=t.key, value=t.value, effect=t.effect) for t in node.taints],
        allocatable=_quantities(node.allocatable),
        unschedulable=node.unschedulable,
        images=[pb.ContainerImage(names=im.names, size_bytes=im.size_bytes) for im in node.images],
    )


def namespace_to_pb(ns: model.Namespace) -> pb.Namespace:
    return pb.Namespace(name=ns.name, labels=dict(ns.labels))


# ---- volumes (model_volume.py) ----
_DISK_FIELDS = (
    "gce_persistent_disk", "aws_elastic_block_store", "iscsi", "rbd", "azure_disk", "cinder",
    "portworx_volume",
)
KIND_FIELDS = {
    "gcePersistentDisk": "gce_persistent_disk", "awsElasticBlockStore": "aws_elastic_block_store",
    "iscsi": "iscsi", "rbd": "rbd", "azureDisk": "azure_disk", "cinder": "cinder",
    "portworxVolume": "portworx_volume", "azureFile": "azure_file",
    "vsphereVolume": "vsphere_volume",
}


def disk_to_pb(d: mv.DiskSources) -> dict[str, Any]:
    """The oneof field and message of an in-tree disk source ({} for none), as keyword
    arguments of pb.Volume."""
    for name in _DISK_FIELDS:
        src = getattr(d, name)
        if src is None:
            continue
        fields = {
            k: (list(v) if isinstance(v, tuple) else v)
            for k in type(src).__slots__ if (v := getattr(src, k)) not in ("", 0, False, ())
        }
        return {name: type(getattr(pb.Volume(), name))(**fields)}
    if d.azure_file:
        return {"azure_file": pb.AzureFileVolumeSource()}
    if d.vsphere_volume:
        return {"vsphere_volume": pb.VsphereVirtualDiskVolumeSource()}
    return {}


def volume_to_pb(v: mv.Volume, template: pb.PersistentVolumeClaimTemplate | None = None
                 ) -> pb.Volume:
    if v.kind == "persistentVolumeClaim":
        return pb.Volume(name=v.name, persistent_volume_claim=pb.PersistentVolumeClaimVolumeSource(
            claim_name=v.claim_name, read_only=v.read_only))
    if v.kind == "ephemeral":
        tpl = template or pb.PersistentVolumeClaimTemplate.FromString(v.ephemeral_template)
        return pb.Volume(name=v.name, ephemeral=pb.EphemeralVolumeSource(
            volume_claim_template=tpl))
    if v.kind == "csi":
        return pb.Volume(name=v.name, csi=pb.CSIVolumeSource(driver=v.csi_driver,
                                                             read_only=v.read_only))
    if v.kind == "other":
        return pb.Volume(name=v.name, other=v.other_source)
    return pb.Volume(name=v.name, **disk_to_pb(v.disk))
