"""Explain for a pod group (GenericWorkload): the group's cycle run on a fork of the cluster,
each member explained node by node just before its cycle, with the members tried before it
that fit assumed where the cycle put them; the group's outcome and each member's answer as
Schedule would give them. The cluster is not touched: no cycle of its own, no batch state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Pod
from .explain import Explanation, explain
from .pod_group_cycle import schedule_pod_group
from .pod_group_result import PodGroupResult
from .schedule_one import Placement
from .simulate.fork import ClusterFork

__all__ = ["MemberExplanation", "GroupExplanation", "explain_group"]


@dataclass(frozen=True, slots=True)
class MemberExplanation:
    """One member: its placement in the group's cycle and, if the cycle tried it, every
    node's verdict at that moment (None: the cycle stopped before it, or it was placed
    already)."""

    placement: Placement
    explanation: Explanation | None


@dataclass(frozen=True, slots=True)
class GroupExplanation:
    members: tuple[MemberExplanation, ...]
    result: PodGroupResult | None


def explain_group(fork: ClusterFork, members: Sequence[Pod]) -> GroupExplanation:
    """`members` (one group's, in the order the cycle tries them) on `fork`, which this
    spends: a dry run of the group's cycle, each member explained before its cycle."""
    seen: dict[str, Explanation] = {}

    def before(pod: Pod) -> None:
        seen[pod.uid] = explain(fork.env, pod, post_filter=False)

    placements = schedule_pod_group(fork.env, fork.cursor, members, True, before)
    return GroupExplanation(
        tuple(MemberExplanation(p, seen.get(p.pod_uid)) for p in placements),
        placements[0].group if placements else None,
    )
