"""scheduling.k8s.io/v1beta1 PodGroup and Workload as the pod group cycle reads them (issue 28;
kube's pkg/scheduler/schedule_one_podgroup.go and plugins/gangscheduling).

A pod names its group with `Pod.pod_group` (spec.schedulingGroup.podGroupName); the group is
always in the pod's namespace. Only the PodGroup is read by scheduling: a Workload is kept for
completeness (kube-scheduler has no Workload informer).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .model import PreemptionPolicy

__all__ = [
    "POD_GROUP_INITIALLY_SCHEDULED",
    "DISRUPTION_TARGET",
    "REASON_SCHEDULED",
    "REASON_UNSCHEDULABLE",
    "REASON_SCHEDULER_ERROR",
    "DisruptionMode",
    "PodGroupCondition",
    "PodGroup",
    "PodGroupTemplate",
    "Workload",
    "pod_group_key",
]

# status condition types and reasons (k8s.io/api scheduling/v1beta1; "Scheduled" is a literal
# in the scheduler, not an API constant)
POD_GROUP_INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_SCHEDULED = "Scheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"


class DisruptionMode(Enum):
    """spec.disruptionMode: whether preemption may take one member (SINGLE, the default) or
    only the whole group at once (ALL)."""

    SINGLE = "Single"
    ALL = "All"


@dataclass(frozen=True, slots=True)
class PodGroupCondition:
    """metav1.Condition, the fields kube's updatePodGroupCondition compares."""

    type: str
    status: str  # "True" | "False" | "Unknown"
    reason: str = ""
    message: str = ""
    observed_generation: int = 0


def pod_group_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


@dataclass(frozen=True, slots=True)
class PodGroup:
    """A PodGroup's spec and status conditions. `min_count` is gang.minCount, or None for a
    basic policy (whose PlacementFeasible minimum is 1). `priority` None reads as 0, as kube's
    util.PodGroupPriority; `preemption_policy` None is the pods' own (the PodGroupPreemptionPolicy
    gate off)."""

    name: str
    namespace: str = "default"
    uid: str = ""
    generation: int = 0
    min_count: int | None = None
    disruption_mode: DisruptionMode = DisruptionMode.SINGLE
    priority_class_name: str = ""
    priority: int | None = None
    preemption_policy: PreemptionPolicy | None = None
    workload_name: str = ""
    template_name: str = ""
    conditions: tuple[PodGroupCondition, ...] = ()

    @property
    def key(self) -> str:
        return pod_group_key(self.namespace, self.name)

    @property
    def gang(self) -> bool:
        return self.min_count is not None

    @property
    def placement_min_count(self) -> int:
        """GangScheduling's minCount: gang.minCount, 1 for a basic group."""
        return self.min_count if self.min_count is not None else 1

    @property
    def effective_priority(self) -> int:
        return self.priority if self.priority is not None else 0

    def condition(self, type_: str) -> PodGroupCondition | None:
        for c in self.conditions:
            if c.type == type_:
                return c
        return None


@dataclass(frozen=True, slots=True)
class PodGroupTemplate:
    """One of a Workload's spec.podGroupTemplates: a PodGroup spec with a name."""

    name: str
    min_count: int | None = None
    disruption_mode: DisruptionMode = DisruptionMode.SINGLE
    priority_class_name: str = ""
    priority: int | None = None
    preemption_policy: PreemptionPolicy | None = None


@dataclass(frozen=True, slots=True)
class Workload:
    """scheduling.k8s.io/v1beta1 Workload: validated and kept; no decision reads it."""

    name: str
    namespace: str = "default"
    uid: str = ""
    controller_api_group: str = ""
    controller_kind: str = ""
    controller_name: str = ""
    templates: tuple[PodGroupTemplate, ...] = ()

    @property
    def key(self) -> str:
        return pod_group_key(self.namespace, self.name)
