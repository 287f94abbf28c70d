"""The scheduling cycle of one pod (kube's schedule_one.go): a batching hint or a full cycle of
PreFilter, the nominated node, find_nodes_that_fit, prioritize_nodes and select_host, then assume;
when nothing fits, the FitError and PostFilter (DefaultPreemption).

Every function runs under the cluster's lock, taken by `Cluster.schedule`.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..framework import Rows
from ..framework.podinfo import PodInfo, pod_info
from ..framework.snapshot import Snapshot
from ..model import Outcome, Pod
from .batch_types import NO_HINT, FlushReason
from .filtering import (
    Diagnosis,
    NominatedPods,
    filter_block,
    find_nodes_that_fit,
    fit_error_message,
    num_feasible_nodes_to_find,
    prefilter_rejection,
)
from .nomination_bound import has_room, refused
from .preemption import PreemptionResult, Victim, preempt
from .runtime import CycleState, Framework, ScoreResult
from .runtime_nominated import nominated_pods
from .select_host import best_positions, select_host

if TYPE_CHECKING:
    from .batch import OpportunisticBatch
    from .scheduler import Cluster

NO_NODES_AVAILABLE = "no nodes available to schedule pods"  # kube's ErrNoNodesAvailable

# kube records per-plugin durations in 10% of cycles (pluginMetricsSamplePercent); we take
# every 10th cycle, deterministic and as cheap
PLUGIN_METRICS_SAMPLE_EVERY = 10

__all__ = [
    "NO_NODES_AVAILABLE",
    "Placement",
    "schedule_one",
    "schedule_pod",
    "prioritize_nodes",
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


def schedule_one(c: Cluster, pod: Pod, dry_run: bool) -> Placement:
    """One attempt, framed by the observer's cycle hooks (metrics, a trace span)."""
    obs = c.engine.observer
    obs.cycle_started(pod.scheduler_name, pod.uid)
    try:
        p = schedule_pod(c, pod, dry_run)
    except BaseException:
        obs.cycle_finished(pod.scheduler_name, "ERROR", c.cycle, 0, 0, False)
        raise
    obs.cycle_finished(
        pod.scheduler_name, p.outcome.name, p.cycle, p.nodes_evaluated, p.nodes_feasible,
        p.batched,
    )
    return p


def schedule_pod(c: Cluster, pod: Pod, dry_run: bool) -> Placement:
    """kube's schedulingCycle around schedulePod: the pod's placement, assumed unless dry_run."""
    snap = c.snapshot
    existing = snap.pods.get(pod.uid)
    if existing is not None:
        # a retried request: the pod is already bound or assumed here; never assume twice
        return Placement(
            pod.uid, existing.node_name, Outcome.SCHEDULED, message="already placed"
        )
    nominated_rec = snap.nominated.get(pod.uid)
    if nominated_rec is not None and not pod.nominated_node_name:
        # a pod we nominated (preemption) sent again: as kube's pod, it carries its
        # nomination, so it tries that node first (and is never batched)
        pod = dataclasses.replace(
            pod, nominated_node_name=nominated_rec.nominated_node_name, shape=None
        )
    c.cycle += 1
    cycle = c.cycle
    fw = c.engine.frameworks.get(pod.scheduler_name)
    if fw is None:
        return Placement(
            pod.uid, "", Outcome.REJECTED, cycle=cycle,
            message=f"no profile serves schedulerName {pod.scheduler_name!r}",
        )
    obs = c.engine.observer
    started = time.perf_counter()
    info = c.last_info = pod_info(pod, c.last_info)
    batch = c.batches[fw.name]
    if pod.uid in snap.nominated and not dry_run:
        # placing it ends its nomination, which other pods' two-pass filters counted
        for b in c.batches.values():
            b.on_snapshot_change(None)
    order = snap.order
    if len(order):
        # a full cycle leaves the index wrapped to the node count; a hint, standing in for
        # one, must too
        c.next_start_index %= len(order)
    pct = fw.profile.percentage_of_nodes_to_score
    if pct is None:
        pct = c.engine.config.percentage_of_nodes_to_score
    nominated = nominated_pods(fw, snap, info) if snap.nominated else None
    # nominated pods change feasibility through a second pass the cache does not model
    if nominated is not None:
        batch.skipped(FlushReason.NOMINATED_PODS)
    hint = (
        batch.get_node_hint(
            info, snap, cycle, c.rng, c.next_start_index,
            num_feasible_nodes_to_find(len(order), pct) if fw.score else 1,
        )
        if nominated is None and len(order)
        else NO_HINT
    )
    if hint.row is not None:
        # the start index moves as the (sampled) cycle the hint stands for moves it
        c.next_start_index = (c.next_start_index + hint.processed) % len(order)
        node = snap.node(hint.row).name
        if not dry_run:
            assume(c, batch, pod, info, hint.row)
        batch.hint_used(cycle, hint.row, node)
        obs.scheduled(fw.name, "scheduled", time.perf_counter() - started)
        return Placement(
            pod.uid, node, Outcome.SCHEDULED, batched=True, cycle=cycle, score=hint.score,
            nodes_evaluated=1, nodes_feasible=1,
        )

    start_row = int(order[c.next_start_index]) if len(order) else 0
    record = cycle % PLUGIN_METRICS_SAMPLE_EVERY == 0
    num_all = snap.num_nodes
    if num_all == 0:
        batch.store_failure(cycle)
        obs.scheduled(fw.name, "unschedulable", time.perf_counter() - started)
        return Placement(
            pod.uid, "", Outcome.UNSCHEDULABLE, cycle=cycle,
            message=NO_NODES_AVAILABLE,
        )
    cs = fw.run_pre_filter(info, snap, record)
    if cs.rejected is not None:
        diag = prefilter_rejection(cs, snap)
        batch.store_failure(cycle)
        post = post_filter(c, fw, cs, info, diag, nominated, dry_run)
        obs.scheduled(fw.name, "unschedulable", time.perf_counter() - started)
        return unschedulable(pod, cycle, num_all, diag, 0, post)

    if pod.nominated_node_name:
        row = snap.row_of(pod.nominated_node_name)
        if row is not None and (cs.allowed is None or pod.nominated_node_name in cs.allowed):
            rows = np.array([row], dtype=np.intp)
            ok = rows[filter_block(fw, cs, info, snap, rows, nominated).feasible]
            if len(ok):
                row = int(ok[0])
                batch.store_unscored(cycle, row, snap.node(row).name)
                return place(c, pod, fw, cycle, row, 0, 1, 1, dry_run, started, info)

    # kube counts the nodes a PreFilterResult left, and wants one node when none scores
    candidates = num_all
    if cs.allowed is not None:
        candidates = sum(1 for name in cs.allowed if name in snap.index)
    to_find = num_feasible_nodes_to_find(candidates, pct) if fw.score else 1
    filter_started = time.perf_counter()
    fo = find_nodes_that_fit(
        fw, cs, info, snap, c.next_start_index, to_find,
        c.engine.executor, c.engine.config.parallelism, nominated,
    )
    obs.extension_point(
        fw.name, "Filter", "Success" if len(fo.feasible) else "Unschedulable",
        time.perf_counter() - filter_started,
    )
    if num_all:
        c.next_start_index = (c.next_start_index + fo.processed) % num_all
    feasible = fo.feasible
    if len(feasible) == 0:
        # a preempting pod is a failed cycle for the batch state too (kube's pod_failed)
        batch.store_failure(cycle)
        post = post_filter(c, fw, cs, info, fo.diagnosis, nominated, dry_run)
        obs.scheduled(fw.name, "unschedulable", time.perf_counter() - started)
        return unschedulable(
            pod, cycle, num_all, fo.diagnosis, fo.processed, post
        )
    if len(feasible) == 1:
        row = int(feasible[0])
        batch.store_unscored(cycle, row, snap.node(row).name)
        return place(c, pod, fw, cycle, row, 0, fo.processed, 1, dry_run, started, info)
    sr = prioritize_nodes(fw, info, snap, feasible, record)
    best, ties = best_positions(sr.totals)
    chosen = int(feasible[select_host(ties, c.rng)])
    if cs.allowed is None and nominated is None:
        batch.store(
            info, snap, cycle, chosen, snap.node(chosen).name, feasible, sr, start_row, cs,
            complete=to_find >= num_all,
        )
    else:
        # narrowed pods visit a rotation of their own; nominated pods counted for this pod
        # (by its priority) may not count for the next one: neither cycle serves a hint
        batch.store_unbatchable(
            cycle, chosen, snap.node(chosen).name,
            FlushReason.POD_NOT_BATCHABLE if nominated is None else FlushReason.NOMINATED_PODS,
        )
    return place(
        c, pod, fw, cycle, chosen, best, fo.processed, len(feasible), dry_run, started, info
    )


def prioritize_nodes(
    fw: Framework, info: PodInfo, snap: Snapshot, feasible: Rows, record: bool = False
) -> ScoreResult:
    """kube's prioritizeNodes: PreScore, Score and NormalizeScore over the feasible rows,
    weighted and summed per node (the framework runs them)."""
    return fw.run_score(info, snap, feasible, record)


def place(
    c: Cluster, pod: Pod, fw: Framework, cycle: int, row: int, score: int, evaluated: int,
    feasible: int, dry_run: bool, started: float, info: PodInfo | None = None,
) -> Placement:
    """kube's assume: the pod joins the snapshot on its node unless dry_run."""
    snap = c.snapshot
    node = snap.node(row).name
    if not dry_run:
        assume(c, c.batches[fw.name], pod, info, row)
    c.engine.observer.scheduled(fw.name, "scheduled", time.perf_counter() - started)
    return Placement(
        pod.uid, node, Outcome.SCHEDULED, cycle=cycle, score=score,
        nodes_evaluated=evaluated, nodes_feasible=feasible,
    )


def assume(
    c: Cluster, batch: OpportunisticBatch, pod: Pod, info: PodInfo | None, row: int
) -> None:
    """kube's assume: the pod joins the snapshot on its node; every profile's batch hears of
    it (parked states journal the row)."""
    snap = c.snapshot
    node = snap.node(row).name
    before = snap.generation
    snap.add_pod(pod, node, assumed=True, info=info)
    batch.assumed(before, snap.generation)
    for b in c.batches.values():
        b.pod_assumed(row, pod)


def unschedulable(
    pod: Pod, cycle: int, num_all: int, diag: Diagnosis, evaluated: int,
    post: PreemptionResult | None = None,
) -> Placement:
    """kube's FitError as a placement, with PostFilter's nomination and victims if any."""
    msg = fit_error_message(num_all, diag)
    if post is not None and post.message:
        msg += " " + post.message  # FitError.Error() appends the PostFilter message
    return Placement(
        pod.uid, "", Outcome.UNSCHEDULABLE, message=msg,
        reasons=diag.reason_counts(), cycle=cycle, nodes_evaluated=evaluated,
        nominated_node_name=post.nominated_node if post is not None else "",
        victims=post.victims if post is not None else (),
    )


def post_filter(
    c: Cluster, fw: Framework, cs: CycleState, info: PodInfo, diag: Diagnosis,
    nominated: NominatedPods | None, dry_run: bool,
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
    snap = c.snapshot
    res = preempt(snap, fw, cs, info, diag, args, nominated, c.rng)
    bound = c.engine.max_nominated_pods
    if res.nominated_node and not has_room(snap, info.uid, bound):
        if not dry_run:
            c.engine.observer.nomination_refused(fw.name)
        return refused(res, bound)  # the pod held no nomination (has_room): none to drop
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
    for b in c.batches.values():
        b.on_snapshot_change(None)  # a nomination changes other pods' filters
    return res
