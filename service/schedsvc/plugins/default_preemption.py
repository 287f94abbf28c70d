"""DefaultPreemption (kube v1.35 plugins/defaultpreemption and framework/preemption): the
rules that do not touch the snapshot.

- PodEligibleToPreemptOthers: `preemptionPolicy: Never` never preempts; a pod whose nominated
  node still holds a lower-priority pod terminating because of a preemption waits for it
  (unless the filters called that node UnschedulableAndUnresolvable).
- The number of candidates to look for (minCandidateNodesPercentage/Absolute) and its offset.
- filterPodsWithPDBViolation: which potential victims a PodDisruptionBudget protects, counted
  per node against a fresh copy of each budget's disruptionsAllowed.
- pickOneNodeForPreemption: fewest PDB violations, lowest highest victim priority, smallest
  priority sum, fewest victims, latest start time of the most important victims.

The engine (engine/preemption) finds the victims on each node; these decide around it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError
from ..model import Pod, PodDisruptionBudget, PreemptionPolicy

__all__ = [
    "NAME",
    "DefaultPreemptionArgs",
    "NOT_ELIGIBLE_NEVER",
    "NOT_ELIGIBLE_TERMINATING",
    "NO_VICTIMS_REASON",
    "NOT_HELPFUL_REASON",
    "num_candidates",
    "eligible_to_preempt",
    "importance_key",
    "split_by_pdb_violation",
    "pick_one_node",
]

NAME = "DefaultPreemption"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_VICTIMS_REASON = "No preemption victims found for incoming pod"
NOT_HELPFUL_REASON = "Preemption is not helpful for scheduling"
_MAX_INT32 = 2**31 - 1


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    """kube's DefaultPreemptionArgs (v1 defaults 10 % and 100) with its validation."""

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    @classmethod
    def parse(cls, args: Mapping[str, Any] | None) -> DefaultPreemptionArgs:
        base = f"pluginConfig[{NAME}].args"
        raw = dict(args or {})
        unknown = set(raw) - {"minCandidateNodesPercentage", "minCandidateNodesAbsolute"}
        if unknown:
            raise ConfigError(base, f"unknown fields {sorted(unknown)}")
        values = {}
        defaults = (("minCandidateNodesPercentage", 10), ("minCandidateNodesAbsolute", 100))
        for key, default in defaults:
            v = raw.get(key, default)
            if isinstance(v, bool) or not isinstance(v, int):
                raise ConfigError(f"{base}.{key}", f"must be an integer, got {v!r}")
            values[key] = v
        pct, absolute = values["minCandidateNodesPercentage"], values["minCandidateNodesAbsolute"]
        if not 0 <= pct <= 100:
            raise ConfigError(f"{base}.minCandidateNodesPercentage", "not in valid range [0, 100]")
        if absolute < 0:
            raise ConfigError(f"{base}.minCandidateNodesAbsolute", "not in valid range [0, inf)")
        if pct == 0 and absolute == 0:
            raise ConfigError(
                base,
                "minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero",
            )
        return cls(pct, absolute)


def num_candidates(args: DefaultPreemptionArgs, num_potential: int) -> int:
    """kube's calculateNumCandidates: a percentage of the potential nodes, at least the
    absolute minimum, at most all of them."""
    n = num_potential * args.min_candidate_nodes_percentage // 100
    n = max(n, args.min_candidate_nodes_absolute)
    return min(n, num_potential)


def eligible_to_preempt(
    pod: Pod, nominated_unresolvable: bool, nominated_node_pods: Sequence[Pod] | None,
    priority_of: Callable[[Pod], int] | None = None,
) -> tuple[bool, str]:
    """PodEligibleToPreemptOthers. `nominated_node_pods`: the pods on the pod's nominated node
    (None when it has none or the node is gone); `nominated_unresolvable`: the filters called
    that node UnschedulableAndUnresolvable, so preempting elsewhere is allowed. `priority_of`:
    a victim's priority (with GenericWorkload, a member's is its PodGroup's)."""
    if pod.preemption_policy is PreemptionPolicy.NEVER:
        return False, NOT_ELIGIBLE_NEVER
    if pod.nominated_node_name and not nominated_unresolvable and nominated_node_pods:
        for p in nominated_node_pods:
            prio = p.priority if priority_of is None else priority_of(p)
            if prio < pod.priority and p.terminating_by_preemption:
                return False, NOT_ELIGIBLE_TERMINATING
    return True, ""


def importance_key(pod: Pod, now: int) -> tuple[int, int]:
    """Ascending order of this key is kube's MoreImportantPod order: higher priority first,
    then the earlier start (a pod not started counts as started `now`)."""
    return (-pod.priority, pod.start_time if pod.start_time is not None else now)


def split_by_pdb_violation(
    pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget], stop_early: bool = False
) -> tuple[list[int], list[int]]:
    """filterPodsWithPDBViolation over `pods` (in importance order): the indexes of the pods
    whose eviction would violate a budget, and of the others, each in the given order. A budget
    is spent by each pod it selects, in order; a pod already in its disruptedPods is not
    counted again. `stop_early` (1.37's FilterVictimsWithPDBViolation): the first budget a pod
    takes below zero ends its check, the budgets after it are not spent."""
    allowed = [b.disruptions_allowed for b in pdbs]
    violating: list[int] = []
    other: list[int] = []
    for i, pod in enumerate(pods):
        (violating if spend_budgets(pod, pdbs, allowed, stop_early) else other).append(i)
    return violating, other


def spend_budgets(
    pod: Pod, pdbs: Sequence[PodDisruptionBudget], allowed: list[int], stop_early: bool
) -> bool:
    """One pod's eviction spent from `allowed` (per budget of `pdbs`): whether a budget that
    selects it (and is not already disrupting it) goes below zero. `stop_early`: the first
    such budget ends the check (1.37's podIsViolating), the budgets after it not spent."""
    if not pod.labels:
        return False
    violated = False
    for j, b in enumerate(pdbs):
        if b.namespace != pod.namespace or b.selector is None:
            continue
        if not b.selector.matches(pod.labels) or pod.name in b.disrupted_pods:
            continue
        allowed[j] -= 1
        if allowed[j] < 0:
            violated = True
            if stop_early:
                break
    return violated


IntArray = npt.NDArray[np.int64]


def pick_one_node(
    num_pdb_violations: IntArray,
    highest_priority: IntArray,
    priority_sum: IntArray,
    num_victims: IntArray,
    earliest_start: IntArray,
) -> int:
    """pickOneNodeForPreemption over the candidates' summaries (one entry per candidate):
    the index of the pick. `priority_sum` is kube's sum of (priority + MaxInt32 + 1);
    `earliest_start` the earliest start among the victims of the highest priority. A tie after
    every criterion goes to the first candidate (kube's is a map's order)."""
    alive = np.arange(len(num_pdb_violations))
    for values, prefer_max in (
        (num_pdb_violations, False),
        (highest_priority, False),
        (priority_sum, False),
        (num_victims, False),
        (earliest_start, True),
    ):
        v = values[alive]
        best = v.max() if prefer_max else v.min()
        alive = alive[v == best]
        if len(alive) == 1:
            break
    return int(alive[0])


def priority_sum_term(priority: int) -> int:
    """kube adds priority + MaxInt32 + 1 per victim, so negative priorities sum as positives."""
    return priority + _MAX_INT32 + 1
