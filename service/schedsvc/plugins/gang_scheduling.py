"""GangScheduling (kube's plugins/gangscheduling, v1.37.2): the readiness of a pod group to be
scheduled (PreEnqueue) and the PlacementFeasible check run before and after each member of a
pod group cycle. Its Permit never waits here: a group that passes PlacementFeasible has all its
members assumed in the same cycle, which is what lets kube's Permit allow them at once.

Pure functions of counts, so kube's table tests port as they are (tests/plugins/).
"""

from __future__ import annotations

from enum import Enum

from ..model_pod_group import PodGroup

__all__ = ["NAME", "Feasibility", "placement_feasible", "pre_enqueue"]

NAME = "GangScheduling"


class Feasibility(Enum):
    """PlacementFeasible's status codes."""

    SUCCESS = "Success"
    WAIT = "Wait"  # minCount may still be met by the members not yet tried
    UNSCHEDULABLE = "Unschedulable"  # minCount can no longer be met


def placement_feasible(
    min_count: int, scheduled: int, remaining: int
) -> tuple[Feasibility, str]:
    """kube's PlacementFeasible over PlacementProgress: `scheduled` members placed (bound,
    assumed before this cycle, or placed in it), `remaining` members not yet tried."""
    if remaining + scheduled < min_count:
        return Feasibility.UNSCHEDULABLE, (
            f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, "
            f"{remaining} remaining"
        )
    if scheduled < min_count:
        return Feasibility.WAIT, (
            f"minCount ({min_count}) is not yet satisfied: {scheduled} scheduled, "
            f"{remaining} remaining"
        )
    return Feasibility.SUCCESS, ""


def pre_enqueue(pod_group_name: str, pg: PodGroup | None, all_pods: int) -> str:
    """kube's PreEnqueue (hierarchies disabled): "" when the group may be popped, else why it
    waits. `all_pods`: the members the scheduler knows of, pending, assumed and bound."""
    if pg is None:
        return f'waiting for pods\'s pod group "{pod_group_name}" to appear in scheduling queue'
    if pg.min_count is not None and all_pods < pg.min_count:
        return "waiting for minCount pods from a gang to appear in scheduling queue"
    return ""
