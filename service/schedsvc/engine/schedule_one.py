"""The scheduling cycle of one pod (kube's schedule_one.go scheduleOne and schedulingCycle):
the batch state runs schedule_pod (or a hint standing for it), keeps its result and has the
pod assumed, in one call; the observer hears of the cycle once, at its end; when nothing
fits, the FitError and PostFilter (DefaultPreemption).

Every function runs under the cluster's lock, taken by `Cluster.schedule`; what the cycle reads
and what it leaves the next one are passed in (cycle_context.py).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from ..framework import Code
from ..framework.podinfo import PodInfo, pod_info
from ..model import Outcome, Pod
from ..model_storage import VolumeBindingResult
from .assume_log import AssumeLog
from .batching import OpportunisticBatch
from .cycle_context import CURRENT, CycleCursor, CycleRecord
from .cycle_env import CycleEnv
from .filtering import Diagnosis, NominatedPods, fit_error
from .nomination_bound import preempt_within_bound
from .pod_group_result import PodGroupResult
from .preemption import PreemptionResult, Victim
from .runtime import CycleState, Framework
from .runtime_nominated import nominated_pods
from .schedule_pod import schedule_pod
from .schedule_result import Path, ScheduleResult

NO_NODES_AVAILABLE = "no nodes available to schedule pods"  # kube's ErrNoNodesAvailable

__all__ = [
    "NO_NODES_AVAILABLE",
    "deleting_pod_message",
    "Placement",
    "schedule_one",
]


@dataclass(slots=True)
class Placement:
    """One pod's decision. Not frozen: made once per pod and never written after, and a
    frozen dataclass's __init__ costs three times as much (a twentieth of a hint)."""

    pod_uid: str
    node_name: str
    outcome: Outcome
    message: str = ""
    reasons: dict[str, int] = field(default_factory=dict)
    batched: bool = False
    cycle: int = 0
    score: int = 0
    nodes_evaluated: int = 0
    nodes_feasible: int = 0
    # DefaultPreemption found room: the node the pod is nominated to, the pods to evict there
    nominated_node_name: str = ""
    victims: tuple[Victim, ...] = ()
    # what VolumeBinding's Reserve bound the pod's unbound claims to (not on dry runs)
    volume_bindings: tuple[VolumeBindingResult, ...] = ()
    # a member scheduled in its pod group's cycle: the group, "namespace/name", and the
    # group's result (one object shared by every member of that cycle)
    pod_group: str = ""
    group: PodGroupResult | None = None
    # for a pod group cycle (not on the wire): a plugin's Error ended the cycle; PreFilter
    # stopped before its last plugins (UnschedulableAndUnresolvable, an empty PreFilterResult,
    # or no node at all), so kube's DynamicResources kept no state for the group
    error: bool = False
    pre_filter_ended: bool = False


def deleting_pod_message(pod: Pod) -> str:
    """kube's event for a pending pod skipped because it is being deleted."""
    return f"skip schedule deleting pod: {pod.namespace}/{pod.name}"


def schedule_one(
    env: CycleEnv, cursor: CycleCursor, pod: Pod, dry_run: bool, member: AssumeLog | None = None
) -> Placement:
    """One attempt; the observer is told once, at its end, with the record of the cycle that
    its stages filled (metrics, a trace span). With no observer (metrics and tracing off)
    there is no record: the stages find none and tell the null observer directly.

    `member`: the pod is a member in a pod group cycle (pod_group_cycle.py): it is assumed
    even in a dry run, into `member`, which the group cycle may take back, and a pod that
    fits nowhere runs no PostFilter (kube runs PodGroupPostFilter for the whole group)."""
    if not env.records:
        return _scheduling_cycle(env, cursor, pod, dry_run, None, member)
    rec = CURRENT.rec = CycleRecord(pod.scheduler_name, pod.uid, time.perf_counter())
    try:
        p = _scheduling_cycle(env, cursor, pod, dry_run, rec, member)
    except BaseException:
        CURRENT.rec = None
        rec.cycle = cursor.cycle  # outcome ERROR
        env.observer.cycle(rec)
        raise
    CURRENT.rec = None
    rec.outcome, rec.cycle, rec.batched = p.outcome.name, p.cycle, p.batched
    rec.nodes_evaluated, rec.nodes_feasible = p.nodes_evaluated, p.nodes_feasible
    env.observer.cycle(rec)
    return p


def _scheduling_cycle(
    env: CycleEnv, cursor: CycleCursor, pod: Pod, dry_run: bool, rec: CycleRecord | None,
    member: AssumeLog | None = None,
) -> Placement:
    """kube's schedulingCycle around schedulePod: the pod's placement, assumed unless dry_run;
    the batch state and the observer hear of it here, once."""
    snap = env.snapshot
    existing = snap.pods.get(pod.uid)
    if existing is not None:
        # a retried request: the pod is already bound or assumed here; never assume twice
        return Placement(
            pod.uid, existing.node_name, Outcome.SCHEDULED, message="already placed",
            volume_bindings=snap.storage.bindings(pod.uid) if pod.volumes else (),
        )
    if member is not None and pod.nominated_node_name:
        # kube's pod group cycle after a group preemption runs members whose pod objects
        # lack the nominatedNodeName it patched (requeued in flight): no nominated node
        # first (docs/differences.md); the nomination still counts for the other pods
        pod = dataclasses.replace(pod, nominated_node_name="", shape=None)
    nominated_rec = snap.nominated.get(pod.uid)
    if nominated_rec is not None and not pod.nominated_node_name and member is None:
        # a pod we nominated (preemption) sent again: as kube's pod, it carries its
        # nomination, so it tries that node first (and is never batched)
        pod = dataclasses.replace(
            pod, nominated_node_name=nominated_rec.nominated_node_name, shape=None
        )
    cursor.cycle += 1
    cycle = cursor.cycle
    fw = env.frameworks.get(pod.scheduler_name)
    if fw is None:
        return Placement(
            pod.uid, "", Outcome.REJECTED, cycle=cycle,
            message=f"no profile serves schedulerName {pod.scheduler_name!r}",
        )
    if pod.terminating:
        # kube's skipPodSchedule: a pod being deleted is popped (the cycle counted) and
        # dropped, with this FailedScheduling event and no status
        return Placement(pod.uid, "", Outcome.UNSCHEDULABLE, deleting_pod_message(pod), cycle=cycle)
    started = time.perf_counter() if rec is not None else 0.0
    info = cursor.last_info = pod_info(pod, cursor.last_info)
    assumes = member is not None or not dry_run
    if pod.uid in snap.nominated and assumes:
        # placing it ends its nomination, which other pods' two-pass filters counted
        env.batches.invalidate()
    nominated = nominated_pods(fw, snap, info) if snap.nominated else None
    n = len(snap.order)
    if n:
        # a full cycle leaves the index wrapped to the node count; a hint, standing in for
        # one, must too
        cursor.next_start_index %= n
    pct, to_find = env.sampling[fw.name]
    batch = env.batch[fw.name]
    r = batch.schedule(
        info, snap, cursor, to_find, nominated is not None,
        lambda: schedule_pod(env, cursor, fw, info, nominated, pct, to_find),
        (lambda row: assume(env, batch, fw, pod, info, row, member)) if assumes else None,
    )
    if r.row < 0:
        p = _unschedulable(env, cursor, fw, info, r, nominated, dry_run, cycle, member is None)
        if rec is not None:
            rec.result, rec.seconds = "unschedulable", time.perf_counter() - started
        return p
    if rec is not None:
        rec.result, rec.seconds = "scheduled", time.perf_counter() - started
    return Placement(
        pod.uid, snap.node(r.row).name, Outcome.SCHEDULED, batched=r.path is Path.HINT,
        cycle=cycle, score=r.score, nodes_evaluated=r.evaluated, nodes_feasible=r.feasible,
        volume_bindings=snap.storage.bindings(pod.uid) if pod.volumes and assumes else (),
    )


def assume(
    env: CycleEnv, batch: OpportunisticBatch, fw: Framework, pod: Pod, info: PodInfo | None,
    row: int, member: AssumeLog | None = None,
) -> None:
    """kube's assume and Reserve: the pod joins the snapshot on its node, its claims are
    bound in the snapshot's storage (VolumeBinding); every profile's batch hears of it
    (parked states journal the row). A group member's assume is logged, to take back."""
    snap = env.snapshot
    before = snap.generation
    if member is not None:
        member.before_assume(snap, pod.uid)
    snap.add_pod(pod, snap.node(row).name, assumed=True, info=info)
    if member is not None:
        member.assumed(pod.uid)
    for p in fw.reserve:  # the profile's Reserve plugins, in order
        p.reserve(snap.pods[pod.uid].info, snap, row)
    env.batches.pod_assumed(row, pod, batch, before, snap.generation)


def _unschedulable(
    env: CycleEnv, cursor: CycleCursor, fw: Framework, info: PodInfo, r: ScheduleResult,
    nominated: NominatedPods | None, dry_run: bool, cycle: int, run_post_filter: bool = True,
) -> Placement:
    """kube's FitError as a placement, with PostFilter's nomination and victims if any (not
    for a pod group's member: `run_post_filter` false); a plugin's Error instead ends the cycle with
    kube's error, no PostFilter run."""
    pod = info.pod
    diag = r.diagnosis
    if diag is None:
        return Placement(
            pod.uid, "", Outcome.UNSCHEDULABLE, cycle=cycle, message=NO_NODES_AVAILABLE,
            pre_filter_ended=True,
        )
    ended = r.cs is not None and r.cs.rejected is not None and (
        r.cs.rejected[2] is not Code.UNSCHEDULABLE
    )
    if r.error:
        return Placement(
            pod.uid, "", Outcome.UNSCHEDULABLE, message=r.error, cycle=cycle,
            nodes_evaluated=r.evaluated, error=True, pre_filter_ended=ended,
        )
    assert r.cs is not None
    post = (
        post_filter(env, cursor, fw, r.cs, info, diag, nominated, dry_run)
        if env.preemption and run_post_filter else None
    )
    message, reasons = fit_error(
        env.snapshot.num_nodes, diag, post.message if post is not None else ""
    )
    return Placement(
        pod.uid, "", Outcome.UNSCHEDULABLE, message=message,
        reasons=reasons, cycle=cycle, nodes_evaluated=r.evaluated, pre_filter_ended=ended,
        nominated_node_name=post.nominated_node if post is not None else "",
        victims=post.victims if post is not None else (),
    )


def post_filter(
    env: CycleEnv, cursor: CycleCursor, fw: Framework, cs: CycleState, info: PodInfo,
    diag: Diagnosis, nominated: NominatedPods | None, dry_run: bool,
) -> PreemptionResult | None:
    """DefaultPreemption, when the profile runs it. Not dry_run: the pod is nominated to
    the chosen node, which the pods after it see through the two-pass filter (kube's
    nominator); the victims stay until the client removes them. An eligible pod with no
    candidate loses an earlier nomination, as kube overrides it with none. A nomination the
    cluster has no room for (--max-nominated-pods-per-cluster) is not made, dry run or not:
    no node, no victims, and the message says why."""
    args = fw.profile.preemption
    if args is None:
        return None
    snap = env.snapshot
    res, refused = preempt_within_bound(
        snap, fw, cs, info, diag, args, nominated, cursor.rng, env.max_nominated_pods
    )
    if refused:
        rec = CURRENT.rec
        if not dry_run and rec is not None:
            rec.events.append(("nomination_refused", fw.name, ""))
        return res  # the pod held no nomination (has_room): none to drop
    if dry_run or not res.eligible:
        return res
    if res.nominated_node:
        pod = dataclasses.replace(
            info.pod, node_name="", nominated_node_name=res.nominated_node, shape=None
        )
        snap.add_nominated(pod)
    elif info.uid in snap.nominated:
        snap.remove_pod(info.uid)
    else:
        return res
    env.batches.invalidate()  # a nomination changes other pods' filters
    return res
