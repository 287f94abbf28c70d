"""DefaultPreemption's PodGroupPostFilter (kube's framework/preemption/podgrouppreemption.go,
PodGroupEvaluator.Preempt): workload-aware preemption over the whole cluster for a pod group
that cannot be placed.

- Eligibility: a member with preemptionPolicy Never makes the group ineligible (the
  PodGroupPreemptionPolicy gate is off: it is refused at startup).
- isOngoingPreemption: a member's nominated node holds a lower-priority pod being terminated
  by preemption: the group keeps its nominations and waits.
- The victims (domain_victims.py): every pod on a node, a `disruptionMode: all` group's
  members as one; the potential ones are those of lower priority than the group's. None: the
  cheap exit, before anything is touched.
- selectVictimsOnDomain: all potential victims out of the snapshot, the whole group algorithm
  once more (`rerun`: a real run, the cursor moves as kube's scheduler state does), then each
  victim put back in MoreImportantVictim order, PDB-violating ones first, and kept (reprieved)
  when every member the run placed still passes the filters on its node, the earlier ones
  assumed. The snapshot is restored whatever happens (mutations.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

from ...framework.podinfo import PodInfo, pod_info
from ...framework.snapshot import Snapshot
from ...model import Pod, PreemptionPolicy
from ...model_pod_group import PodGroup
from ..assume_log import AssumeLog
from ..filtering import NominatedPods, filter_block
from ..pod_group_status import GroupCode, GroupStatus
from .domain_victims import (
    DomainVictim,
    cross_nodes_victims,
    importance,
    split_victims_by_pdb_violation,
    victim_priority,
)
from .evaluator import Victim
from .mutations import SnapshotMutations

if TYPE_CHECKING:
    from ..cycle_env import CycleEnv
    from ..runtime import Framework

__all__ = [
    "GroupPreemption",
    "PreemptCode",
    "NominatedFor",
    "Rerun",
    "ONGOING_MESSAGE",
    "NO_VICTIMS_MESSAGE",
    "preempt_pod_group",
]

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
ONGOING_MESSAGE = "ongoing preemption on nominated nodes"
NO_VICTIMS_MESSAGE = "No preemption victims found for incoming preemptor"

# the group algorithm run once more on the snapshot as it is: its status and the members it
# placed (in group order, with their nodes); it takes back its own assumes before returning
Rerun = Callable[[], tuple[GroupStatus, list[tuple[Pod, str]]]]
# runtime_nominated.nominated_pods, passed in (the engine's modules import one way)
NominatedFor = Callable[["Framework", Snapshot, PodInfo], NominatedPods | None]


class PreemptCode(Enum):
    SUCCESS = "Success"
    UNSCHEDULABLE = "Unschedulable"
    UNRESOLVABLE = "UnschedulableAndUnresolvable"
    ERROR = "Error"


@dataclass(frozen=True, slots=True)
class GroupPreemption:
    """The evaluator's status (without DefaultPreemption's "pod group preemption: " prefix),
    the node nominated for each member that has one (uid -> node), and the victims in kube's
    order."""

    code: PreemptCode
    message: str
    nominations: Mapping[str, str] = field(default_factory=dict)
    victims: tuple[Victim, ...] = ()
    num_pdb_violations: int = 0
    # victims that are groups or members of one (kube's numPodGroupDisruptions, a metric)
    num_pod_group_disruptions: int = 0


def preempt_pod_group(
    env: CycleEnv, fw: Framework, pg: PodGroup, queued: Sequence[Pod], rerun: Rerun,
    nominated_for: NominatedFor,
) -> GroupPreemption:
    """PodGroupEvaluator.Preempt (its caller's StartMutations/EndMutations included)."""
    if any(p.preemption_policy is PreemptionPolicy.NEVER for p in queued):
        return GroupPreemption(PreemptCode.UNSCHEDULABLE, NOT_ELIGIBLE_NEVER)
    snap = env.snapshot
    priority = pg.effective_priority
    current = _current_nominations(snap, queued)
    if _ongoing_preemption(snap, current, priority):
        return GroupPreemption(
            PreemptCode.SUCCESS, ONGOING_MESSAGE, {u: n for u, n in current.items() if n}
        )
    groups = snap.pod_groups
    if not any(victim_priority(groups, r.pod) < priority for r in snap.pods.values()):
        return GroupPreemption(PreemptCode.UNRESOLVABLE, NO_VICTIMS_MESSAGE)
    victims = cross_nodes_victims(snap, time.time_ns())
    potential = [v for v in victims if v.priority < priority]
    session = SnapshotMutations(snap)
    try:
        for v in potential:
            for rec in v.records:
                session.remove(rec)
        env.batches.invalidate()  # verdicts cached with the victims in place
        return _select_victims(env, fw, session, potential, rerun, nominated_for)
    finally:
        session.end()
        env.batches.invalidate()


def _current_nominations(snap: Snapshot, queued: Sequence[Pod]) -> dict[str, str]:
    """Each member's nominated node as kube's pod carries it: the one the client sent, else
    the one a cycle here recorded."""
    out: dict[str, str] = {}
    for p in queued:
        node = p.nominated_node_name
        if not node:
            rec = snap.nominated.get(p.uid)
            node = rec.nominated_node_name if rec is not None else ""
        out[p.uid] = node
    return out


def _ongoing_preemption(snap: Snapshot, current: Mapping[str, str], priority: int) -> bool:
    """isOngoingPreemption: a pod of lower priority (its group's, for a member) being
    terminated by preemption on a node some member is nominated to."""
    groups = snap.pod_groups
    for node in set(current.values()) - {""}:
        row = snap.row_of(node)
        if row is None:
            continue
        for rec in snap.pods_on_row[row].values():
            pod = rec.pod
            if pod.terminating_by_preemption and victim_priority(groups, pod) < priority:
                return True
    return False


def _select_victims(
    env: CycleEnv, fw: Framework, session: SnapshotMutations,
    potential: list[DomainVictim], rerun: Rerun, nominated_for: NominatedFor,
) -> GroupPreemption:
    """selectVictimsOnDomain from the re-run on: the reprieve, and the answer."""
    status, assigned = rerun()
    if status.code is not GroupCode.SUCCESS:
        code = PreemptCode.ERROR if status.code is GroupCode.ERROR else PreemptCode.UNSCHEDULABLE
        return GroupPreemption(code, status.message())
    potential.sort(key=importance)
    violating, other = split_victims_by_pdb_violation(potential, list(env.snapshot.pdbs.values()))
    preempted: list[DomainVictim] = []
    num_violations = 0
    for v, count in violating:
        if not _reprieve(env, fw, session, v, assigned, nominated_for):
            preempted.append(v)
            num_violations += count
    for v in other:
        if not _reprieve(env, fw, session, v, assigned, nominated_for):
            preempted.append(v)
    preempted.sort(key=importance)
    out = tuple(
        Victim(r.pod.uid, r.pod.namespace, r.pod.name, v.priority)
        for v in preempted for r in v.records
    )
    return GroupPreemption(
        PreemptCode.SUCCESS,
        f"found a placement for podgroup, preempting {len(out)} victims",
        {pod.uid: node for pod, node in assigned},
        out,
        num_violations,
        sum(v.in_group for v in preempted),
    )


def _reprieve(
    env: CycleEnv, fw: Framework, session: SnapshotMutations, v: DomainVictim,
    assigned: Sequence[tuple[Pod, str]], nominated_for: NominatedFor,
) -> bool:
    """reprieveVictim: the victim's pods back; every placed member, in group order, must
    still pass the filters (nominated pods counted) on its node, each assumed (and Reserved)
    for the next; the members are taken back after, the victim too when one fails."""
    for rec in v.records:
        session.add_back(rec)
    snap = env.snapshot
    log = AssumeLog()
    try:
        for pod, node in assigned:
            if not _fits(fw, snap, pod, node, nominated_for):
                for rec in v.records:
                    session.remove(rec)
                return False
            row = snap.index[node]
            info = pod_info(pod)
            log.before_assume(snap, pod.uid)
            snap.add_pod(pod, node, assumed=True, info=info)
            log.assumed(pod.uid)
            for p in fw.reserve:
                p.reserve(snap.pods[pod.uid].info, snap, row)
        return True
    finally:
        log.revert(snap)


def _fits(
    fw: Framework, snap: Snapshot, pod: Pod, node: str, nominated_for: NominatedFor
) -> bool:
    """RunFilterPluginsWithNominatedPods for `pod` on `node` as the snapshot is now (kube
    keeps the member's CycleState of the re-run and updates it with AddPod/RemovePod; a
    fresh PreFilter here sees the same pods)."""
    row = snap.row_of(node)
    if row is None:
        return False
    info = pod_info(pod)
    cs = fw.run_pre_filter(info, snap)
    if cs.rejected is not None:
        return False
    one = np.array([row], dtype=np.intp)
    res = filter_block(fw, cs, info, snap, one, nominated_for(fw, snap, info))
    return bool(res.feasible[0])
