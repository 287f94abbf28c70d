"""SelectVictimsOnNode as v1.37.2 runs it with GenericWorkload on, for a pod that is no pod
group's member (members preempt as a group: pod_group.py): the node's victims are kube's
DomainVictims (domain_victims.py), so a `disruptionMode: all` group on the node is one victim
with all its members (on any node), a member's priority is its PodGroup's, and a member is
more important than a plain pod of equal priority (MoreImportantVictim's rank). PDB-violating
victims are reprieved first, each whole.

Used only when the gate is on and some pod group has a member on a node; otherwise every
victim is a pod of its own at its own priority, which select_victims.py computes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ...framework import Rows
from ...framework.pod_group_members import PodGroupMembers
from ...framework.podinfo import PodInfo
from ...framework.snapshot import PodRecord, Snapshot
from ...model import PodDisruptionBudget
from ...plugins.default_preemption import NO_VICTIMS_REASON, priority_sum_term
from ..filtering import NominatedPods
from ..runtime import Framework, Rejection
from .domain_victims import (
    DomainVictim,
    cross_nodes_victims,
    importance,
    split_victims_by_pdb_violation,
)
from .mutations import SnapshotMutations
from .select_victims import NodeOutcomes, cut, empty_outcomes, fits_on_row, reasons_by_row

__all__ = ["grouped_applies", "select_grouped"]


def grouped_applies(snap: Snapshot) -> bool:
    """Some pod group has a member on a node (asked with GenericWorkload on only: the
    index is built the first time)."""
    return PodGroupMembers.for_snapshot(snap).any()


def select_grouped(
    snap: Snapshot, fw: Framework, info: PodInfo, rows: Rows,
    nominated: NominatedPods | None, pdbs: Sequence[PodDisruptionBudget], now: int,
    stop: Callable[[NodeOutcomes, int], bool],
) -> NodeOutcomes:
    """SelectVictimsOnNode one node at a time (as select_general), DomainVictims its units."""
    out = empty_outcomes(rows)
    lists: dict[int, list[PodRecord]] = {}
    out.victims_of = lambda i: lists.get(i, [])
    walked = len(rows)
    for i, row in enumerate(rows.tolist()):
        _one(snap, fw, info, row, nominated, pdbs, now, out, lists, i)
        if stop(out, i):
            walked = i + 1
            break
    return cut(out, walked)


def _one(
    snap: Snapshot, fw: Framework, info: PodInfo, row: int, nominated: NominatedPods | None,
    pdbs: Sequence[PodDisruptionBudget], now: int, out: NodeOutcomes,
    lists: dict[int, list[PodRecord]], i: int,
) -> None:
    potential = [
        v for v in cross_nodes_victims(snap, now, [row]) if v.priority < info.pod.priority
    ]
    if not potential:
        out.reasons[row] = [NO_VICTIMS_REASON]
        return
    one = np.array([row], dtype=np.intp)

    def fits() -> tuple[bool, list[Rejection]]:
        return fits_on_row(fw, info, snap, one, nominated)

    session = SnapshotMutations(snap, keep_generation=True)
    try:
        for v in potential:
            for rec in v.records:
                session.remove(rec)
        ok, rejections = fits()
        if not ok:
            reasons_by_row(rejections, out.reasons)
            return
        potential.sort(key=importance)
        violating, other = split_victims_by_pdb_violation(potential, pdbs)
        victims: list[DomainVictim] = []
        viol = 0
        for v, count in [*violating, *((v, 0) for v in other)]:
            for rec in v.records:
                session.add_back(rec)
            if not fits()[0]:
                for rec in v.records:
                    session.remove(rec)
                victims.append(v)
                viol += count
        if violating and other:
            victims.sort(key=importance)
        if victims:
            _summarize(out, lists, i, [r for v in victims for r in v.records], viol, now)
    finally:
        session.end()


def _summarize(
    out: NodeOutcomes, lists: dict[int, list[PodRecord]], i: int, pods: list[PodRecord],
    viol: int, now: int,
) -> None:
    """What pickOneNodeForPreemption reads of a candidate: its first victim pod's own
    priority (Pods[0], not the highest), the sum, the count, and the earliest start among
    the pods of the highest own priority (GetEarliestPodStartTime)."""
    out.candidate[i] = True
    lists[i] = pods
    out.num_pdb_violations[i] = viol
    prios = [r.pod.priority for r in pods]
    out.highest_priority[i] = prios[0]
    out.priority_sum[i] = sum(priority_sum_term(p) for p in prios)
    out.num_victims[i] = len(pods)
    top = max(prios)
    out.earliest_start[i] = min(
        r.pod.start_time if r.pod.start_time is not None else now
        for r in pods if r.pod.priority == top
    )
