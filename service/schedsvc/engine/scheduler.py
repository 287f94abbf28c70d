"""The engine holding every cluster of one server (kube's scheduler.go): the configuration,
the profiles, the worker pool, and the clusters by name (each one is cluster.py).

A request looks its cluster up here once and then works on the Cluster alone, so a placement
enters this module for the lookup and never comes back to it.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from ..config import SchedulerConfig
from ..errors import ResourceExhausted
from ..model import Pod
from ..plugins.registry import Registry, in_tree_registry
from .batching import DEFAULT_SERVER_PARKED_BYTES, ParkedBudget
from .cluster import Cluster
from .nomination_bound import DEFAULT_MAX_NOMINATED_PODS
from .observer import NULL_OBSERVER, Observer
from .pod_group_order import group_order
from .runtime import Framework
from .staged import STAGED_IDLE_SECONDS
from .update_types import SnapshotUpdate, UpdateResult

__all__ = [
    "SnapshotUpdate",
    "UpdateResult",
    "Cluster",
    "Engine",
]


class Engine:
    """All clusters of one server: the configuration, the profiles, the worker pool."""

    def __init__(
        self,
        config: SchedulerConfig,
        *,
        seed: int | None = None,
        batching_enabled: bool = True,
        registry: Registry | None = None,
        observer: Observer = NULL_OBSERVER,
        max_clusters: int = 0,
        max_parked_bytes: int = DEFAULT_SERVER_PARKED_BYTES,
        staged_idle_seconds: float = STAGED_IDLE_SECONDS,
        max_nominated_pods: int = DEFAULT_MAX_NOMINATED_PODS,
    ) -> None:
        self.config = config
        self.seed = seed
        self.batching_enabled = batching_enabled
        self.observer = observer
        self.epoch = uuid.uuid4().hex
        self.parked_budget = ParkedBudget(max_parked_bytes)  # shared by every cluster
        registry = registry or in_tree_registry()
        self.frameworks = {p.scheduler_name: Framework(p, registry) for p in config.profiles}
        for fw in self.frameworks.values():
            fw.observer = observer
        self.executor: ThreadPoolExecutor | None = (
            ThreadPoolExecutor(max_workers=config.parallelism, thread_name_prefix="filter")
            if config.parallelism > 1
            else None
        )
        self._clusters: dict[str, Cluster] = {}
        self._lock = threading.Lock()
        self.max_clusters = max_clusters
        self.staged_idle_seconds = staged_idle_seconds
        # per cluster (engine/nomination_bound.py; 0: no bound)
        self.max_nominated_pods = max_nominated_pods

    def cluster(self, name: str) -> Cluster:
        """The named cluster, created empty the first time a request that writes names it.
        Beyond `max_clusters` (0: no bound) a new name is ResourceExhausted."""
        name = name or "default"
        c = self._clusters.get(name)
        if c is None:
            with self._lock:
                c = self._clusters.get(name)
                if c is None:
                    if 0 < self.max_clusters <= len(self._clusters):
                        raise ResourceExhausted(
                            f"the server holds {len(self._clusters)} clusters, its limit "
                            f"(--max-clusters {self.max_clusters}): delete one "
                            "(DeleteCluster) or use an existing one",
                            retry_after_seconds=5.0,
                        )
                    c = Cluster(name, self)
                    self._clusters[name] = c
        return c

    def find(self, name: str) -> Cluster | None:
        """The named cluster if it exists; never creates one."""
        return self._clusters.get(name or "default")

    def reader(self, name: str) -> Cluster:
        """The cluster a read-only request (Explain, dry run) works on: the named one, or, for
        a name the server does not hold, a fresh empty cluster that is not kept, so the answer
        is an empty cluster's and nothing is created."""
        return self.find(name) or Cluster(name or "default", self)

    def delete_cluster(self, name: str) -> bool:
        """Forget a cluster and everything in it; False when there was none. Requests already
        running on it finish on the old state; the next write creates it afresh."""
        with self._lock:
            return self._clusters.pop(name or "default", None) is not None

    def clusters(self) -> dict[str, Cluster]:
        return dict(self._clusters)

    @property
    def generic_workload(self) -> bool:
        """The GenericWorkload gate (server-wide, as kube's feature gates): pods of a PodGroup
        are scheduled in pod group cycles."""
        return any(p.features.generic_workload for p in self.config.profiles)

    def order_pods(self, pods: Sequence[Pod]) -> Sequence[Pod]:
        """The order a Schedule request's pods are scheduled in (pod_group_order.py): the
        request's own unless GenericWorkload gathers a group's members."""
        return group_order(pods) if self.generic_workload else pods

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
