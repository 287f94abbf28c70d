"""Pods and nodes carrying the one feature a plugin's table tests vary (images, host ports,
node or pod affinity, spread constraints, topology labels), as kube's wrappers.go builds them:
nothing else set, so a case states all that matters to it."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from schedsvc.model import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    Node,
    NodeAffinity,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    Taint,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
    frozen_map,
)
from tests.builders.domain import node_with_labels

__all__ = [
    "Port",
    "pod_with_images",
    "node_with_images",
    "pod_with_ports",
    "pod_with_node_affinity",
    "pod_with_affinity",
    "pod_with_spread",
    "host_node",
    "zone_node",
]

HOSTNAME = "kubernetes.io/hostname"
Port = tuple[str, str, int]  # (protocol, host ip, host port), as kube's test helper spells them

_uid = itertools.count()


def pod_with_images(*images: str, init: tuple[str, ...] = ()) -> Pod:
    return Pod(
        uid="p",
        containers=tuple(Container(name=f"c{i}", image=im) for i, im in enumerate(images)),
        init_containers=tuple(Container(name=f"i{i}", image=im) for i, im in enumerate(init)),
    )


def node_with_images(name: str, images: tuple[ContainerImage, ...]) -> Node:
    return Node(name=name, images=images)


def pod_with_ports(uid: str, *ports: Port) -> Pod:
    """One container asking for each host port (container port = host port)."""
    cps = tuple(
        ContainerPort(container_port=p, host_port=p, protocol=proto, host_ip=ip)
        for proto, ip, p in ports
    )
    return Pod(uid=uid, name=uid, containers=(Container(name="c", ports=cps),))


def pod_with_node_affinity(
    node_selector: Mapping[str, str] | None = None,
    required: tuple[NodeSelectorTerm, ...] | None = None,
    preferred: tuple[PreferredSchedulingTerm, ...] = (),
) -> Pod:
    """A nodeSelector and node affinity; `required` None: no required terms at all (kube
    tells that apart from an empty list of terms, which matches nothing)."""
    aff = None
    if required is not None or preferred:
        aff = Affinity(node_affinity=NodeAffinity(required=required, preferred=preferred))
    return Pod(uid="p", name="p", node_selector=dict(node_selector or {}), affinity=aff)


def pod_with_affinity(
    labels: Mapping[str, str] | None = None,
    namespace: str = "default",
    required: Sequence[PodAffinityTerm] = (),
    required_anti: Sequence[PodAffinityTerm] = (),
    preferred: Sequence[WeightedPodAffinityTerm] = (),
    preferred_anti: Sequence[WeightedPodAffinityTerm] = (),
    uid: str | None = None,
) -> Pod:
    """Pod (anti-)affinity terms; a fresh uid each call unless `uid` is given."""
    pa = PodAffinity(required=tuple(required), preferred=tuple(preferred))
    paa = PodAffinity(required=tuple(required_anti), preferred=tuple(preferred_anti))
    affinity = None
    if required or preferred or required_anti or preferred_anti:
        affinity = Affinity(
            pod_affinity=pa if (required or preferred) else None,
            pod_anti_affinity=paa if (required_anti or preferred_anti) else None,
        )
    return Pod(
        uid=uid or f"uid-{next(_uid)}",
        namespace=namespace,
        labels=frozen_map(labels or {}),
        affinity=affinity,
    )


def pod_with_spread(
    *constraints: TopologySpreadConstraint,
    labels: Mapping[str, str] | None = None,
    **kw: Any,
) -> Pod:
    """Spread constraints on a pod labelled foo="" unless `labels` says otherwise (kube's
    spreading tests select foo)."""
    return Pod(
        uid="p",
        name="p",
        labels=frozen_map({"foo": ""} if labels is None else labels),
        topology_spread_constraints=constraints,
        **kw,
    )


def host_node(name: str, **labels: str) -> Node:
    """A node with its hostname label (and `labels`)."""
    return node_with_labels(name, {HOSTNAME: name}, **labels)


def zone_node(
    name: str, zone: str, taints: Sequence[Taint] = (), zone_key: str = "zone", **labels: str
) -> Node:
    """A node with its hostname label and `zone` under `zone_key`."""
    return node_with_labels(name, {HOSTNAME: name, zone_key: zone}, taints=taints, **labels)
