"""Where a request's pod groups are scheduled: each group's members together, at the place of
its first member (one pod group cycle, as kube pops a whole group as one queue entity), the
other pods in request order. The server schedules a request in this order and slices it so,
so the pods a deadline leaves unattempted are a suffix of this order (a group whole); it answers
the placements back in the request's own order (server/schedule_call.py), which clients pair
with their pods by position.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model import Pod
from ..model_pod_group import pod_group_key

__all__ = ["group_key", "group_order", "group_run_end"]


def group_key(pod: Pod) -> str:
    """The pod's group, "namespace/name", or "" for a pod of no group."""
    return pod_group_key(pod.namespace, pod.pod_group) if pod.pod_group else ""


def group_order(pods: Sequence[Pod]) -> Sequence[Pod]:
    """`pods` with every group's members moved up to its first member, each group's in
    request order; `pods` itself when no group has members apart."""
    members: dict[tuple[str, str], list[Pod]] = {}
    for p in pods:
        if p.pod_group:
            members.setdefault((p.namespace, p.pod_group), []).append(p)
    if not members:
        return pods
    out: list[Pod] = []
    for p in pods:
        if not p.pod_group:
            out.append(p)
            continue
        run = members.pop((p.namespace, p.pod_group), None)
        if run is not None:
            out.extend(run)
    return out


def group_run_end(pods: Sequence[Pod], i: int) -> int:
    """The end of the run of pods of pods[i]'s group that starts at i."""
    ns, name = pods[i].namespace, pods[i].pod_group
    j, n = i + 1, len(pods)
    while j < n and pods[j].pod_group == name and pods[j].namespace == ns:
        j += 1
    return j
