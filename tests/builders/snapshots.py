"""Snapshots from nodes and placed pods, and one plugin run through PreFilter/Filter or
PreScore/Score/Normalize, so every plugin test drives its plugin the way the framework does."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from schedsvc.framework import (
    FilterResult,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    Rows,
    Skip,
)
from schedsvc.framework.podinfo import pod_info
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Namespace, Node, Pod

__all__ = ["snapshot_of", "rows_of", "Filtered", "run_filter", "run_score"]


def snapshot_of(
    nodes: Iterable[Node],
    placed: Iterable[tuple[Pod, str]] = (),
    namespaces: Iterable[Namespace] = (),
    capacity: int | None = None,
) -> Snapshot:
    """The nodes in order, the namespaces, then each (pod, node name) bound; a small
    `capacity` makes the snapshot grow its columns on the way."""
    snap = Snapshot() if capacity is None else Snapshot(capacity=capacity)
    for n in nodes:
        snap.upsert_node(n)
    for ns in namespaces:
        snap.upsert_namespace(ns)
    for p, node_name in placed:
        snap.add_pod(p, node_name)
    return snap


def rows_of(snap: Snapshot, names: Sequence[str]) -> Rows:
    return np.array([snap.index[n] for n in names], dtype=np.intp)


@dataclass(frozen=True, slots=True)
class Filtered:
    """One Filter run over `rows`: reasons per row ([] = feasible), in row order."""

    reasons: list[list[str]]
    feasible: list[bool]
    result: FilterResult
    pre_filter: PreFilterResult | None


def run_filter(
    plugin: Any, pod: Pod, snap: Snapshot, rows: Rows | None = None
) -> Filtered | None:
    """PreFilter (if the plugin has one) then Filter over `rows` (default: every node); None
    when PreFilter says Skip. Checks the result's own invariant: infeasible iff a reason."""
    info = pod_info(pod)
    pre: PreFilterResult | None = None
    state: Any = None
    if isinstance(plugin, PreFilterPlugin):
        res = plugin.pre_filter(info, snap)
        if isinstance(res, Skip):
            return None
        pre, state = res, res.state
    rows = snap.order if rows is None else rows
    out = plugin.filter(state, info, snap, rows)
    reasons = [[r for r, mask in out.reasons if mask[i]] for i in range(len(rows))]
    feasible = [bool(x) for x in out.feasible]
    assert feasible == [not r for r in reasons]
    return Filtered(reasons, feasible, out, pre)


def run_score(
    plugin: Any, pod: Pod, snap: Snapshot, rows: Rows | None = None
) -> list[int] | None:
    """PreScore, Score and NormalizeScore over `rows` (default: every node), before weight;
    None when PreScore says Skip."""
    info = pod_info(pod)
    rows = snap.order if rows is None else rows
    state = plugin.pre_score(info, snap, rows) if isinstance(plugin, PreScorePlugin) else None
    if isinstance(state, Skip):
        return None
    raw = plugin.score(state, info, snap, rows)
    return [int(x) for x in plugin.normalize(state, info, raw)]
