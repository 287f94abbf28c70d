"""A pod group cycle's status as kube's fwk.Status builds its messages (reasons joined with
", ", an error's text first) and what each member and the PodGroup are told of it
(submitPodGroupAlgorithmResult, updatePodGroupCondition).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ..model_pod_group import (
    POD_GROUP_INITIALLY_SCHEDULED,
    REASON_SCHEDULED,
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    PodGroup,
    PodGroupCondition,
)

__all__ = [
    "ERR_POD_GROUP_UNSCHEDULABLE",
    "GroupCode",
    "GroupStatus",
    "condition_to_write",
]

ERR_POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"  # kube's errPodGroupUnschedulable


class GroupCode(Enum):
    SUCCESS = "Success"
    UNSCHEDULABLE = "Unschedulable"
    ERROR = "Error"


@dataclass(slots=True)
class GroupStatus:
    """kube's *fwk.Status of the group: a code, reasons, and an error whose text Reasons()
    puts first."""

    code: GroupCode
    reasons: list[str] = field(default_factory=list)
    err: str = ""

    def message(self) -> str:
        return ", ".join([self.err, *self.reasons] if self.err else self.reasons)

    @classmethod
    def unschedulable(cls, *reasons: str) -> GroupStatus:
        """NewStatus(Unschedulable, reasons...).WithError(errPodGroupUnschedulable)."""
        return cls(GroupCode.UNSCHEDULABLE, list(reasons), ERR_POD_GROUP_UNSCHEDULABLE)

    @classmethod
    def error(cls, text: str) -> GroupStatus:
        return cls(GroupCode.ERROR, [], text)


def _condition(status: GroupStatus, generation: int) -> PodGroupCondition:
    if status.code is GroupCode.SUCCESS:
        return PodGroupCondition(
            POD_GROUP_INITIALLY_SCHEDULED, "True", REASON_SCHEDULED, status.message(), generation
        )
    if status.code is GroupCode.UNSCHEDULABLE:
        return PodGroupCondition(
            POD_GROUP_INITIALLY_SCHEDULED, "False", REASON_UNSCHEDULABLE, status.message(),
            generation,
        )
    return PodGroupCondition(
        POD_GROUP_INITIALLY_SCHEDULED, "False", REASON_SCHEDULER_ERROR, status.message(),
        generation,
    )


def condition_to_write(pg: PodGroup, status: GroupStatus) -> PodGroupCondition | None:
    """kube's updatePodGroupCondition: the condition it patches, or None when it writes
    nothing (True never goes back to False; an unchanged condition is not written)."""
    new = _condition(status, pg.generation)
    old = pg.condition(POD_GROUP_INITIALLY_SCHEDULED)
    if old is not None and old.status == "True" and new.status != "True":
        return None
    if old is not None and (old.status, old.reason, old.message, old.observed_generation) == (
        new.status, new.reason, new.message, new.observed_generation
    ):
        return None
    return new
