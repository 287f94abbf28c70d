"""The framework runtime's filter with nominated pods (kube's framework/runtime/framework.go
RunFilterPluginsWithNominatedPods and addGENominatedPods).

A node holding nominated pods of priority >= the pod's passes only if the filters pass both
with those pods added and without them. `preemption/nominated.py` is the vectorized form for
pods whose only usage-dependent filter is NodeResourcesFit; this is the general one.
"""

from __future__ import annotations

import numpy as np

from ..framework import Rows
from ..framework.podinfo import PodInfo
from ..framework.snapshot import PodRecord, Snapshot
from .filtering import NominatedPods
from .preemption.nominated import resource_only_two_pass
from .runtime import Framework, Rejection

__all__ = ["nominated_pods", "run_filter_plugins_with_nominated_pods"]


def nominated_pods(fw: Framework, snap: Snapshot, info: PodInfo) -> NominatedPods | None:
    """Rows holding nominated pods of priority >= the pod's (kube's addGENominatedPods)
    and the two-pass check for them; None when there are none, the common case."""
    if not snap.nominated:
        return None
    by_row: dict[int, list[PodRecord]] = {}
    for rec in snap.nominated.values():
        p = rec.pod
        if p.uid == info.uid or p.priority < info.pod.priority:
            continue
        row = snap.row_of(rec.nominated_node_name)
        if row is not None:
            by_row.setdefault(row, []).append(rec)
    if not by_row:
        return None
    fast = resource_only_two_pass(fw, info, snap)
    return NominatedPods(
        np.fromiter(by_row, dtype=np.intp),
        fast
        if fast is not None
        else lambda rows: run_filter_plugins_with_nominated_pods(fw, info, snap, rows, by_row),
    )


def run_filter_plugins_with_nominated_pods(
    fw: Framework, info: PodInfo, snap: Snapshot, rows: Rows, by_row: dict[int, list[PodRecord]]
) -> tuple[Rows, list[Rejection]]:
    """kube's RunFilterPluginsWithNominatedPods per row: first with the nominated pods
    added (a failure reports that pass's reasons), then, if they made a difference
    possible, without them. The snapshot is restored exactly, generation included."""
    ok: list[int] = []
    rejected: list[Rejection] = []
    for row in rows.tolist():
        node = snap.node(row).name
        one = np.array([row], dtype=np.intp)
        gen = snap.generation
        added: list[PodRecord] = []
        try:
            # temporaries are keyed apart from every uid (NominatedKey), so they cannot
            # replace or remove a pod the client sent
            for rec in by_row[row]:
                added.append(snap.add_temporary(rec, node))
            cs1 = fw.run_pre_filter(info, snap)
            first = fw.run_filter(cs1, info, snap, one)
        finally:
            for t in added:
                snap.remove_temporary(t)
            snap.generation = gen
        if not first.feasible[0]:
            rejected.extend(first.rejections)
            continue
        cs2 = fw.run_pre_filter(info, snap)
        second = fw.run_filter(cs2, info, snap, one)
        if not second.feasible[0]:
            rejected.extend(second.rejections)
            continue
        ok.append(row)
    return np.array(ok, dtype=np.intp), rejected
