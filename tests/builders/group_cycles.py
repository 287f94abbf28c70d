"""Pod groups for engine tests of the pod group cycle (kube's st.MakePodGroup / PodGroupName
counterparts): an engine with GenericWorkload on, members of a group, gangs and basic groups,
and a request scheduled as the server would (Engine.order_pods first).

`NO_PREEMPTION` is a profile without DefaultPreemption: workload-aware preemption is written
on another branch, so tests of the cycle itself keep it out of the way (PodGroupPostFilter
then runs DynamicResources only, kube's "deallocation and deletion of ResourceClaims
completed").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from schedsvc.config import parse_config
from schedsvc.engine.pod_group_result import PodGroupResult
from schedsvc.engine.schedule_one import Placement
from schedsvc.engine.scheduler import Cluster, Engine, SnapshotUpdate
from schedsvc.framework.pod_group_members import PodGroupMembers
from schedsvc.model import Node, Pod
from schedsvc.model_pod_group import PodGroup
from tests.builders.domain import pod
from tests.builders.fingerprint import snapshot_state
from tests.builders.pod_groups import GANG_FEATURES

__all__ = [
    "GANG_FEATURES",
    "NO_PREEMPTION",
    "DRA_MESSAGE",
    "gang_engine",
    "gang_cluster",
    "member",
    "gang",
    "basic",
    "schedule_request",
    "group_of",
    "state_of",
    "warmed",
]

# DefaultPreemption off at every point (multiPoint): no PostFilter, and PodGroupPostFilter left
# with DynamicResources alone (kube fills that point from multiPoint, not from postFilter)
NO_PREEMPTION: dict[str, Any] = {
    "profiles": [{
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"disabled": [{"name": "DefaultPreemption"}]}},
    }]
}
# DynamicResources' PodGroupPostFilter with no claim (plugins/dynamicresources, v1.37.2)
DRA_MESSAGE = "deallocation and deletion of ResourceClaims completed"


def gang_engine(*, batching: bool = False, seed: int = 3, **config: Any) -> Engine:
    """An engine with GenericWorkload on, configured by `config` (KubeSchedulerConfiguration
    keys; NO_PREEMPTION's to keep DefaultPreemption out)."""
    return Engine(parse_config(config, features=GANG_FEATURES), seed=seed,
                  batching_enabled=batching)


def gang_cluster(
    nodes: Iterable[Node], pods: Iterable[Pod] = (), groups: Iterable[PodGroup] = (), *,
    batching: bool = False, seed: int = 3, **config: Any,
) -> Cluster:
    """Cluster "t" of a fresh gang_engine holding `nodes`, `pods` and the PodGroups."""
    c = gang_engine(batching=batching, seed=seed, **config).cluster("t")
    c.update(SnapshotUpdate(
        upsert_nodes=list(nodes), upsert_pods=list(pods), upsert_pod_groups=list(groups)
    ))
    return c


def member(uid: str, group: str, cpu: int | None = 100, **kw: Any) -> Pod:
    """A pod of PodGroup `group` (spec.schedulingGroup.podGroupName), named as its uid."""
    return pod(uid, cpu=cpu, pod_group=group, **kw)


def gang(name: str, min_count: int, **kw: Any) -> PodGroup:
    return PodGroup(name, min_count=min_count, **kw)


def basic(name: str, **kw: Any) -> PodGroup:
    return PodGroup(name, **kw)


def schedule_request(
    cluster: Cluster, pods: Sequence[Pod], dry_run: bool = False
) -> list[Placement]:
    """A Schedule request's pods as the server runs them: Engine.order_pods, then schedule."""
    out, _ = cluster.schedule(list(cluster.engine.order_pods(pods)), dry_run)
    return out


def group_of(placements: Sequence[Placement], key: str) -> PodGroupResult:
    """The one PodGroupResult the members of `key` ("namespace/name") share."""
    results = {id(p.group): p.group for p in placements if p.pod_group == key}
    assert len(results) == 1, f"{key}: {len(results)} group results"
    (res,) = results.values()
    assert res is not None
    return res


def state_of(cluster: Cluster) -> dict[str, Any]:
    """snapshot_state of the cluster's snapshot, its PodGroups and cycle counter beside:
    everything a request could have changed. The members index (a listener the first group
    cycle registers, derived from the pods) is registered first, so its appearance is not a
    change."""
    snap = cluster.snapshot
    PodGroupMembers.for_snapshot(snap)
    return {**snapshot_state(snap), "pod_groups": dict(snap.pod_groups),
            "workloads": dict(snap.workloads), "cycle": cluster.cursor.cycle}


def warmed(cluster: Cluster) -> Cluster:
    """`cluster` after a dry run of one plain pod and a look at its group members: the indexes
    a first cycle registers on the snapshot (AffinityIndex, PodGroupMembers; derived from the
    pods) exist, so a later snapshot_state compares what changed, not what was built."""
    cluster.schedule([pod("warm-up", cpu=1)], dry_run=True)
    PodGroupMembers.for_snapshot(cluster.snapshot)
    return cluster
