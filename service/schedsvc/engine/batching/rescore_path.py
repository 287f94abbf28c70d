"""The rescore path: re-evaluate the rows whose pods or node changed since the last hint, so
that the kept cache (a ScoreCache or a WindowCache) again holds what a full cycle would
compute (see batch.py)."""

from __future__ import annotations

import numpy as np

from ...framework import Rows
from ...framework.podinfo import PodInfo
from ...framework.snapshot import Snapshot
from ..runtime import CycleState, Framework
from .batch_types import FlushReason
from .churn import Churn
from .run_memo import RunMemo
from .score_cache import ScoreCache
from .window_cache import WindowCache

__all__ = [
    "recheck_last", "recheck_rows", "score_cache_compatible", "window_cache_compatible",
]


def recheck_last(
    fw: Framework, info: PodInfo, snap: Snapshot, cs: CycleState, st: ScoreCache, row: int,
    rescore: bool, memo: RunMemo | None,
) -> bool:
    """Only the last chosen row changed (it holds the last pod): drop it if it no longer
    fits, else rescore it. False when it still fits but rescoring is off (kube's
    node_not_full). `memo` is this pod's run (the compatibility check made it current)."""
    pos, present = st.locate(row)
    cached = present and bool(st.live[pos])
    # a cached row changed only in usage: it passed every static filter and keeps its
    # static scores
    fits = fw.filter_one(cs, info, snap, row, dynamic_only=cached)
    if not fits:
        if cached:
            st.kill_one(pos)
        return True
    if not rescore:
        return False
    if cached and memo is not None and memo.pre_scored is not None:
        st.set_one(pos, fw.score_one(info, snap, row, memo.pre_scored))
        return True
    rows = np.array([row], dtype=np.intp)
    sr = fw.run_score(info, snap, rows, dynamic_only=cached, raw_only=True)
    if cached and memo is not None and fw.pre_score_assume_stable:
        memo.pre_scored = (sr.states, sr.skipped)
    if present:
        st.set_one(pos, {k: int(v[0]) for k, v in sr.raw.items()})
    else:
        st.upsert(rows, sr.raw)
    return True


def recheck_rows(
    fw: Framework, info: PodInfo, snap: Snapshot, cs: CycleState, st: ScoreCache,
    check: set[int], node_dirty: set[int], row: int, rescore: bool,
) -> bool:
    """The last chosen row and every row an UpdateSnapshot touched (`check`; of those,
    `node_dirty` had their node upserted): re-filter them, drop those that stopped fitting,
    rescore and (re)insert the others."""
    rows: Rows = np.array(sorted(r for r in check if snap.alive[r]), dtype=np.intp)
    pos, present = st.positions(rows)
    cached = present.copy()
    cached[present] = st.live[pos[present]]
    # cached rows that changed only in usage passed every static filter and keep their
    # static scores; every other row (new, a tombstone, a node upserted) is evaluated in full
    usage_only = cached & np.array([r not in node_dirty for r in rows.tolist()], bool)
    feasible = np.zeros(len(rows), dtype=np.bool_)
    for part, dyn in ((usage_only, True), (~usage_only, False)):
        if part.any():
            feasible[part] = fw.run_filter(
                cs, info, snap, rows[part], dynamic_only=dyn, diagnose=False
            ).feasible
    if not rescore and bool(feasible[rows == row].any()):
        return False
    out = pos[cached & ~feasible]
    if len(out):
        st.kill(out)
    for part, dyn in ((usage_only, True), (~usage_only, False)):
        ok = rows[part & feasible]
        if len(ok):
            # Rescore path: these nodes still fit (or fit now); their usage changed.
            sr = fw.run_score(info, snap, ok, dynamic_only=dyn, raw_only=True)
            st.upsert(ok, sr.raw)
    return True


def score_cache_compatible(
    fw: Framework, info: PodInfo, snap: Snapshot, cs: CycleState, st: ScoreCache, churn: Churn,
    row: int, start_index: int, to_find: int, rescore: bool, run: RunMemo | None,
    compact_min: int,
) -> FlushReason | None:
    """The rescore path of a ScoreCache once kube's checks passed (`row`: the last pick):
    the cache made exact for the pod, or why it is flushed. It keys its rows as "rows
    ascending, rotated", so it needs that visiting order and a cycle that visits every node."""
    if not snap.order_ascending:  # nodes changed the order out of the ScoreCache's keys
        return FlushReason.VISITING_ORDER
    if to_find < len(snap.order):
        # nodes were added: the cycle now samples, which this cache cannot stand for
        return FlushReason.NODE_NOT_FULL
    start_row = int(snap.order[start_index])
    if start_row != st.start_row:  # node changes moved where the filter stage starts
        st.rotate(start_row)
    if churn.nodes_changed():  # some cached rows may be gone
        gone = np.flatnonzero(st.live & ~snap.alive[st.rows])
        if len(gone):
            st.kill(gone)
    if churn.any_rows():
        check, node_dirty = churn.take(row)
        ok = recheck_rows(fw, info, snap, cs, st, check, node_dirty, row, rescore)
    else:
        ok = recheck_last(fw, info, snap, cs, st, row, rescore, run)
    if not ok:  # the last node can still take pods and rescoring is off
        return FlushReason.NODE_NOT_FULL
    if st.nlive == 0:
        return FlushReason.EMPTY_LIST
    if churn.nodes_changed():
        # a node-set change moved ImageLocality's spread for every node
        churn.rescored_all()
        st.compact()
        sr = fw.run_score(info, snap, st.rows)
        st.rescore(fw, info, sr.raw, sr.states, sr.skipped)
    elif len(st.rows) > compact_min and 2 * st.nlive < len(st.rows):
        st.compact()  # tombstones outnumber live rows: amortized O(1) per removal
    return None


def window_cache_compatible(
    fw: Framework, info: PodInfo, snap: Snapshot, cs: CycleState, st: WindowCache,
    churn: Churn, row: int, rescore: bool, memo: RunMemo | None,
) -> FlushReason | None:
    """The rescore path of a WindowCache, or why it is flushed. It keeps every node's verdict
    in the visiting order it was built on: a node change (the order, labels, node count)
    flushes it. None left to hint (empty_list) is found by the hint, in its window. (A
    pending one, built by its first hint from the snapshot as it is, has nothing to
    recheck: a run pays for evaluating every node only once a pod can use it.)"""
    check = churn.take_rows(row) if snap.order is st.order else None
    if check is None:
        return FlushReason.SNAPSHOT_CHANGED
    if check:
        rows: Rows = np.array(sorted(r for r in check if snap.alive[r]), dtype=np.intp)
        ok = st.recheck_rows(fw, info, snap, cs, rows, row, rescore)
    else:
        ok = st.recheck_last(fw, info, snap, cs, row, rescore, memo)
    return None if ok else FlushReason.NODE_NOT_FULL
