"""A lap of sampled cycles read from a WindowCache at once, for a run whose only changes are
its own placements (engine/run_rounds.py: a fill's copies, a pod group's members).

Consecutive cycles of a run visit consecutive spans of the visiting order: each starts where
the last one stopped. Until the spans wrap past the first one's start, they are disjoint, so
no cycle of the lap visits a row an earlier one took, and every window reads the cache as it
stands. The lap's windows are then consecutive chunks of `to_find` feasible rows, and their
picks one array computation: the best total per chunk, the ties among it, and one draw per
chunk holding more than one, made in one call in chunk order (numpy's Generator.integers
over an array of bounds draws as the same calls one by one, which select_host makes)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...framework import Rows
from ...framework.podinfo import PodInfo
from ...framework.snapshot import IntArray, Snapshot
from ..runtime import CycleState, Framework
from .window_cache import WindowCache

__all__ = ["UsageMemo", "lap_picks", "recheck_by_usage", "recheck_taken"]


def lap_picks(
    st: WindowCache, start: int, to_find: int, most: int, rng: np.random.Generator
) -> tuple[Rows, IntArray, int] | None:
    """The rows the next cycles of the run pick from position `start`, at most `most`, all
    within one lap (module docstring); each pick's total (its window's best `fixed`); and the
    start index after them. None when the lap
    cannot be read at once: scores normalized per window (dense or window-scored plugins),
    or fewer feasible rows than a window holds (each cycle then visits every node)."""
    if st.dense or st.windowed or most < 1:
        return None
    fpos, frows = st.fpos, st.frows
    if st.dead:
        fpos, frows = fpos[st.falive], frows[st.falive]
    m, n = len(fpos), len(st.order)
    chunks = min(m // to_find, most) if to_find > 0 else 0
    if chunks == 0:
        return None
    k = int(fpos.searchsorted(start))
    take = chunks * to_find
    # the lap's rows from `start` on, wrapping past the last node
    if k + take <= m:
        rows = frows[k:k + take]
    else:
        rows = np.concatenate((frows[k:], frows[:take - (m - k)]))
    end = int(fpos[(k + take - 1) % m]) + 1  # past the lap's last position
    totals = st.fixed[rows].reshape(chunks, to_find)
    # every chunk's ties, chunk by chunk, each in window order
    best = totals.max(axis=1)
    ci, cj = (totals == best[:, None]).nonzero()
    counts = np.bincount(ci, minlength=chunks)
    at = np.zeros(chunks, dtype=np.int64)
    np.cumsum(counts[:-1], out=at[1:])  # each chunk's first tie in ci / cj
    several = counts > 1
    if several.any():
        at[several] += rng.integers(counts[several])
    picks = rows.reshape(chunks, to_find)[np.arange(chunks), cj[at]]
    return picks, best, end % n


def recheck_taken(
    st: WindowCache, fw: Framework, info: PodInfo, snap: Snapshot, cs: CycleState, rows: Rows
) -> None:
    """Feasible rows whose only change since is pods of this run: re-filtered by the plugins
    that read usage, rescored from the kept PreScore by the plugins that read usage (the
    caller checked pre_score_assume_stable: that PreScore holds across the run's assumes)."""
    ok = fw.run_filter(cs, info, snap, rows, dynamic_only=True, diagnose=False).feasible
    if not ok.all():
        for r in rows[~ok].tolist():
            st.set_feasible(r, False)
        rows = rows[ok]
    if len(rows) == 0:
        return
    states, skipped = st.states, st.skipped
    raws = {
        p.name: np.asarray(p.score(states.get(p.name), info, snap, rows), dtype=np.int64)
        for p in fw.score
        if not p.traits.score_is_static and p.name not in skipped and p.name in st.raw
    }
    st.set_raws(info, rows, raws)


@dataclass(slots=True)
class UsageMemo:
    """A run's rescoring by usage: when every plugin that reads usage for the pod (its
    dynamic filters not skipped by PreFilter, its dynamic scores kept by the cache) reads only
    its row's usage columns (PluginTraits.row_usage_only), a row's verdict and raw scores are
    a function of those columns, for the run's pod, CycleState and kept PreScore. Keyed by
    the columns' bytes; a value is (fits, raw score per plugin of `names`)."""

    names: tuple[str, ...]  # the cache's dynamic score plugins, in fw.score order
    seen: dict[bytes, tuple[bool, tuple[int, ...]]] = field(default_factory=dict)

    @classmethod
    def of(cls, fw: Framework, cs: CycleState, st: WindowCache) -> UsageMemo | None:
        """The memo for the run, or None when some plugin reads more than its row's usage.
        The caller checked pre_score_assume_stable (the kept PreScore holds)."""
        skip = cs.skip_filter
        if not all(
            p.traits.row_usage_only for p in fw.filter
            if p.name not in skip and not p.traits.filter_is_static
        ):
            return None
        scored = [
            p for p in fw.score
            if not p.traits.score_is_static and p.name in st.raw and p.name not in st.skipped
        ]
        if not all(p.traits.row_usage_only for p in scored):
            return None
        return cls(tuple(p.name for p in scored))


def recheck_by_usage(
    st: WindowCache, fw: Framework, info: PodInfo, snap: Snapshot, cs: CycleState, rows: Rows,
    memo: UsageMemo,
) -> None:
    """recheck_taken, each row's result looked up by its usage columns (UsageMemo) and worked
    out, for the states not seen yet, in one pass over their rows."""
    keys = np.hstack((snap.allocatable[rows], snap.requested[rows], snap.nonzero_requested[rows]))
    ks = [k.tobytes() for k in keys]
    seen = memo.seen
    new = [i for i, k in enumerate(ks) if k not in seen]
    if new:
        sub = rows[new]
        ok = fw.run_filter(cs, info, snap, sub, dynamic_only=True, diagnose=False).feasible
        fit = sub[ok]
        raws = [
            np.asarray(p.score(st.states.get(p.name), info, snap, fit), dtype=np.int64).tolist()
            for p in fw.score if p.name in memo.names
        ] if len(fit) else []
        j = 0
        for i, good in zip(new, ok.tolist(), strict=True):
            if good:
                seen[ks[i]] = (True, tuple(r[j] for r in raws))
                j += 1
            else:
                seen[ks[i]] = (False, ())
    vals = [seen[k] for k in ks]
    fits = [i for i, v in enumerate(vals) if v[0]]
    if len(fits) < len(vals):
        for i, v in enumerate(vals):
            if not v[0]:
                st.set_feasible(int(rows[i]), False)
    if fits:
        table = np.array([vals[i][1] for i in fits], dtype=np.int64).reshape(len(fits), -1)
        st.set_raws(
            info, rows[fits], {name: table[:, c] for c, name in enumerate(memo.names)}
        )
