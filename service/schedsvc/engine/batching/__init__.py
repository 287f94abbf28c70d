"""Opportunistic batching (KEP-5598): a hint for a pod equal to the last one, standing for the
full cycle it replaces (batch.py), the caches it reads (score_cache.py, window_cache.py), runs
kept to resume (parked.py), runs started from a sibling's (siblings.py, forks only), and the
per-cluster set that hears of snapshot changes (cluster_batches.py). The cycle imports
what it needs from here.
"""

from __future__ import annotations

from .batch import OpportunisticBatch
from .batch_types import BatchAttempt, FlushReason, Hint
from .cluster_batches import ClusterBatches
from .parked import DEFAULT_SERVER_PARKED_BYTES, ParkedBudget
from .siblings import SiblingBatch

__all__ = [
    "BatchAttempt",
    "ClusterBatches",
    "DEFAULT_SERVER_PARKED_BYTES",
    "FlushReason",
    "Hint",
    "OpportunisticBatch",
    "ParkedBudget",
    "SiblingBatch",
]
