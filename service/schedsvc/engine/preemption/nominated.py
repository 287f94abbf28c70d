"""kube's RunFilterPluginsWithNominatedPods for a pod whose only usage-dependent filter is
NodeResourcesFit, vectorized over the rows holding nominated pods.

With resources alone, the first pass (the nominated pods of priority >= the pod's added to
their node) is the binding one: the second pass, without them, only has more room. So one
filter run with the nominated pods' requests added to those rows' usage gives both the
verdicts and the first pass's reasons, where the general check re-runs PreFilter and the
filters node by node with the pods really added (runtime_nominated.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...framework import Rows
from ...framework.podinfo import PodInfo
from ...framework.snapshot import IntArray, Snapshot
from ...model import PODS
from ..runtime import Framework, Rejection
from .select_victims import resource_only_applies
from .victim_table import VictimTable

__all__ = ["nominated_extra_for", "resource_only_two_pass"]

Check = Callable[[Rows], tuple[Rows, list[Rejection]]]


def resource_only_two_pass(fw: Framework, info: PodInfo, snap: Snapshot) -> Check | None:
    """The vectorized two-pass check for `info`, or None when it does not apply (a filter
    other than NodeResourcesFit reads usage for this pod, or a nominated pod has inter-pod
    terms, which PreFilter would count in the first pass)."""
    cs = fw.run_pre_filter(info, snap)
    if cs.rejected is not None or not resource_only_applies(fw, cs):
        return None
    width = VictimTable.for_snapshot(snap).resource_width()
    extra, terms = nominated_extra_for(snap, info, width)
    if terms:
        return None

    def check(rows: Rows) -> tuple[Rows, list[Rejection]]:
        add = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows.tolist()):
            vec = extra.get(row)
            if vec is not None:
                add[i] = vec
        saved = snap.requested[rows].copy()
        try:
            snap.requested[rows, :width] += add
            res = fw.run_filter(cs, info, snap, rows)
        finally:
            snap.requested[rows] = saved
        return rows[res.feasible], res.rejections

    return check


def nominated_extra_for(
    snap: Snapshot, info: PodInfo, width: int
) -> tuple[dict[int, IntArray], bool]:
    """Per row, the request vectors (pods column included) of the pods nominated there with
    priority >= the pod's, and whether any of them has inter-pod terms (the vectorized path
    then does not apply: their first filter pass involves more than resources)."""
    from ...framework.affinity_index import pod_has_pod_affinity

    extra: dict[int, IntArray] = {}
    terms = False
    index = snap.resource_index
    cache = VictimTable.for_snapshot(snap).nominated_vectors
    for uid, rec in snap.nominated.items():
        p = rec.pod
        if uid == info.uid or p.priority < info.pod.priority:
            continue
        row = snap.row_of(rec.nominated_node_name)
        if row is None:
            continue
        hit = cache.get(uid)
        if hit is None or hit[0] is not rec or len(hit[1]) != width:
            own = np.zeros(width, dtype=np.int64)
            for res, qty in rec.info.requests.items():
                col = index.get(res)
                if col is not None and col < width:
                    own[col] += qty
            own[index[PODS]] += 1
            hit = cache[uid] = (rec, own, pod_has_pod_affinity(p))
        terms = terms or hit[2]
        vec = extra.get(row)
        extra[row] = hit[1].copy() if vec is None else vec + hit[1]
    if len(cache) > 2 * len(snap.nominated) + 64:  # forget nominations that are gone
        for uid in [u for u in cache if u not in snap.nominated]:
            del cache[uid]
    return extra, terms

