"""The rescore path of a ScoreCache: re-evaluate the rows whose pods or node changed since the
last hint, so that the cache again holds what a full cycle would compute (see batch.py)."""

from __future__ import annotations

import numpy as np

from ..framework import Rows
from ..framework.podinfo import PodInfo
from ..framework.snapshot import Snapshot
from .run_memo import RunMemo
from .runtime import CycleState, Framework
from .score_cache import ScoreCache

__all__ = ["recheck_last", "recheck_rows"]


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
