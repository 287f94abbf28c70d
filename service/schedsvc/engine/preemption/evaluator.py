"""kube's preemption Evaluator (framework/preemption) driving DefaultPreemption for one pod
that fits nowhere: eligibility, the potential nodes (status Unschedulable, not
UnschedulableAndUnresolvable), DryRunPreemption from a random offset until enough candidates
are found, the pick, and the PostFilter message when there is nothing to nominate.

The evaluation is deterministic: nodes are visited in the snapshot's order from the offset
and the walk stops at the first node where kube's stop condition holds (at least one
candidate without PDB violations and `numCandidates` candidates in all), where kube's
goroutines stop at whichever node they happen to finish.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ...framework import Code, Rows
from ...framework.feature import Features
from ...framework.podinfo import PodInfo
from ...framework.snapshot import IntArray, PodRecord, Snapshot
from ...model import PodDisruptionBudget
from ...plugins.default_preemption import (
    NOT_HELPFUL_REASON,
    DefaultPreemptionArgs,
    eligible_to_preempt,
    num_candidates,
    pick_one_node,
)
from ..filtering import Diagnosis, NominatedPods
from ..runtime import CycleState, Framework
from .domain_victims import victim_priority
from .nominated import nominated_extra_for
from .select_grouped import grouped_applies, select_grouped
from .select_victims import (
    NodeOutcomes,
    cut,
    resource_only_applies,
    select_general,
    select_resource_only,
)
from .victim_table import VictimTable

__all__ = [
    "Victim", "Candidate", "PreemptionResult", "placement_message", "preempt", "potential_rows",
]

# SelectVictimsOnNode node by node: select_general's signature
Select = Callable[
    [Snapshot, Framework, PodInfo, Rows, NominatedPods | None, Sequence[PodDisruptionBudget],
     int, Callable[[NodeOutcomes, int], bool]],
    NodeOutcomes,
]

# rows evaluated per vectorized block beyond the candidates still wanted
_MIN_BLOCK = 256


@dataclass(frozen=True, slots=True)
class Victim:
    uid: str
    namespace: str
    name: str
    priority: int


@dataclass(frozen=True, slots=True)
class Candidate:
    node_name: str
    victims: tuple[Victim, ...]  # kube's order
    num_pdb_violations: int


@dataclass(frozen=True, slots=True)
class PreemptionResult:
    """`message` is the PostFilter message kube appends to the FitError ("preemption: ...");
    when a node was nominated, v1.37's "preemption: found a potential placement for pod on
    node N, preempting K victims", and empty under v1.35. `candidates` are filled only when
    asked for."""

    eligible: bool
    message: str
    nominated_node: str = ""
    victims: tuple[Victim, ...] = ()
    candidates: tuple[Candidate, ...] = ()


def _victim(rec: PodRecord) -> Victim:
    p = rec.pod
    return Victim(p.uid, p.namespace, p.name, p.priority)


def potential_rows(diag: Diagnosis, snap: Snapshot) -> Rows:
    """nodesWherePreemptionMightHelp: rows whose status is Unschedulable, in visiting order."""
    mask = np.zeros(snap.capacity, dtype=np.bool_)
    for rej in diag.rejections:
        if rej.code != Code.UNSCHEDULABLE:
            continue
        mask[rej.rows] = True
        if rej.unresolvable is not None:
            mask[rej.unresolvable] = False
    order = snap.order
    out: Rows = order[mask[order]]
    return out


def _fit_error(num_all: int, reasons: dict[int, list[str]]) -> str:
    """FitError.Error() over the dry run's statuses; every other node is "not helpful"."""
    counts: dict[str, int] = {}
    for rs in reasons.values():
        for r in rs:
            counts[r] = counts.get(r, 0) + 1
    absent = num_all - len(reasons)
    if absent > 0:
        counts[NOT_HELPFUL_REASON] = counts.get(NOT_HELPFUL_REASON, 0) + absent
    msg = f"0/{num_all} nodes are available:"
    parts = sorted(f"{v} {k}" for k, v in counts.items())
    if parts:
        msg += " " + ", ".join(parts) + "."
    return msg


def preempt(
    snap: Snapshot, fw: Framework, cs: CycleState, info: PodInfo, diag: Diagnosis,
    args: DefaultPreemptionArgs, nominated: NominatedPods | None,
    rng: np.random.Generator | None, all_candidates: bool = False,
) -> PreemptionResult:
    """DefaultPreemption's PostFilter as a dry run: nothing changes in the snapshot.

    `rng` draws kube's random offset; None (Explain) starts at the first node and evaluates
    every potential node, as does `all_candidates`, which also returns every candidate."""
    pod = info.pod
    potential = potential_rows(diag, snap)
    nominated_pods = None
    nominated_unresolvable = True
    if pod.nominated_node_name:
        row = snap.row_of(pod.nominated_node_name)
        if row is not None:
            nominated_pods = [rec.pod for rec in snap.pods_on_row[row].values()]
            nominated_unresolvable = not bool(np.isin(row, potential))
    grouped = fw.generic_workload and grouped_applies(snap)
    groups = snap.pod_groups
    ok, why = eligible_to_preempt(
        pod, nominated_unresolvable, nominated_pods,
        (lambda p: victim_priority(groups, p)) if grouped else None,
    )
    if not ok:
        return PreemptionResult(False, "preemption: " + why)
    num_all = snap.num_nodes
    if len(potential) == 0:
        return PreemptionResult(True, "preemption: " + _fit_error(num_all, {}))
    exhaustive = rng is None or all_candidates
    offset = int(rng.integers(len(potential))) if rng is not None else 0
    wanted = len(potential) if exhaustive else num_candidates(args, len(potential))
    visit = np.concatenate((potential[offset:], potential[:offset])) if offset else potential
    now = time.time_ns()
    pdbs = list(snap.pdbs.values())
    width = VictimTable.for_snapshot(snap).resource_width()
    extra, extra_terms = nominated_extra_for(snap, info, width)
    if grouped:
        out = _walk_general(snap, fw, info, visit, nominated, pdbs, now, wanted, select_grouped)
    elif cs.rejected is None and not extra_terms and resource_only_applies(fw, cs):
        out = _walk_vectorized(snap, fw, cs, info, visit, extra, pdbs, now, wanted)
    else:
        out = _walk_general(snap, fw, info, visit, nominated, pdbs, now, wanted)
    cand = np.flatnonzero(out.candidate)
    if len(cand) == 0:
        return PreemptionResult(True, "preemption: " + _fit_error(num_all, out.reasons))
    # kube's candidate list: those without PDB violations first, then the others
    cand = np.concatenate(
        (cand[out.num_pdb_violations[cand] == 0], cand[out.num_pdb_violations[cand] > 0])
    )
    pick = int(cand[pick_one_node(
        out.num_pdb_violations[cand], out.highest_priority[cand], out.priority_sum[cand],
        out.num_victims[cand], out.earliest_start[cand],
    )]) if len(cand) > 1 else int(cand[0])
    candidates = _candidates(snap, out, cand) if all_candidates else ()
    node = snap.node(int(out.rows[pick])).name
    victims = tuple(_victim(r) for r in out.victims_of(pick))
    return PreemptionResult(
        True, placement_message(fw.profile.features, node, len(victims)), node, victims,
        candidates,
    )


def _candidates(snap: Snapshot, out: NodeOutcomes, cand: Rows) -> tuple[Candidate, ...]:
    """Every candidate (Explain), in kube's candidate-list order."""
    return tuple(
        Candidate(
            snap.node(int(out.rows[i])).name,
            tuple(_victim(r) for r in out.victims_of(i)),
            int(out.num_pdb_violations[i]),
        )
        for i in cand.tolist()
    )


def placement_message(features: Features, node: str, num_victims: int) -> str:
    """Evaluator.Preempt's Success message after a nomination, as DefaultPreemption's
    PostFilter prefixes it (v1.37; v1.35 returned none). kube counts victims as is: "1
    victims"."""
    if not features.preemption_reports_placement:
        return ""
    return (
        f"preemption: found a potential placement for pod on node {node}, "
        f"preempting {num_victims} victims"
    )


def _stop_index(out: NodeOutcomes, wanted: int, found: int, found_clean: int) -> int | None:
    """The first node (index into `out`) after which kube stops, given what earlier blocks
    found: at least one candidate without PDB violations and `wanted` candidates."""
    total = found + np.cumsum(out.candidate)
    clean = found_clean + np.cumsum(out.candidate & (out.num_pdb_violations == 0))
    hit = np.flatnonzero((clean > 0) & (total >= wanted))
    return int(hit[0]) if len(hit) else None


def _walk_vectorized(
    snap: Snapshot, fw: Framework, cs: CycleState, info: PodInfo, visit: Rows,
    extra: dict[int, IntArray], pdbs: list[PodDisruptionBudget], now: int, wanted: int,
) -> NodeOutcomes:
    parts: list[NodeOutcomes] = []
    found = found_clean = 0
    start = 0
    while start < len(visit):
        size = max(wanted - found, _MIN_BLOCK)
        block = visit[start : start + size]
        out = select_resource_only(snap, fw, cs, info, block, extra, pdbs, now)
        stop = _stop_index(out, wanted, found, found_clean)
        if stop is not None:
            parts.append(cut(out, stop + 1))
            break
        parts.append(out)
        found += int(out.candidate.sum())
        found_clean += int((out.candidate & (out.num_pdb_violations == 0)).sum())
        start += len(block)
    return _concat(parts)


def _walk_general(
    snap: Snapshot, fw: Framework, info: PodInfo, visit: Rows,
    nominated: NominatedPods | None, pdbs: list[PodDisruptionBudget], now: int, wanted: int,
    select: Select = select_general,
) -> NodeOutcomes:
    """Node by node until kube's stop condition; `select`: select_general, or select_grouped
    when victims are GenericWorkload's DomainVictims."""
    found = [0, 0]  # candidates, candidates without PDB violations

    def stop(out: NodeOutcomes, i: int) -> bool:
        if out.candidate[i]:
            found[0] += 1
            found[1] += int(out.num_pdb_violations[i] == 0)
        return found[1] > 0 and found[0] >= wanted

    return select(snap, fw, info, visit, nominated, pdbs, now, stop)


def _concat(parts: list[NodeOutcomes]) -> NodeOutcomes:
    if len(parts) == 1:
        return parts[0]
    reasons: dict[int, list[str]] = {}
    offsets = np.cumsum([0] + [len(p.rows) for p in parts])
    for p in parts:
        reasons.update(p.reasons)

    def victims_of(i: int) -> list[PodRecord]:
        k = int(np.searchsorted(offsets, i, side="right")) - 1
        return parts[k].victims_of(i - int(offsets[k]))

    return NodeOutcomes(
        np.concatenate([p.rows for p in parts]),
        np.concatenate([p.candidate for p in parts]),
        np.concatenate([p.num_pdb_violations for p in parts]),
        np.concatenate([p.highest_priority for p in parts]),
        np.concatenate([p.priority_sum for p in parts]),
        np.concatenate([p.num_victims for p in parts]),
        np.concatenate([p.earliest_start for p in parts]),
        reasons, victims_of,
    )
