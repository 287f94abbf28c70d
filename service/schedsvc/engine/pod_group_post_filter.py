"""kube's RunPodGroupPostFilterPlugins for a rejected pod group: the profile's PodGroupPostFilter
plugins (config/pod_group_post_filter.py; by default DynamicResources, which with no
ResourceClaims only reports, then DefaultPreemption's workload-aware preemption,
preemption/pod_group.py), and how their status joins the group's
(applyPodGroupPostFilterResult).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..config.pod_group_post_filter import DYNAMIC_RESOURCES
from ..model import Pod
from ..model_pod_group import PodGroup
from .cycle_env import CycleEnv
from .pod_group_status import GroupCode, GroupStatus
from .preemption import Victim
from .preemption.pod_group import PreemptCode, Rerun, preempt_pod_group
from .runtime_nominated import nominated_pods

__all__ = ["DRA_POST_FILTER_MESSAGE", "PostFilterOutcome", "run_pod_group_post_filter"]

# DynamicResources.PodGroupPostFilter with no claim to deallocate
DRA_POST_FILTER_MESSAGE = "deallocation and deletion of ResourceClaims completed"
# its pod group state is written by its PreFilter: none when no member reached it
DRA_NO_STATE = 'error in "DynamicResources" PodGroupPostFilter plugins: not found'


@dataclass(slots=True)
class PostFilterOutcome:
    """PodGroupPostFilter's result: `waiting` (a plugin succeeded: the group waits on
    preemption, its members nominated), else the status to join to the group's."""

    code: GroupCode
    message: str
    waiting: bool = False
    nominations: dict[str, str] = field(default_factory=dict)  # uid -> node
    victims: tuple[Victim, ...] = ()

    def apply(self, status: GroupStatus) -> GroupStatus:
        """applyPodGroupPostFilterResult: an Error replaces the group's status; anything else
        is appended to its reasons (a success's message too: the group stays rejected,
        waiting on preemption)."""
        if self.code is GroupCode.ERROR:
            return GroupStatus.error(self.message)
        return GroupStatus(status.code, [*status.reasons, self.message], status.err)


def run_pod_group_post_filter(
    env: CycleEnv, pg: PodGroup, queued: Sequence[Pod], dra_state: bool, rerun: Rerun
) -> PostFilterOutcome:
    """The plugins in kube's order: a success ends the run (its result and message), an
    UnschedulableAndUnresolvable too (its message alone), Unschedulable messages join.
    `dra_state`: some member reached DynamicResources' PreFilter (GroupRun.dra_state);
    `rerun`: the group algorithm once more (kube's pgSchedulingFunc), for preemption."""
    fw = env.frameworks[queued[0].scheduler_name]
    reasons: list[str] = []
    for name in fw.profile.pod_group_post_filter:
        if name == DYNAMIC_RESOURCES:
            if not dra_state:
                return PostFilterOutcome(GroupCode.ERROR, DRA_NO_STATE)
            reasons.append(DRA_POST_FILTER_MESSAGE)
            continue
        if not env.preemption:  # a simulation asking what fits as is
            continue
        res = preempt_pod_group(env, fw, pg, queued, rerun, nominated_pods)
        msg = f"pod group preemption: {res.message}" if res.message else ""
        if res.code is PreemptCode.SUCCESS:
            return PostFilterOutcome(
                GroupCode.UNSCHEDULABLE, msg, True, dict(res.nominations), res.victims
            )
        if res.code is PreemptCode.UNRESOLVABLE:
            return PostFilterOutcome(GroupCode.UNSCHEDULABLE, msg)
        if res.code is PreemptCode.ERROR:
            return PostFilterOutcome(
                GroupCode.ERROR,
                f'error in "DefaultPreemption" PodGroupPostFilter plugins: {msg}',
            )
        reasons.append(msg)
    # no plugin, or all Unschedulable: their reasons joined (none: "", which the group's
    # status still appends, ending its message in ", " as kube's does)
    return PostFilterOutcome(GroupCode.UNSCHEDULABLE, ", ".join(reasons))
