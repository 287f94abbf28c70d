"""kube's validatePodGroup (schedule_one_podgroup.go): every member a pod group cycle would
schedule, and every member already scheduled, must share the schedulerName and the preemption
policy of the first, and carry the PodGroup's priority. A group that fails is a SchedulerError,
nothing of it tried.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..model import Pod, PreemptionPolicy
from ..model_pod_group import PodGroup

__all__ = ["validate_pod_group"]


def _go_policy(p: PreemptionPolicy) -> str:
    return p.value


def validate_pod_group(
    pg: PodGroup, queued: Sequence[Pod], scheduled: Iterable[Pod], profiles: Iterable[str]
) -> str:
    """"" when the group may be scheduled, else kube's error text (the PodGroupPreemptionPolicy
    gate off: the first member's policy is the group's)."""
    scheduler_name = queued[0].scheduler_name if queued else ""
    priority = pg.effective_priority
    policy: PreemptionPolicy | None = None
    for pod in (*queued, *scheduled):
        if pod.scheduler_name != scheduler_name:
            return (
                "all pods in a single pod group should have the same .spec.schedulerName set, "
                f'got: "{pod.scheduler_name}" and "{scheduler_name}"'
            )
        if pod.priority != priority:
            return (
                "all pods in a single pod group should have the same priority as the pod "
                f"group's priority, got {pod.priority} and {priority}"
            )
        if policy is None:
            policy = pod.preemption_policy
        elif pod.preemption_policy is not policy:
            return (
                "all pods in a single pod group should have the same preemption policy, got "
                f"{_go_policy(pod.preemption_policy)} and {_go_policy(policy)}"
            )
    if scheduler_name not in set(profiles):
        return f'profile not found for scheduler name "{scheduler_name}"'
    return ""
