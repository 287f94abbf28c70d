"""What batching says about itself: why a state was flushed and what came of an attempt (kube's
metrics.BatchFlush* and BatchAttempt* values), a hint, and the last cycle a profile ran."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["FlushReason", "BatchAttempt", "Hint", "LastCycle"]


class FlushReason(StrEnum):
    """Why the batch state was dropped: kube's metrics.BatchFlush* values."""

    POD_SKIPPED = "pod_skipped"
    POD_FAILED = "pod_failed"
    POD_INCOMPATIBLE = "pod_incompatible"
    EXPIRED = "expired"
    NODE_MISSING = "node_missing"
    NODE_NOT_FULL = "node_not_full"
    EMPTY_LIST = "empty_list"
    POD_NOT_BATCHABLE = "pod_not_batchable"
    # ours: an UpdateSnapshot may have changed any node, so cached scores are no longer exact
    SNAPSHOT_CHANGED = "snapshot_changed"
    # ours: a node change left the visiting order other than "rows ascending, rotated", which
    # ScoreCache keys its rows by (a cache built under such an order is a WindowCache)
    VISITING_ORDER = "visiting_order"
    # ours: nominated pods of the pod's priority or higher exist, which its filters count in a
    # second pass the cached states do not model: its cycle neither uses nor keeps one
    NOMINATED_PODS = "nominated_pods"


class BatchAttempt(StrEnum):
    """What came of one pod's attempt: kube's metrics.BatchAttempt* values."""

    HINT = "hint"
    NO_HINT = "no_hint"
    HINT_USED = "hint_used"
    HINT_NOT_USED = "hint_not_used"


# a hint: (row, its score, the nodes the cycle it stands for visits: how far the start index
# moves), as kube's GetNodeHint answers with a node and the cycle's bookkeeping
Hint = tuple[int, int, int]


@dataclass(slots=True)
class LastCycle:
    """kube's schedulingCycle: the last cycle this profile ran and where its pod went."""

    cycle: int = -1
    row: int = -1
    name: str = ""
    succeeded: bool = False
