"""The per-cluster bound on nominated pods (--max-nominated-pods-per-cluster).

Every cycle walks the cluster's nominations (kube's addGENominatedPods), and one of priority >=
a pod's turns batching off for that pod, so their number sets the cost of every cycle. kube's
nominator needs no bound: its nominations are pods of its own queue. Ours are whatever clients
send and what preemption made, kept until the pod is sent again, placed or removed, so a
client can pile them up. Below the bound everything is kube's; at it, an update that would
add one is refused and a preemption that would add one nominates nothing and says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import InvalidArgument
from ..framework.podinfo import PodInfo
from ..framework.snapshot import Snapshot
from ..plugins.default_preemption import DefaultPreemptionArgs
from .filtering import Diagnosis, NominatedPods
from .preemption import PreemptionResult, preempt
from .runtime import CycleState, Framework

if TYPE_CHECKING:
    from .update_types import SnapshotUpdate

__all__ = [
    "DEFAULT_MAX_NOMINATED_PODS",
    "check_update",
    "has_room",
    "preempt_within_bound",
    "refused",
]

# Preemption is rare: a real cluster holds a handful of nominations at a time (kube's own
# are pods waiting for their victims to go). 1000 keeps the walk each cycle makes under a few
# milliseconds (6000 took a 1-pod dry run from 1.2 to 19 ms) and is far above real use.
DEFAULT_MAX_NOMINATED_PODS = 1000


def _limit_text(bound: int) -> str:
    return f"its limit (--max-nominated-pods-per-cluster {bound})"


def nominated_after(snap: Snapshot, upd: SnapshotUpdate) -> int:
    """How many pods the cluster holds nominated once `upd` is applied (removals first, then
    upserts: a bound pod ends a nomination, a pod without a node starts one)."""
    kept = set() if upd.replace else set(snap.nominated)
    kept.difference_update(upd.remove_pods)
    for pod in upd.upsert_pods:
        if pod.node_name:
            kept.discard(pod.uid)
        else:
            kept.add(pod.uid)
    return len(kept)


def check_update(snap: Snapshot, upd: SnapshotUpdate, bound: int) -> None:
    """InvalidArgument (`upsert_pods`) when `upd` would leave more than `bound` nominated
    pods (0: no bound). Not RESOURCE_EXHAUSTED: the same update never succeeds later by itself,
    and clients retry that code."""
    if bound <= 0 or all(p.node_name for p in upd.upsert_pods):
        return  # no nomination added: the count cannot grow
    n = nominated_after(snap, upd)
    if n > bound:
        raise InvalidArgument(
            "upsert_pods",
            f"the cluster would hold {n} nominated pods, above {_limit_text(bound)}; "
            "bind or remove nominated pods first",
        )


def has_room(snap: Snapshot, uid: str, bound: int) -> bool:
    """Whether pod `uid` may be nominated: it already is (a new node replaces the old), or the
    cluster holds fewer than `bound` (0: no bound)."""
    return bound <= 0 or uid in snap.nominated or len(snap.nominated) < bound


def refused(res: PreemptionResult, bound: int) -> PreemptionResult:
    """PostFilter's answer when preemption found a node but the bound is reached: no node,
    no victims, and a message (appended to the FitError) saying why."""
    return PreemptionResult(
        eligible=res.eligible,
        message=f"preemption: not nominated: the cluster holds {bound} nominated pods, "
        f"{_limit_text(bound)}.",
        candidates=res.candidates,  # Explain still shows them
    )


def preempt_within_bound(
    snap: Snapshot, fw: Framework, cs: CycleState, info: PodInfo, diag: Diagnosis,
    args: DefaultPreemptionArgs, nominated: NominatedPods | None,
    rng: np.random.Generator | None, bound: int, all_candidates: bool = False,
) -> tuple[PreemptionResult, bool]:
    """DefaultPreemption's dry run (`preempt`) and whether its nomination was refused for
    want of room under `bound`: the one PostFilter step Schedule and Explain share."""
    res = preempt(snap, fw, cs, info, diag, args, nominated, rng, all_candidates)
    if res.nominated_node and not has_room(snap, info.uid, bound):
        return refused(res, bound), True
    return res, False
