"""What the cycles of one cluster read, passed in explicitly: the snapshot, the batch states,
and the engine's profiles and settings (kube keeps these on its Scheduler struct). The cluster
builds it when its snapshot is swapped in and hands it to every cycle, so that the cycle's
functions never reach back into the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..framework.snapshot import Snapshot
from .batching import ClusterBatches, OpportunisticBatch
from .observer import Observer
from .runtime import Framework

__all__ = ["CycleEnv"]


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
