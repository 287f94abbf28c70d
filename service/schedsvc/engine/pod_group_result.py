"""What a pod group cycle decided for its group (kube's podGroupAlgorithmResult as the API
sees it: the PodGroupInitiallyScheduled condition and each member's status), as a value the
server turns into ScheduleResponse.pod_groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..model_pod_group import PodGroupCondition
from .preemption import Victim

__all__ = ["GroupOutcome", "PodGroupResult"]


class GroupOutcome(Enum):
    SCHEDULED = 1  # PlacementFeasible held: the members that fit are placed
    UNSCHEDULABLE = 2  # nothing of the group stays placed
    WAITING_ON_PREEMPTION = 3  # workload-aware preemption found room; nothing placed
    GATED = 4  # GangScheduling's PreEnqueue holds the group: no cycle ran
    ERROR = 5  # kube's SchedulerError


@dataclass(slots=True)
class PodGroupResult:
    """One group's outcome in one request. `condition` is what kube would patch on the
    PodGroup (None: it writes nothing); `message` the group's status message."""

    pod_group: str  # "namespace/name"
    outcome: GroupOutcome
    condition: PodGroupCondition | None = None
    min_count: int = 0
    already_scheduled: int = 0
    scheduled: int = 0
    evaluated: int = 0
    victims: tuple[Victim, ...] = ()
    message: str = ""
