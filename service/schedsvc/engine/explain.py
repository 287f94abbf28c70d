"""Explain: every node's verdict for a pod, as a full unsampled cycle would give it.

kube has no such call; it runs the cycle's steps (PreFilter, find_nodes_that_fit over every
node, prioritize_nodes, PostFilter with all candidates) and reports each node instead of
placing the pod.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..framework.podinfo import pod_info
from ..model import Pod
from .filtering import find_nodes_that_fit, fit_error_message, prefilter_rejection
from .nomination_bound import has_room, refused
from .preemption import Candidate, preempt
from .runtime_nominated import nominated_pods
from .schedule_one import NO_NODES_AVAILABLE, prioritize_nodes

if TYPE_CHECKING:
    from .scheduler import Cluster

__all__ = ["NodeExplanation", "Explanation", "explain"]


@dataclass(frozen=True, slots=True)
class NodeExplanation:
    name: str
    feasible: bool
    plugin: str = ""
    reasons: tuple[str, ...] = ()
    scores: dict[str, tuple[int, int]] = field(default_factory=dict)  # plugin -> (score, weight)
    total: int = 0


@dataclass(frozen=True, slots=True)
class Explanation:
    profile: str
    nodes: tuple[NodeExplanation, ...]
    chosen_node: str
    message: str
    # when nothing fits and the profile preempts: every candidate node, and kube's pick
    candidates: tuple[Candidate, ...] = ()
    nominated_node: str = ""


def explain(c: Cluster, pod: Pod) -> Explanation:
    """Every node's verdict; consumes no cycle, assumes nothing, leaves batch state alone.
    The caller holds the cluster's lock."""
    snap = c.snapshot
    fw = c.engine.frameworks.get(pod.scheduler_name)
    if fw is None:
        return Explanation(
            pod.scheduler_name, (), "",
            f"no profile serves schedulerName {pod.scheduler_name!r}",
        )
    info = pod_info(pod)
    cs = fw.run_pre_filter(info, snap)
    order = snap.order
    nominated = nominated_pods(fw, snap, info)
    if cs.rejected is not None:
        diag = prefilter_rejection(cs, snap)
        feasible = np.zeros(0, dtype=np.intp)
    else:
        fo = find_nodes_that_fit(
            fw, cs, info, snap, 0, len(order), None, 1, nominated
        )
        diag, feasible = fo.diagnosis, fo.feasible
    per_row = diag.per_row()
    scores: dict[int, dict[str, tuple[int, int]]] = {}
    totals: dict[int, int] = {}
    chosen = ""
    if len(feasible) > 1:
        sr = prioritize_nodes(fw, info, snap, feasible)
        for i, row in enumerate(feasible.tolist()):
            scores[row] = {
                name: (int(arr[i]), fw.weights[name]) for name, arr in sr.per_plugin.items()
            }
            totals[row] = int(sr.totals[i])
        best = int(sr.totals.max())
        chosen = snap.node(int(feasible[int(np.argmax(sr.totals == best))])).name
    elif len(feasible) == 1:
        chosen = snap.node(int(feasible[0])).name
    nodes = []
    feasible_set = set(feasible.tolist())
    for row in order.tolist():
        name = snap.node(row).name
        if row in feasible_set:
            nodes.append(
                NodeExplanation(
                    name, True, scores=scores.get(row, {}), total=totals.get(row, 0)
                )
            )
        else:
            plugin, reasons = per_row.get(row, ("", []))
            nodes.append(NodeExplanation(name, False, plugin, tuple(reasons)))
    if snap.num_nodes == 0:
        msg = NO_NODES_AVAILABLE
    else:
        msg = "" if len(feasible) else fit_error_message(snap.num_nodes, diag)
    post = None
    if len(feasible) == 0 and snap.num_nodes and fw.profile.preemption is not None:
        post = preempt(
            snap, fw, cs, info, diag, fw.profile.preemption,
            None if cs.rejected is not None else nominated, None, all_candidates=True,
        )
        bound = c.engine.max_nominated_pods
        if post.nominated_node and not has_room(snap, info.uid, bound):
            # as Schedule answers: no nomination beyond the bound (the candidates still show)
            post = dataclasses.replace(refused(post, bound), candidates=post.candidates)
        if post.message:
            msg += " " + post.message
    return Explanation(
        fw.name, tuple(nodes), chosen, msg,
        post.candidates if post is not None else (),
        post.nominated_node if post is not None else "",
    )
