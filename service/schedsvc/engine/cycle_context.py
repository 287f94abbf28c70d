"""What a scheduling cycle reads and what it carries to the next one, passed in explicitly.

kube keeps these on its Scheduler struct; here the cluster owns them and hands them to the
cycle, so that the cycle's functions never reach back into the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..framework.podinfo import PodInfo
from ..framework.snapshot import Snapshot
from .batching import ClusterBatches
from .observer import Observer
from .runtime import Framework

__all__ = ["CycleCursor", "CycleEnv"]


@dataclass(slots=True)
class CycleCursor:
    """What one cycle leaves the next: the cycle counter (batching keys its state by it), the
    round-robin start index of the filter stage (kube's nextStartNodeIndex), the seeded
    generator of selectHost and preemption, and the last pod's info (a run of equal pods
    shares its PodInfo facts)."""

    rng: np.random.Generator
    cycle: int = 0
    next_start_index: int = 0
    last_info: PodInfo | None = None


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
