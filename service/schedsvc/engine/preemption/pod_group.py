"""DefaultPreemption's PodGroupPostFilter (kube's framework/preemption/podgrouppreemption.go,
PodGroupEvaluator.Preempt): workload-aware preemption over the whole cluster for a pod group
that cannot be placed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from ...model import Pod, PreemptionPolicy
from ...model_pod_group import PodGroup
from .evaluator import Victim

if TYPE_CHECKING:
    from ..cycle_context import CycleCursor
    from ..cycle_env import CycleEnv
    from ..runtime import Framework

__all__ = ["PreemptCode", "GroupPreemption", "preempt_pod_group"]


class PreemptCode(Enum):
    SUCCESS = "Success"
    UNSCHEDULABLE = "Unschedulable"
    UNRESOLVABLE = "UnschedulableAndUnresolvable"
    ERROR = "Error"


@dataclass(frozen=True, slots=True)
class GroupPreemption:
    """The evaluator's status (without DefaultPreemption's "pod group preemption: " prefix),
    the node nominated for each member that has one (uid -> node), and the victims in kube's
    order."""

    code: PreemptCode
    message: str
    nominations: Mapping[str, str] = field(default_factory=dict)
    victims: tuple[Victim, ...] = ()


def preempt_pod_group(
    env: CycleEnv, cursor: CycleCursor, fw: Framework, pg: PodGroup, queued: Sequence[Pod],
    already: int, dry_run: bool,
) -> GroupPreemption:
    """PodGroupEvaluator.Preempt: eligibility first (the first member's policy is the
    group's, PodGroupPreemptionPolicy off)."""
    if queued[0].preemption_policy is PreemptionPolicy.NEVER:
        return GroupPreemption(
            PreemptCode.UNSCHEDULABLE, "not eligible due to preemptionPolicy=Never."
        )
    priority = pg.effective_priority
    snap = env.snapshot
    if not any(_victim_priority(snap.pod_groups, r.pod) < priority for r in snap.pods.values()):
        return GroupPreemption(
            PreemptCode.UNRESOLVABLE, "No preemption victims found for incoming preemptor"
        )
    raise NotImplementedError("workload-aware preemption: in progress (issue 28)")


def _victim_priority(groups: Mapping[str, PodGroup], pod: Pod) -> int:
    """kube's GetPodPriority with GenericWorkload: a member's is its PodGroup's."""
    if pod.pod_group:
        pg = groups.get(f"{pod.namespace}/{pod.pod_group}")
        if pg is not None:
            return pg.effective_priority
    return pod.priority
