"""kube's preemption units with GenericWorkload on (framework/preemption/types.go, util.go):
a pod on its own, or every scheduled member of a PodGroup whose disruptionMode is `all`, as one
victim across nodes; its priority the PodGroup's for a member (GetPodPriority); the order
MoreImportantVictim sorts them in; and FilterVictimsWithPDBViolation over whole victims.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...framework.pod_group_members import PodGroupMembers
from ...framework.snapshot import PodRecord, Snapshot
from ...model import Pod, PodDisruptionBudget
from ...model_pod_group import DisruptionMode, PodGroup, pod_group_key
from ...plugins.default_preemption import spend_budgets

__all__ = [
    "DomainVictim",
    "cross_nodes_victims",
    "importance",
    "split_victims_by_pdb_violation",
    "victim_priority",
]

# victimRank: CompositePodGroup 3 (not modelled), PodGroup 2, Pod 1
_RANK_POD_GROUP = 2
_RANK_POD = 1


@dataclass(slots=True)
class DomainVictim:
    """One preemption unit: its pods (node order, or the group's members), its priority,
    its rank (a member of any pod group is PodGroupKeyType, even with disruptionMode single),
    the earliest start of its pods, and whether it is a whole group (IsGroup)."""

    records: list[PodRecord]
    priority: int
    rank: int
    earliest_start: int
    whole_group: bool = False

    @property
    def in_group(self) -> bool:
        """IsGroup: a whole group, or a member of one taken alone."""
        return self.rank == _RANK_POD_GROUP


def victim_priority(groups: Mapping[str, PodGroup], pod: Pod) -> int:
    """GetPodPriority with a PodGroup lister: a member's is its PodGroup's (0 when the group
    has none), a pod whose group is unknown keeps its own."""
    if pod.pod_group:
        pg = groups.get(pod_group_key(pod.namespace, pod.pod_group))
        if pg is not None:
            return pg.effective_priority
    return pod.priority


class _Clock:
    """GetPodStartTime's time.Now() for a pod not started: a later instant at each call, so
    such pods tie on nothing and the one met first in the domain counts as older."""

    def __init__(self, now: int) -> None:
        self._now = now

    def start(self, pod: Pod) -> int:
        if pod.start_time is not None:
            return pod.start_time
        self._now += 1
        return self._now


def cross_nodes_victims(
    snap: Snapshot, now: int, rows: Sequence[int] | None = None
) -> list[DomainVictim]:
    """getCrossNodesVictims over `rows` (default: the whole cluster, in the snapshot's
    order), each node's pods in its order; a `disruptionMode: all` group's members (on any
    node) once, where its first member is met. kube lists that group's members from a map (no
    fixed order); here they come in the order they joined."""
    groups = snap.pod_groups
    members = PodGroupMembers.for_snapshot(snap)
    clock = _Clock(now)
    seen: set[str] = set()
    out: list[DomainVictim] = []
    for row in snap.order.tolist() if rows is None else rows:
        for rec in snap.pods_on_row[row].values():
            pod = rec.pod
            key = pod_group_key(pod.namespace, pod.pod_group) if pod.pod_group else ""
            pg = groups.get(key) if key else None
            if pg is None or pg.disruption_mode is not DisruptionMode.ALL:
                rank = _RANK_POD_GROUP if key else _RANK_POD
                prio = victim_priority(groups, pod)
                out.append(DomainVictim([rec], prio, rank, clock.start(pod)))
                continue
            if key in seen:
                continue
            seen.add(key)
            recs = members.scheduled(key) or [rec]
            earliest = min(clock.start(r.pod) for r in recs)
            out.append(DomainVictim(recs, pg.effective_priority, _RANK_POD_GROUP, earliest,
                                    whole_group=True))
    return out


def importance(v: DomainVictim) -> tuple[int, int, int, int]:
    """Ascending order of this key is MoreImportantVictim's: higher priority, then higher
    rank, then more pods, then the earlier start. kube sorts with sort.Slice, an insertion
    sort (stable) up to 12 victims; a stable sort here gives its order there."""
    return (-v.priority, -v.rank, -len(v.records), v.earliest_start)


def split_victims_by_pdb_violation(
    victims: Sequence[DomainVictim], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[tuple[DomainVictim, int]], list[DomainVictim]]:
    """FilterVictimsWithPDBViolation: the victims with a pod whose eviction violates a budget
    (and how many such pods), and the others, each in the given order."""
    allowed = [b.disruptions_allowed for b in pdbs]
    violating: list[tuple[DomainVictim, int]] = []
    other: list[DomainVictim] = []
    for v in victims:
        count = sum(spend_budgets(r.pod, pdbs, allowed, True) for r in v.records)
        if count:
            violating.append((v, count))
        else:
            other.append(v)
    return violating, other
