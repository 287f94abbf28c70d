"""kube's schedulePod and its stages (schedule_one.go): PreFilter, the nominated node,
find_nodes_that_fit, prioritize_nodes and select_host; the result is a value (a
ScheduleResult) that the batch state keeps what it needs of and schedule_one acts on (assume,
PostFilter). A batching hint, when there is one, stands for this whole function (the batch
state wraps it: batching/batch.py).

Explain runs the same stages (pre_filter, the filter stage over every node, prioritize_nodes).
"""

from __future__ import annotations

import time

import numpy as np

from ..framework import Code, Rows
from ..framework.podinfo import PodInfo
from ..framework.snapshot import Snapshot
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
from .sampling import (
    MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND,
    MIN_FEASIBLE_NODES_TO_FIND,
    num_feasible_nodes_to_find,
)
from .schedule_result import Path, ScheduleResult
from .select_host import select_best

__all__ = [
    "MIN_FEASIBLE_NODES_TO_FIND",
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "num_feasible_nodes_to_find",
    "PLUGIN_METRICS_SAMPLE_EVERY",
    "Path",
    "ScheduleResult",
    "schedule_pod",
    "pre_filter",
    "find_nodes_that_fit",
    "prioritize_nodes",
    "select_host",
]

# kube records per-plugin durations in 10% of cycles (pluginMetricsSamplePercent); we take
# every 10th cycle, deterministic and as cheap
PLUGIN_METRICS_SAMPLE_EVERY = 10


def schedule_pod(
    env: CycleEnv, cursor: CycleCursor, fw: Framework, info: PodInfo,
    nominated: NominatedPods | None, pct: int, to_find: int,
) -> ScheduleResult:
    """kube's schedulePod. `to_find`: numFeasibleNodesToFind of every node at `pct`, worked
    out by schedule_one (a PreFilterResult's narrower set is counted here). Moves the
    cursor's start index past the nodes the filter stage visited."""
    snap = env.snapshot
    if snap.num_nodes == 0:
        return ScheduleResult(Path.FAILED)
    record = cursor.cycle % PLUGIN_METRICS_SAMPLE_EVERY == 0
    cs, rejection = pre_filter(fw, info, snap, record)
    if rejection is not None:
        assert cs.rejected is not None
        error = cs.rejected[0] if cs.rejected[2] is Code.ERROR else ""
        return ScheduleResult(Path.FAILED, diagnosis=rejection, cs=cs, error=error)
    if info.pod.nominated_node_name:
        row = evaluate_nominated_node(fw, cs, info, snap, nominated)
        if row is not None:
            return ScheduleResult(Path.UNSCORED, row, 0, 1, 1)
    start_row = int(snap.order[cursor.next_start_index])
    fo, to_find = find_nodes_that_fit(env, cursor, fw, cs, info, pct, to_find, nominated)
    feasible = fo.feasible
    if len(feasible) == 0 or fo.error:
        return ScheduleResult(
            Path.FAILED, evaluated=fo.processed, diagnosis=fo.diagnosis, cs=cs, error=fo.error
        )
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
    return ScheduleResult(
        path, row, best, fo.processed, len(feasible), cs=cs, feasible_rows=feasible, sr=sr,
        start_row=start_row, complete=to_find >= snap.num_nodes,
    )


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
    pct: int, to_find: int, nominated: NominatedPods | None,
) -> tuple[FilterOutcome, int]:
    """kube's findNodesThatFitPod after PreFilter: the filter stage from the cursor's start
    index, which moves past the nodes it visited, until it has `to_find` (of a PreFilterResult's
    nodes, when there is one)."""
    snap = env.snapshot
    num_all = snap.num_nodes
    if cs.allowed is not None:
        # kube counts the nodes a PreFilterResult left, and wants one node when none scores
        candidates = sum(1 for name in cs.allowed if name in snap.index)
        to_find = num_feasible_nodes_to_find(candidates, pct) if fw.score else 1
    started = time.perf_counter()
    fo = find_nodes_that_pass_filters(
        fw, cs, info, snap, cursor.next_start_index, to_find, env.executor, env.parallelism,
        nominated,
    )
    status = "Error" if fo.error else "Success" if len(fo.feasible) else "Unschedulable"
    ended = time.perf_counter()
    rec = CURRENT.rec
    if rec is not None:
        rec.points.append(("Filter", status, ended - started, ended))
    elif env.records:
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
