"""Small random clusters for the fork tests: nodes in zones (some tainted, some with images),
bound pods of every kind a fork must carry (labels counted by spreading, inter-pod affinity
terms, host ports, claims of a WaitForFirstConsumer class, priorities), nominated pods, and
pending pods that fill the nodes so that some preempt. Hypothesis strategies draw them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from hypothesis import strategies as st

from schedsvc.engine.cluster import Cluster
from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.model import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    frozen_map,
)
from schedsvc.model_volume import Volume
from tests.builders.clusters import cluster_of
from tests.builders.pv_claims import affinity, make_class, make_pv, make_pvc

__all__ = ["World", "worlds", "pending", "pod_of", "node_of", "KINDS", "cluster_of_world"]

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
WFFC = "wffc"
KINDS = ("plain", "spread", "anti", "ports", "claim", "urgent")
APPS = ("a", "b", "c")


def node_of(i: int, zones: int, cpu: int, tainted: bool = False, image: bool = False) -> Node:
    return Node(
        name=f"n{i}",
        labels={HOST: f"n{i}", ZONE: f"z{i % zones}", "tier": "x" if i % 2 else "y"},
        allocatable={"cpu": cpu, "memory": 8 << 30, "pods": 20},
        taints=(Taint("dedicated", "t"),) if tainted else (),
        images=(ContainerImage(names=("img:1",), size_bytes=300 << 20),) if image else (),
    )


def pod_of(kind: str, uid: str, app: str, cpu: int, node_name: str = "", prio: int = 0) -> Pod:
    """A pod of `kind` (KINDS) labelled app=`app`, requesting `cpu` millicores."""
    sel = LabelSelector(match_labels=(("app", app),))
    ports: tuple[ContainerPort, ...] = ()
    extra: dict[str, Any] = {}
    if kind == "spread":
        extra["topology_spread_constraints"] = (
            TopologySpreadConstraint(1, ZONE, "ScheduleAnyway", sel),
        )
    elif kind == "anti":
        term = PodAffinityTerm(HOST, sel)
        extra["affinity"] = Affinity(pod_anti_affinity=PodAffinity(required=(term,)))
    elif kind == "ports":
        ports = (ContainerPort(8080, 8080 + len(app) % 2, "TCP", ""),)
    elif kind == "claim":
        extra["volumes"] = (
            Volume(name="data", kind="persistentVolumeClaim", claim_name=f"claim-{uid}"),
        )
    elif kind == "urgent":
        prio = 100
    return Pod(
        uid=uid, name=uid, labels=frozen_map({"app": app}), priority=prio, node_name=node_name,
        containers=(Container(name="c", requests={"cpu": cpu, "memory": 64 << 20},
                              ports=ports),),
        tolerations=(Toleration(key="dedicated", operator="Exists"),) if app == "c" else (),
        default_selector=sel, **extra,
    )


@dataclass(frozen=True)
class World:
    """A cluster's contents: nodes, bound pods, nominated pods, storage for claim pods."""

    nodes: tuple[Node, ...]
    placed: tuple[Pod, ...]
    nominated: tuple[Pod, ...]

    def update(self) -> SnapshotUpdate:
        claims = [p for p in self.placed + self.nominated if p.volumes]
        return SnapshotUpdate(
            upsert_nodes=list(self.nodes),
            upsert_storage_classes=[make_class(WFFC, provisioner="")],
            upsert_persistent_volume_claims=[
                make_pvc(f"claim-{p.uid}", WFFC, 1 << 30) for p in claims
            ],
            upsert_pods=list(self.placed + self.nominated),
        )


def storage_for(pods: list[Pod], nodes: tuple[Node, ...]) -> SnapshotUpdate:
    """Claims for the pending claim pods, and a local PV per node (two per node) they bind."""
    pvs = [
        make_pv(f"pv-{n.name}-{k}", WFFC, 2 << 30, node_affinity=affinity({HOST: [n.name]}))
        for n in nodes for k in range(2)
    ]
    claims = [make_pvc(f"claim-{p.uid}", WFFC, 1 << 30) for p in pods if p.volumes]
    return SnapshotUpdate(upsert_persistent_volumes=pvs, upsert_persistent_volume_claims=claims)


_pod_spec = st.tuples(
    st.sampled_from(KINDS), st.sampled_from(APPS), st.sampled_from((200, 300, 500))
)


@st.composite
def worlds(draw: st.DrawFn, max_nodes: int = 6) -> World:
    n = draw(st.integers(2, max_nodes))
    zones = draw(st.integers(1, 3))
    nodes = tuple(
        node_of(i, zones, draw(st.sampled_from((1000, 2000))),
                draw(st.booleans()) and i % 3 == 2, i % 2 == 0)
        for i in range(n)
    )
    placed = []
    for j, (kind, app, cpu) in enumerate(draw(st.lists(_pod_spec, max_size=3 * n))):
        if kind in ("claim", "urgent"):
            kind = "plain"  # bound claim pods need bound claims: the pending ones cover them
        placed.append(pod_of(kind, f"b{j}", app, cpu, f"n{draw(st.integers(0, n - 1))}",
                             prio=draw(st.sampled_from((0, 10)))))
    nominated = tuple(
        replace(pod_of("plain", f"nom{j}", app, cpu, prio=50),
                nominated_node_name=f"n{draw(st.integers(0, n - 1))}")
        for j, (_, app, cpu) in enumerate(draw(st.lists(_pod_spec, max_size=2)))
    )
    return World(nodes, _fitting(placed, nodes), nominated)


def _fitting(placed: list[Pod], nodes: tuple[Node, ...]) -> tuple[Pod, ...]:
    """The bound pods an UpdateSnapshot takes: within each node's cpu and host ports."""
    room = {n.name: n.allocatable["cpu"] for n in nodes}
    ports: set[tuple[str, int]] = set()
    out = []
    for p in placed:
        cpu = p.containers[0].requests["cpu"]
        hp = {(p.node_name, cp.host_port) for cp in p.containers[0].ports}
        if cpu <= room[p.node_name] and not hp & ports:
            room[p.node_name] -= cpu
            ports |= hp
            out.append(p)
    return tuple(out)


@st.composite
def pending(draw: st.DrawFn, prefix: str, max_size: int = 12) -> list[Pod]:
    specs = draw(st.lists(_pod_spec, min_size=1, max_size=max_size))
    return [pod_of(kind, f"{prefix}{i}", app, cpu) for i, (kind, app, cpu) in enumerate(specs)]


def cluster_of_world(world: World, batching: bool, extra: SnapshotUpdate | None = None) -> Cluster:
    """The world as an engine cluster (fixed seed); `extra` applied after it."""
    c = cluster_of([], batching=batching)
    c.update(world.update())
    if extra is not None:
        c.update(extra)
    return c
