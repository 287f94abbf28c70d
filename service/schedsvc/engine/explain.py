"""Explain: every node's verdict for a pod, as a full unsampled cycle would give it.

kube has no such call; it runs the cycle's stages (schedule_pod.py's pre_filter, the filter
stage over every node, prioritize_nodes, and PostFilter with all candidates) and reports each
node instead of placing the pod.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..framework import Code, Rows
from ..framework.podinfo import PodInfo, pod_info
from ..framework.snapshot import Snapshot
from ..model import Pod
from .cycle_env import CycleEnv
from .filtering import Diagnosis, find_nodes_that_pass_filters, fit_error_message
from .nomination_bound import preempt_within_bound
from .preemption import Candidate, PreemptionResult
from .runtime import Framework
from .runtime_nominated import nominated_pods
from .schedule_one import NO_NODES_AVAILABLE
from .schedule_pod import pre_filter, prioritize_nodes
from .select_host import best_positions

__all__ = ["NodeExplanation", "Explanation", "explain"]


@dataclass(frozen=True, slots=True)
class NodeExplanation:
    name: str
    feasible: bool
    plugin: str = ""
    reasons: tuple[str, ...] = ()
    scores: dict[str, tuple[int, int]] = field(default_factory=dict)  # plugin -> (score, weight)
    total: int = 0
    # a rejected node's status code: "Error" when the plugin erred there (reasons: kube's
    # error), else "" (a rejection)
    code: str = ""


@dataclass(frozen=True, slots=True)
class Explanation:
    profile: str
    nodes: tuple[NodeExplanation, ...]
    chosen_node: str
    message: str
    # when nothing fits and the profile preempts: every candidate node, and kube's pick
    candidates: tuple[Candidate, ...] = ()
    nominated_node: str = ""


def explain(env: CycleEnv, pod: Pod, post_filter: bool = True) -> Explanation:
    """Every node's verdict; consumes no cycle, assumes nothing, leaves batch state alone.
    The caller holds the cluster's lock. `post_filter` false: a pod group's member, for
    which kube runs no PostFilter of its own (the group's runs once, for all)."""
    snap = env.snapshot
    fw = env.frameworks.get(pod.scheduler_name)
    if fw is None:
        return Explanation(
            pod.scheduler_name, (), "",
            f"no profile serves schedulerName {pod.scheduler_name!r}",
        )
    info = pod_info(pod)
    cs, diag = pre_filter(fw, info, snap)
    nominated = nominated_pods(fw, snap, info)
    feasible: Rows = np.zeros(0, dtype=np.intp)
    error = ""
    if diag is None:  # every node, from the first, none of them sampled away
        fo = find_nodes_that_pass_filters(
            fw, cs, info, snap, 0, len(snap.order), None, 1, nominated, stop_on_error=False
        )
        diag, feasible, error = fo.diagnosis, fo.feasible, fo.error
    elif cs.rejected is not None and cs.rejected[2] is Code.ERROR:
        error = cs.rejected[0]
    if error:  # kube ends the cycle with the error: no scores, no PostFilter
        return Explanation(fw.name, _verdicts(fw, info, snap, feasible, diag, False)[0], "", error)
    nodes, chosen = _verdicts(fw, info, snap, feasible, diag)
    post = None
    if (
        post_filter and len(feasible) == 0 and snap.num_nodes
        and fw.profile.preemption is not None
    ):
        post, _ = preempt_within_bound(
            snap, fw, cs, info, diag, fw.profile.preemption,
            None if cs.rejected is not None else nominated, None, env.max_nominated_pods,
            all_candidates=True,
        )
    return Explanation(
        fw.name, nodes, chosen, _message(snap, feasible, diag, post),
        post.candidates if post is not None else (),
        post.nominated_node if post is not None else "",
    )


def _verdicts(
    fw: Framework, info: PodInfo, snap: Snapshot, feasible: Rows, diag: Diagnosis,
    scored: bool = True,
) -> tuple[tuple[NodeExplanation, ...], str]:
    """Each node's explanation in visiting order, and the node the cycle would choose (the
    first of the best, where the cycle draws among them)."""
    scores: dict[int, dict[str, tuple[int, int]]] = {}
    totals: dict[int, int] = {}
    chosen = ""
    if scored and len(feasible) > 1:
        sr = prioritize_nodes(fw, info, snap, feasible)
        for i, row in enumerate(feasible.tolist()):
            scores[row] = {
                name: (int(arr[i]), fw.weights[name]) for name, arr in sr.per_plugin.items()
            }
            totals[row] = int(sr.totals[i])
        _, ties = best_positions(sr.totals)
        chosen = snap.node(int(feasible[int(ties[0])])).name
    elif len(feasible) == 1:
        chosen = snap.node(int(feasible[0])).name
    per_row, errors = diag.per_row(), diag.error_rows()
    feasible_set = set(feasible.tolist())
    nodes = []
    for row in snap.order.tolist():
        name = snap.node(row).name
        if row in feasible_set:
            nodes.append(
                NodeExplanation(name, True, scores=scores.get(row, {}), total=totals.get(row, 0))
            )
        else:
            plugin, reasons = per_row.get(row, ("", []))
            code = "Error" if row in errors else ""
            nodes.append(NodeExplanation(name, False, plugin, tuple(reasons), code=code))
    return tuple(nodes), chosen


def _message(
    snap: Snapshot, feasible: Rows, diag: Diagnosis, post: PreemptionResult | None
) -> str:
    """The message Schedule would give: none when a node fits, else the FitError with
    PostFilter's message."""
    if snap.num_nodes == 0:
        return NO_NODES_AVAILABLE
    if len(feasible):
        return ""
    return fit_error_message(snap.num_nodes, diag, post.message if post is not None else "")
