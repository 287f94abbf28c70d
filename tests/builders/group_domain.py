"""Clusters with GenericWorkload on, PodGroups and their members, for the pod group cycle and
workload-aware preemption tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from schedsvc.config import parse_config
from schedsvc.engine.cycle_env import CycleEnv
from schedsvc.engine.scheduler import Cluster, Engine, SnapshotUpdate
from schedsvc.framework.feature import Features
from schedsvc.model import Node, Pod, PodDisruptionBudget, frozen_map
from schedsvc.model_pod_group import DisruptionMode, PodGroup

from .domain import pod

GENERIC_WORKLOAD = Features(gates=(("GenericWorkload", True),))

__all__ = ["GENERIC_WORKLOAD", "env_of", "gang_cluster", "group", "member", "sized"]


def gang_cluster(
    nodes: Iterable[Node], pods: Iterable[Pod] = (), groups: Iterable[PodGroup] = (),
    pdbs: Iterable[PodDisruptionBudget] = (), *, seed: int = 3, batching: bool = False,
    generic_workload: bool = True,
) -> Cluster:
    """Cluster "t" of a fresh engine with --feature-gates GenericWorkload=true (or, to
    compare, the default gates)."""
    features = GENERIC_WORKLOAD if generic_workload else Features()
    engine = Engine(parse_config({}, features=features), seed=seed, batching_enabled=batching)
    c = engine.cluster("t")
    c.update(SnapshotUpdate(
        upsert_nodes=list(nodes), upsert_pods=list(pods), upsert_pod_groups=list(groups),
        upsert_pod_disruption_budgets=list(pdbs),
    ))
    return c


def group(
    name: str, priority: int | None = None, min_count: int | None = None,
    whole: bool = False, namespace: str = "default",
) -> PodGroup:
    """A PodGroup: gang when `min_count`, basic otherwise; `whole`: disruptionMode all."""
    return PodGroup(
        name, namespace=namespace, uid=f"uid-{name}", min_count=min_count, priority=priority,
        disruption_mode=DisruptionMode.ALL if whole else DisruptionMode.SINGLE,
    )


def sized(uid: str, size: int = 1, **kw: Any) -> Pod:
    """A pod requesting `size` CPUs and nothing else (kube's preemption tests' "size" label
    against a node capacity in CPUs)."""
    labels = kw.pop("labels", None)
    if labels is not None:
        kw["labels"] = frozen_map(labels)
    return pod(uid, cpu=1000 * size, memory=None, **kw)


def member(uid: str, pod_group: str, priority: int, size: int = 1, **kw: Any) -> Pod:
    """A pending member of `pod_group` (its priority must be the group's)."""
    return sized(uid, size, priority=priority, pod_group=pod_group, **kw)


def env_of(c: Cluster) -> CycleEnv:
    """What a cycle of `c` reads (the engine's own, as a request's cycles get it)."""
    return c._cycle_env
