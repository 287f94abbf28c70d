"""What the cycles of one cluster read, passed in explicitly: the snapshot, the batch states,
and the engine's profiles and settings (kube keeps these on its Scheduler struct). The cluster
builds it when its snapshot is swapped in or its node count changes, and hands it to every
cycle, so that the cycle's functions never reach back into the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..framework.snapshot import Snapshot
from .batching import ClusterBatches, OpportunisticBatch
from .observer import Observer
from .runtime import Framework
from .sampling import num_feasible_nodes_to_find

__all__ = ["CycleEnv", "sampling_by_profile"]


@dataclass(frozen=True, slots=True)
class CycleEnv:
    """What the cycles of one request read, under the cluster's lock: the snapshot, the batch
    states, and the engine's profiles and settings."""

    snapshot: Snapshot
    batches: ClusterBatches
    frameworks: Mapping[str, Framework]
    observer: Observer
    percentage_of_nodes_to_score: int
    executor: ThreadPoolExecutor | None
    parallelism: int
    max_nominated_pods: int  # --max-nominated-pods-per-cluster (0: no bound)
    batch: Mapping[str, OpportunisticBatch]  # batches.by_profile(): a profile's, looked up
    # profile -> (its percentageOfNodesToScore, numFeasibleNodesToFind of every node): what
    # the filter stage looks for, and so what a batching hint stands for
    sampling: Mapping[str, tuple[int, int]]
    # whether a cycle makes a CycleRecord: not for the null observer (metrics and tracing
    # off), which would drop it
    records: bool
    # whether an unschedulable pod runs PostFilter (DefaultPreemption): a simulation that
    # asks what fits (fill, drain, scale_up) turns it off, a pod that would preempt fits not
    preemption: bool = True


def generic_workload(frameworks: Mapping[str, Framework]) -> bool:
    """The GenericWorkload gate (server-wide as kube's gates; every profile carries it):
    pods of a PodGroup are scheduled in pod group cycles."""
    return any(fw.profile.features.generic_workload for fw in frameworks.values())


def sampling_by_profile(
    frameworks: Mapping[str, Framework], percentage: int, num_nodes: int
) -> dict[str, tuple[int, int]]:
    """Each profile's percentageOfNodesToScore (its own, else the configuration's) and the
    feasible nodes its filter stage looks for among `num_nodes` (one when nothing scores)."""
    out = {}
    for name, fw in frameworks.items():
        pct = fw.profile.percentage_of_nodes_to_score
        if pct is None:
            pct = percentage
        out[name] = (pct, num_feasible_nodes_to_find(num_nodes, pct) if fw.score else 1)
    return out
