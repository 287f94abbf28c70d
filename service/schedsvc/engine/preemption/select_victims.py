"""SelectVictimsOnNode for a block of nodes: remove every lower-priority pod, check the pod
fits (nominated pods included), then reprieve the potential victims in order, PDB-violating
ones first, each by importance (priority, then start time), keeping a pod whenever the pod
still fits with it back.

Two ways, same answer:
- `select_resource_only`, vectorized over the block: when every filter a pod's removal could
  change is NodeResourcesFit (the others are static or skipped for this pod), fit is
  arithmetic on the request columns, and step k of the reprieve runs for all nodes at once.
- `select_general`, one node at a time: the victims really leave the snapshot, PreFilter and
  the filter chain run again (inter-pod affinity, topology spread, host ports), and the
  snapshot is restored exactly afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...framework import Rows
from ...framework.podinfo import PodInfo
from ...framework.snapshot import BoolArray, IntArray, PodRecord, Snapshot
from ...model import PODS, PodDisruptionBudget
from ...plugins.default_preemption import (
    NO_VICTIMS_REASON,
    importance_key,
    priority_sum_term,
    split_by_pdb_violation,
)
from ...plugins.node_resources_fit import FitState
from ..filtering import NominatedPods, filter_block
from ..runtime import CycleState, Framework, Rejection
from .victim_table import VictimTable

__all__ = [
    "NodeOutcomes",
    "empty_outcomes",
    "reasons_by_row",
    "fits_on_row",
    "resource_only_applies",
    "select_resource_only",
    "select_general",
    "cut",
]

_FIT = "NodeResourcesFit"
_MAX_INT32 = 2**31 - 1


@dataclass(slots=True)
class NodeOutcomes:
    """What SelectVictimsOnNode said for each node of a block, in the block's order.

    For a candidate: its victims (kube's order), PDB violations and the summaries the pick
    compares; for the others: the reasons of the failing status."""

    rows: Rows
    candidate: BoolArray
    num_pdb_violations: IntArray
    highest_priority: IntArray
    priority_sum: IntArray
    num_victims: IntArray
    earliest_start: IntArray
    reasons: dict[int, list[str]] = field(default_factory=dict)  # row -> reasons
    # the victims of node i (kube's order); built on demand: only the pick's are needed
    victims_of: Callable[[int], list[PodRecord]] = lambda i: []


def empty_outcomes(rows: Rows) -> NodeOutcomes:
    n = len(rows)
    z = np.zeros(n, dtype=np.int64)
    return NodeOutcomes(
        rows, np.zeros(n, dtype=np.bool_), z.copy(), z.copy(), z.copy(), z.copy(), z.copy(), {}
    )


def _summarize(
    out: NodeOutcomes, lists: dict[int, list[PodRecord]], i: int, victims: list[PodRecord],
    viol: int, now: int,
) -> None:
    out.candidate[i] = True
    lists[i] = victims
    out.num_pdb_violations[i] = viol
    prios = [v.pod.priority for v in victims]
    top = max(prios)
    out.highest_priority[i] = top
    out.priority_sum[i] = sum(priority_sum_term(p) for p in prios)
    out.num_victims[i] = len(victims)
    out.earliest_start[i] = min(
        importance_key(v.pod, now)[1] for v in victims if v.pod.priority == top
    )


def reasons_by_row(rejections: Sequence[Rejection], out: dict[int, list[str]]) -> None:
    for rej in rejections:
        for r in rej.rows.tolist():
            out.setdefault(r, [])
        for reason, rows in rej.reasons:
            for r in rows.tolist():
                out[r].append(reason)


def resource_only_applies(fw: Framework, cs: CycleState) -> bool:
    """Whether removing pods can change this pod's filter verdicts only through
    NodeResourcesFit: every other filter that runs for it reads no usage."""
    for p in fw.filter:
        if p.name == _FIT or p.name in cs.skip_filter:
            continue
        if not p.traits.filter_is_static:
            return False
    return True


@dataclass(slots=True)
class _Potential:
    """The potential victims of a block (kube: every lower-priority pod), as slots of the
    victim table grouped by node position, in reprieve order: PDB-violating first, each part
    by importance."""

    sel: Rows  # victim-table slots
    start: IntArray  # start times (`now` for a pod not started)
    prio: IntArray
    violating: BoolArray
    gpos: Rows  # each one's node position in the block
    counts: IntArray  # per node position: how many
    first: IntArray  # per node position: where its group starts in `sel`


def _potential_victims(
    table: VictimTable, snap: Snapshot, info: PodInfo, rows: Rows,
    pdbs: Sequence[PodDisruptionBudget], now: int, stop_early: bool,
) -> tuple[_Potential, Rows]:
    """The block's potential victims, and each row's position in the block (-1: not in it)."""
    n = len(rows)
    used_slots = table.used
    slot_row = table.row[:used_slots]
    pos_of = np.full(snap.capacity, -1, dtype=np.int64)
    pos_of[rows] = np.arange(n)
    pos = np.where(slot_row >= 0, pos_of[np.maximum(slot_row, 0)], -1)
    sel = np.flatnonzero((pos >= 0) & (table.priority[:used_slots] < info.pod.priority))
    start = np.where(table.started[sel], table.start[sel], now)
    prio = table.priority[sel]
    order = np.lexsort((table.seq[sel], start, -prio, pos[sel]))
    sel, start, prio = sel[order], start[order], prio[order]
    gpos = pos[sel]
    counts = np.bincount(gpos, minlength=n)
    first = np.cumsum(counts) - counts
    violating = np.zeros(len(sel), dtype=np.bool_)
    if pdbs and len(sel):
        # filterPodsWithPDBViolation per node: budgets are spent in importance order
        for i in np.flatnonzero(counts).tolist():
            a, b = int(first[i]), int(first[i] + counts[i])
            recs = [table.records[s] for s in sel[a:b].tolist()]
            viol, _ = split_by_pdb_violation([r.pod for r in recs if r], pdbs, stop_early)
            violating[[a + j for j in viol]] = True
        # reprieve order: violating first, each part by importance
        order = np.lexsort((table.seq[sel], start, -prio, ~violating, gpos))
        sel, start, prio, violating = sel[order], start[order], prio[order], violating[order]
    return _Potential(sel, start, prio, violating, gpos, counts, first), pos_of


def select_resource_only(
    snap: Snapshot, fw: Framework, cs: CycleState, info: PodInfo, rows: Rows,
    nominated_extra: dict[int, IntArray], pdbs: Sequence[PodDisruptionBudget], now: int,
) -> NodeOutcomes:
    """Vectorized SelectVictimsOnNode over `rows` (see the module docstring for when it
    applies). `nominated_extra`: per row, the summed request vector of the nominated pods of
    priority >= the pod's (their pass of the two-pass filter is the binding one here)."""
    out = empty_outcomes(rows)
    n = len(rows)
    if n == 0:
        return out
    table = VictimTable.for_snapshot(snap)
    width = table.resource_width()
    stop_early = fw.profile.features.pdb_violation_stops_early
    v, pos_of = _potential_victims(table, snap, info, rows, pdbs, now, stop_early)
    k = np.arange(len(v.sel)) - v.first[v.gpos]
    depth = int(v.counts.max()) if len(v.sel) else 0
    stack = np.zeros((n, depth, width), dtype=np.int64)
    stack[v.gpos, k] = table.requests[v.sel, :width]
    used = snap.requested[rows, :width] - stack.sum(axis=1)
    for row, vec in nominated_extra.items():
        i = int(pos_of[row])
        if i >= 0:
            used[i, : len(vec)] += vec
    has_victims = v.counts > 0
    for i in np.flatnonzero(~has_victims).tolist():
        out.reasons[int(rows[i])] = [NO_VICTIMS_REASON]
    check = np.flatnonzero(has_victims)
    if len(check) == 0:
        return out
    # the pod without every potential victim: the real filter chain on the lowered usage
    chk_rows = rows[check]
    saved = snap.requested[chk_rows].copy()
    try:
        snap.requested[chk_rows, :width] = used[check]
        res = fw.run_filter(cs, info, snap, chk_rows)
    finally:
        snap.requested[chk_rows] = saved
    reasons_by_row(res.rejections, out.reasons)
    fits = check[res.feasible]
    if len(fits) == 0:
        return out
    victim = _reprieve(snap, cs, rows, fits, used, stack, v.counts)
    _summarize_all(out, table, v, fits, victim)
    return out


def _reprieve(
    snap: Snapshot, cs: CycleState, rows: Rows, fits: Rows, used: IntArray, stack: IntArray,
    counts: IntArray,
) -> BoolArray:
    """Reprieve, step k for every node at once: per node of `fits` and step, whether that
    potential victim stays a victim (the pod does not fit with it back)."""
    depth, width = stack.shape[1], stack.shape[2]
    state = FitState.of(cs.states)
    pods_col = snap.resource_index[PODS]
    need = np.zeros(width, dtype=np.int64)
    cols = [pods_col] if state is not None else []
    if state is not None:
        need[pods_col] = 1
        for col, qty in state.requests_by_column():
            assert col is not None  # a resource no node has fails Filter on every node
            need[col] = qty
            cols.append(col)
    colv = np.array(sorted(set(cols)), dtype=np.intp)
    alloc = snap.allocatable[rows[fits]][:, colv]
    cur = used[fits][:, colv] + need[colv]
    victim = np.zeros((len(fits), depth), dtype=np.bool_)
    nf = counts[fits]
    for step in range(depth):
        present = step < nf
        add = stack[fits, step][:, colv]
        ok = present & (cur + add <= alloc).all(axis=1)
        cur[ok] += add[ok]
        victim[:, step] = present & ~ok
    return victim


def _summarize_all(
    out: NodeOutcomes, table: VictimTable, v: _Potential, fits: Rows, victim: BoolArray
) -> None:
    """The pick's summaries per node, from the victims' positions in `v.sel`; a node whose
    potential victims were all reprieved is no candidate (kube: "expected at least one")."""
    n, depth = len(out.rows), victim.shape[1]
    vpos = (v.first[fits][:, None] + np.arange(depth)[None, :])[victim]
    g = v.gpos[vpos]
    vprio, vstart = v.prio[vpos], v.start[vpos]
    out.num_victims = np.bincount(g, minlength=n).astype(np.int64)
    out.candidate = out.num_victims > 0
    out.num_pdb_violations = np.bincount(
        g, weights=v.violating[vpos], minlength=n
    ).astype(np.int64)
    highest = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(highest, g, vprio)
    out.highest_priority = np.where(out.candidate, highest, 0)
    np.add.at(out.priority_sum, g, vprio + (_MAX_INT32 + 1))
    top = vprio == highest[g]
    earliest = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(earliest, g[top], vstart[top])
    out.earliest_start = np.where(out.candidate, earliest, 0)
    # victims in kube's order: by importance (kube re-sorts when both PDB parts gave some),
    # equally important ones in reprieve order (violating first), as Go's sort.Slice leaves
    # them at kube's sizes (an insertion sort, stable, up to 12 victims); vpos is that order
    vorder = vpos[np.lexsort((vpos, vstart, -vprio, g))]
    bounds = np.searchsorted(v.gpos[vorder], np.arange(n + 1))
    records, sel = table.records, v.sel

    def victims_of(i: int) -> list[PodRecord]:
        slots = sel[vorder[bounds[i] : bounds[i + 1]]].tolist()
        return [r for s in slots if (r := records[s]) is not None]

    out.victims_of = victims_of


def select_general(
    snap: Snapshot, fw: Framework, info: PodInfo, rows: Rows,
    nominated: NominatedPods | None, pdbs: Sequence[PodDisruptionBudget], now: int,
    stop: Callable[[NodeOutcomes, int], bool] | None = None,
) -> NodeOutcomes:
    """SelectVictimsOnNode one node at a time on the snapshot itself; `stop(out, i)` after node
    i ends the walk early (kube's candidate count reached). Rows not reached stay
    non-candidates with no reasons; `out.rows` is cut to the rows walked."""
    out = empty_outcomes(rows)
    lists: dict[int, list[PodRecord]] = {}
    out.victims_of = lambda i: lists.get(i, [])
    walked = len(rows)
    for i, row in enumerate(rows.tolist()):
        _general_one(snap, fw, info, row, nominated, pdbs, now, out, lists, i)
        if stop is not None and stop(out, i):
            walked = i + 1
            break
    return cut(out, walked)


def cut(out: NodeOutcomes, n: int) -> NodeOutcomes:
    """The outcomes of the first `n` nodes only."""
    if n >= len(out.rows):
        return out
    kept = set(out.rows[:n].tolist())
    return NodeOutcomes(
        out.rows[:n], out.candidate[:n], out.num_pdb_violations[:n], out.highest_priority[:n],
        out.priority_sum[:n], out.num_victims[:n], out.earliest_start[:n],
        {r: v for r, v in out.reasons.items() if r in kept}, out.victims_of,
    )


def fits_on_row(
    fw: Framework, info: PodInfo, snap: Snapshot, one: Rows, nominated: NominatedPods | None
) -> tuple[bool, list[Rejection]]:
    """Whether the pod passes PreFilter and the filters on the single row `one` as the
    snapshot stands (a preemption's dry run, victims removed), and the rejections if not."""
    cs = fw.run_pre_filter(info, snap)
    if cs.rejected is not None:
        msg, plugins, code = cs.rejected
        return False, [Rejection(plugins[0], one, [(msg, one)], code)]
    res = filter_block(fw, cs, info, snap, one, nominated)
    return bool(res.feasible[0]), res.rejections


def _general_one(
    snap: Snapshot, fw: Framework, info: PodInfo, row: int, nominated: NominatedPods | None,
    pdbs: Sequence[PodDisruptionBudget], now: int, out: NodeOutcomes,
    lists: dict[int, list[PodRecord]], i: int,
) -> None:
    node = snap.node(row).name
    on_row = snap.pods_on_row[row]
    original = list(on_row)
    potential = [rec for rec in on_row.values() if rec.pod.priority < info.pod.priority]
    if not potential:
        out.reasons[row] = [NO_VICTIMS_REASON]
        return
    one = np.array([row], dtype=np.intp)

    def fits() -> tuple[bool, list[Rejection]]:
        return fits_on_row(fw, info, snap, one, nominated)

    generation = snap.generation
    out_of_snapshot: dict[str, PodRecord] = {}
    try:
        for rec in potential:
            snap.remove_pod(rec.pod.uid)
            out_of_snapshot[rec.pod.uid] = rec
        ok, rejections = fits()
        if not ok:
            reasons_by_row(rejections, out.reasons)
            return
        potential.sort(key=lambda r: importance_key(r.pod, now))  # stable: node order on ties
        early = fw.profile.features.pdb_violation_stops_early
        viol_idx, other_idx = split_by_pdb_violation([r.pod for r in potential], pdbs, early)
        victims: list[PodRecord] = []
        viol = 0
        for part, counts in ((viol_idx, True), (other_idx, False)):
            for j in part:
                rec = potential[j]
                snap.add_pod(rec.pod, node, assumed=rec.assumed, info=rec.info)
                del out_of_snapshot[rec.pod.uid]
                if not fits()[0]:
                    snap.remove_pod(rec.pod.uid)
                    out_of_snapshot[rec.pod.uid] = rec
                    victims.append(rec)
                    viol += counts
        if victims:
            victims.sort(key=lambda r: importance_key(r.pod, now))
            _summarize(out, lists, i, victims, viol, now)
    finally:
        for rec in out_of_snapshot.values():
            snap.add_pod(rec.pod, node, assumed=rec.assumed, info=rec.info)
        # the node's pods in their first order (kube's NodeInfo order), the snapshot as it was
        now_on_row = snap.pods_on_row[row]
        snap.pods_on_row[row] = {uid: now_on_row[uid] for uid in original}
        snap.generation = generation
