"""kube's schedulePod and its stages (schedule_one.go): a batching hint, or PreFilter, the
nominated node, find_nodes_that_fit, prioritize_nodes and select_host; the result is a value
that schedule_one records and acts on (assume, PostFilter).

Explain runs the same stages (pre_filter, the filter stage over every node, prioritize_nodes).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import Enum, auto

import numpy as np

from ..framework import Rows
from ..framework.podinfo import PodInfo
from ..framework.snapshot import Snapshot
from .batching import FlushReason, OpportunisticBatch
from .cycle_context import CURRENT, CycleCursor
from .cycle_env import CycleEnv
from .filtering import (
    Diagnosis,
    FilterOutcome,
    NominatedPods,
    filter_block,
    find_nodes_that_pass_filters,
    prefilter_rejection,
)
from .runtime import CycleState, Framework, ScoreResult
from .select_host import select_best

__all__ = [
    "MIN_FEASIBLE_NODES_TO_FIND",
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "num_feasible_nodes_to_find",
    "PLUGIN_METRICS_SAMPLE_EVERY",
    "Path",
    "Scored",
    "ScheduleResult",
    "schedule_pod",
    "pre_filter",
    "find_nodes_that_fit",
    "prioritize_nodes",
    "select_host",
]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5

# kube records per-plugin durations in 10% of cycles (pluginMetricsSamplePercent); we take
# every 10th cycle, deterministic and as cheap
PLUGIN_METRICS_SAMPLE_EVERY = 10


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int) -> int:
    """kube's numFeasibleNodesToFind; percentage 0 means adaptive (50 - nodes/125, floor 5)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        if percentage < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            percentage = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num = num_all_nodes * percentage // 100
    if num < MIN_FEASIBLE_NODES_TO_FIND:
        return MIN_FEASIBLE_NODES_TO_FIND
    return num


class Path(Enum):
    """How the cycle reached its result: what the batch state hears of it."""

    HINT = auto()  # a batching hint stood for the cycle
    FAILED = auto()  # no node: none at all (no diagnosis), PreFilter rejected, nothing fits
    UNSCORED = auto()  # one feasible node, or the nominated node: nothing sorted to keep
    SCORED = auto()  # a full scored cycle: its state may serve the next pod
    NARROWED = auto()  # scored, but PreFilter narrowed the nodes (pod_not_batchable)
    NOMINATED = auto()  # scored, nominated pods counted for this pod (nominated_pods)


@dataclass(slots=True)
class Scored:
    """What the batch state keeps of a scored cycle."""

    feasible: Rows  # in visiting order
    sr: ScoreResult
    start_row: int  # the first row the filter stage visited
    complete: bool  # it visited every node (no percentageOfNodesToScore cut)


@dataclass(slots=True)
class ScheduleResult:
    """kube's ScheduleResult (the suggested host, nodes evaluated, nodes feasible), and what a
    failed cycle's FitError and PostFilter need."""

    path: Path
    row: int = -1  # the suggested host; -1 when nothing fits
    score: int = 0
    evaluated: int = 0
    feasible: int = 0
    diagnosis: Diagnosis | None = None  # FAILED with nodes: why
    cs: CycleState | None = None
    scored: Scored | None = None  # SCORED, NARROWED, NOMINATED


def schedule_pod(
    env: CycleEnv, cursor: CycleCursor, fw: Framework, batch: OpportunisticBatch,
    info: PodInfo, nominated: NominatedPods | None,
) -> ScheduleResult:
    """kube's schedulePod, preceded by the batching hint that may stand for it. Moves the
    cursor's start index as the cycle (or the cycle a hint stands for) moves it."""
    snap = env.snapshot
    n = len(snap.order)
    if n:
        # a full cycle leaves the index wrapped to the node count; a hint, standing in for
        # one, must too
        cursor.next_start_index %= n
    pct = fw.profile.percentage_of_nodes_to_score
    if pct is None:
        pct = env.percentage_of_nodes_to_score
    hinted = _hint(snap, cursor, fw, batch, info, nominated, pct)
    if hinted is not None:
        return hinted
    if snap.num_nodes == 0:
        return ScheduleResult(Path.FAILED)
    record = cursor.cycle % PLUGIN_METRICS_SAMPLE_EVERY == 0
    cs, rejection = pre_filter(fw, info, snap, record)
    if rejection is not None:
        return ScheduleResult(Path.FAILED, diagnosis=rejection, cs=cs)
    if info.pod.nominated_node_name:
        row = evaluate_nominated_node(fw, cs, info, snap, nominated)
        if row is not None:
            return ScheduleResult(Path.UNSCORED, row, 0, 1, 1)
    start_row = int(snap.order[cursor.next_start_index])
    fo, to_find = find_nodes_that_fit(env, cursor, fw, cs, info, pct, nominated)
    feasible = fo.feasible
    if len(feasible) == 0:
        return ScheduleResult(Path.FAILED, evaluated=fo.processed, diagnosis=fo.diagnosis, cs=cs)
    if len(feasible) == 1:
        return ScheduleResult(Path.UNSCORED, int(feasible[0]), 0, fo.processed, 1)
    sr = prioritize_nodes(fw, info, snap, feasible, record)
    row, best = select_host(feasible, sr, cursor.rng)
    # narrowed pods visit a rotation of their own; nominated pods counted for this pod (by
    # its priority) may not count for the next one: neither cycle serves a hint
    if nominated is not None:
        path = Path.NOMINATED
    elif cs.allowed is not None:
        path = Path.NARROWED
    else:
        path = Path.SCORED
    scored = Scored(feasible, sr, start_row, to_find >= snap.num_nodes)
    return ScheduleResult(path, row, best, fo.processed, len(feasible), cs=cs, scored=scored)


def _hint(
    snap: Snapshot, cursor: CycleCursor, fw: Framework, batch: OpportunisticBatch,
    info: PodInfo, nominated: NominatedPods | None, pct: int,
) -> ScheduleResult | None:
    """The batch state's hint for the pod (kube's GetNodeHint), if it gives one."""
    if nominated is not None:
        # nominated pods change feasibility through a second pass the cache does not model
        batch.skipped(FlushReason.NOMINATED_PODS)
        return None
    n = len(snap.order)
    if n == 0:
        return None
    hint = batch.get_node_hint(
        info, snap, cursor.cycle, cursor.rng, cursor.next_start_index,
        num_feasible_nodes_to_find(n, pct) if fw.score else 1,
    )
    if hint is None:
        return None
    row, score, processed = hint
    # the start index moves as the (sampled) cycle the hint stands for moves it
    cursor.next_start_index = (cursor.next_start_index + processed) % n
    return ScheduleResult(Path.HINT, row, score, 1, 1)


def pre_filter(
    fw: Framework, info: PodInfo, snap: Snapshot, record: bool = False
) -> tuple[CycleState, Diagnosis | None]:
    """PreFilter, and the diagnosis of every node when it rejects the pod."""
    cs = fw.run_pre_filter(info, snap, record)
    return cs, prefilter_rejection(cs, snap) if cs.rejected is not None else None


def evaluate_nominated_node(
    fw: Framework, cs: CycleState, info: PodInfo, snap: Snapshot,
    nominated: NominatedPods | None,
) -> int | None:
    """kube's evaluateNominatedNode: the pod's nominated node's row if it passes the filters
    (and any PreFilterResult); None sends the pod through the whole filter stage."""
    name = info.pod.nominated_node_name
    row = snap.row_of(name)
    if row is None or (cs.allowed is not None and name not in cs.allowed):
        return None
    rows = np.array([row], dtype=np.intp)
    ok = rows[filter_block(fw, cs, info, snap, rows, nominated).feasible]
    return int(ok[0]) if len(ok) else None


def find_nodes_that_fit(
    env: CycleEnv, cursor: CycleCursor, fw: Framework, cs: CycleState, info: PodInfo,
    pct: int, nominated: NominatedPods | None,
) -> tuple[FilterOutcome, int]:
    """kube's findNodesThatFitPod after PreFilter: the filter stage from the cursor's start
    index, which moves past the nodes it visited; with numFeasibleNodesToFind."""
    snap = env.snapshot
    num_all = snap.num_nodes
    # kube counts the nodes a PreFilterResult left, and wants one node when none scores
    candidates = num_all
    if cs.allowed is not None:
        candidates = sum(1 for name in cs.allowed if name in snap.index)
    to_find = num_feasible_nodes_to_find(candidates, pct) if fw.score else 1
    started = time.perf_counter()
    fo = find_nodes_that_pass_filters(
        fw, cs, info, snap, cursor.next_start_index, to_find, env.executor, env.parallelism,
        nominated,
    )
    status = "Success" if len(fo.feasible) else "Unschedulable"
    ended = time.perf_counter()
    rec = CURRENT.rec
    if rec is not None:
        rec.points.append(("Filter", status, ended - started, ended))
    else:
        env.observer.extension_point(fw.name, "Filter", status, ended - started)
    cursor.next_start_index = (cursor.next_start_index + fo.processed) % num_all
    return fo, to_find


def prioritize_nodes(
    fw: Framework, info: PodInfo, snap: Snapshot, feasible: Rows, record: bool = False
) -> ScoreResult:
    """kube's prioritizeNodes: PreScore, Score and NormalizeScore over the feasible rows,
    weighted and summed per node (the framework runs them)."""
    return fw.run_score(info, snap, feasible, record)


def select_host(
    feasible: Rows, sr: ScoreResult, rng: np.random.Generator
) -> tuple[int, int]:
    """kube's selectHost: the chosen row (a seeded draw among the best) and its total."""
    pos, best = select_best(sr.totals, rng)
    return int(feasible[pos]), best
