"""Sibling runs (simulations): a new signature's run started from the parked WindowCache of a
signature that differs from it only in plugins that do nothing for either pod, instead of
from a full cycle and an evaluation of every node.

A drained node's pods are a few Deployments' replicas, equal but for their labels (and the
selector of their default spreading). A signature is its plugins' parts in order, each part
the fields that plugin reads: an equal part gives that plugin's equal PreFilter, Filter,
PreScore and Score. So two pods whose parts differ only for plugins that are skipped for
both (PreFilter said Skip, so no Filter; PreScore said Skip over any rows, so no Score) or
that batching scores per window from each pod's own window state, are feasible on the same
nodes with the same kept raw scores. A parked cache is exact for its signature once the rows
journaled since it was parked are re-evaluated (parked.py); copied with the new pod's window
states, and those rows re-evaluated for the new pod, it holds what a fresh cache of the new
signature would, and its hint is the full cycle's pick (as a resumed run's is).

A signature with no sibling parked starts its cache at once, built from the snapshot as it
is, as a pending cache is built at its first hint: the run's first pod is hinted too, and the
full cycle runs only where it must (PreFilter rejects or narrows, or no node fits: kube's
reasons), instead of a full cycle and then a cache that evaluates the same nodes again. Not
after a pod that fit nowhere: pods that fail one after another (scale_up's pending pods)
would each evaluate every node for nothing before their full cycle.

Only a drain's forks use it (engine/simulate/fork.py `child(siblings=True)`), where pods come
in runs of replicas: a start holds a cache of node length that a run of one pod would not
have built. The live path and other steps keep OpportunisticBatch as is.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from ...framework import SKIP
from ...framework.podinfo import PodInfo
from ...framework.snapshot import Snapshot
from ..observer import Observer
from ..runtime import CycleState, Framework
from ..schedule_result import ScheduleResult
from .batch import OpportunisticBatch
from .parked import ParkedBudget
from .score_cache import COMPACT_MIN
from .signature import sign_parts
from .window_cache import WindowCache

__all__ = ["SiblingBatch", "inert_difference", "pod_parts", "sibling_copy"]

Parts = tuple[bytes, ...]


def pod_parts(fw: Framework, pod: PodInfo, soft_spread: bool) -> Parts | None:
    """Each signer's part of the pod's signature (signature.sign_parts), in fw.signers
    order; None when the pod is unsignable."""
    signed = sign_parts(fw, pod, soft_spread)
    return None if signed is None else tuple(signed[0])


def inert_difference(
    fw: Framework, cache: WindowCache, a: PodInfo, a_parts: Parts, b: PodInfo, b_parts: Parts,
    cs: CycleState, snap: Snapshot,
) -> bool:
    """Every plugin whose parts differ between `a` (a pod of `cache`'s signature) and `b`
    (whose CycleState is `cs`) does nothing for either now: PreFilter says Skip for both (a
    Filter without a PreFilter always runs), and its Score is window-scored or skipped by
    PreScore for both, over any non-empty rows (pre_score_assume_stable), as the cache's
    kept PreScore skips it."""
    pre_filter = {p.name: p for p in fw.pre_filter}
    pre_score = {p.name: p for p in fw.pre_score}
    filters = {p.name for p in fw.filter}
    scored = {p.name for p in fw.score} - fw.window_scored_names
    rows = cache.frows[cache.falive]
    for signer, pa, pb in zip(fw.signers, a_parts, b_parts, strict=True):
        name = signer.name
        if pa == pb:
            continue
        pf = pre_filter.get(name)
        if pf is None and name in filters:
            return False
        if pf is not None and (
            pf.pre_filter(a, snap) is not SKIP or pf.pre_filter(b, snap) is not SKIP
            or (name in filters and name not in cs.skip_filter)
        ):
            return False
        if name in scored:
            ps = pre_score.get(name)
            if (
                ps is None or not ps.traits.pre_score_assume_stable or len(rows) == 0
                or name not in cache.skipped or ps.pre_score(b, snap, rows) is not SKIP
            ):
                return False
    return True


def sibling_copy(
    fw: Framework, cache: WindowCache, info: PodInfo, snap: Snapshot, signature: bytes,
    created: float,
) -> WindowCache:
    """The cache as `signature`'s: its per-row state copied, window states built for `info`
    (as WindowCache._build builds them)."""
    windowed = []
    for name, wp in fw.window_scored.items():  # in the order of fw.score
        state = wp.window_state(info, snap, cache.order)
        if state is not SKIP:
            windowed.append((wp, state, fw.weights[name]))
    return dataclasses.replace(
        cache, signature=signature, created=created, feasible=cache.feasible.copy(),
        fpos=cache.fpos.copy(), falive=cache.falive.copy(), frows=cache.frows.copy(),
        raw={k: v.copy() for k, v in cache.raw.items()}, identity=list(cache.identity),
        fixed=cache.fixed.copy(), uniform=list(cache.uniform), dense=list(cache.dense),
        windowed=windowed, states=dict(cache.states), skipped=set(cache.skipped),
        known=cache.known.copy(),
    )


class SiblingBatch(OpportunisticBatch):
    """OpportunisticBatch that starts a new signature's run from a parked sibling's cache, or
    from a cache built at once (module docstring); `derived_runs` and `started_runs` count
    them."""

    def __init__(
        self, fw: Framework, observer: Observer, enabled: bool,
        clock: Callable[[], float] = time.monotonic, compact_min: int = COMPACT_MIN,
        parked_budget: ParkedBudget | None = None,
    ) -> None:
        super().__init__(fw, observer, enabled, clock, compact_min, parked_budget)
        self.derived_runs = 0
        self.started_runs = 0
        # a pod of each kept WindowCache's signature, and its parts once worked out
        self._pods: dict[bytes, tuple[PodInfo, Parts | None]] = {}

    def _keep(self, info: PodInfo, snap: Snapshot, r: ScheduleResult) -> None:
        super()._keep(info, snap, r)
        if isinstance(self.state, WindowCache):
            self._pods[self.state.signature] = (info, None)

    def _parts_of(self, sig: bytes) -> tuple[PodInfo, Parts | None] | None:
        kept = self._pods.get(sig)
        if kept is None or kept[1] is not None:
            return kept
        kept = self._pods[sig] = (kept[0], pod_parts(self.fw, kept[0], self.signer.soft_spread))
        return kept

    def _batch_state_compatible(
        self, info: PodInfo, snap: Snapshot, cycle: int, sig: bytes | None, start_index: int,
        to_find: int,
    ) -> bool:
        st = self.state
        if (
            sig is None or not self.rescore or sig in self.parked
            or not (st is None or (isinstance(st, WindowCache) and st.signature != sig))
        ):
            return super()._batch_state_compatible(
                info, snap, cycle, sig, start_index, to_find
            )
        self._leave(cycle)  # as kube leaves it (parked); then derived, started, or a full cycle
        derived = self._derive(info, snap, sig)
        if derived is None:
            return self._start(info, snap, sig)
        self.state = derived
        self._churn.reset()
        self.derived_runs += 1
        return True

    def _start(self, info: PodInfo, snap: Snapshot, sig: bytes) -> bool:
        """No sibling: the run's cache, built by this pod's hint (module docstring)."""
        if self.last.cycle >= 0 and not self.last.succeeded:
            return False
        cs = self._cycle_state(info, snap, sig)
        if cs.rejected is not None or cs.allowed is not None:
            return False
        self.state = WindowCache.pending_for(sig, self.clock())
        self._churn.reset()
        self._pods.setdefault(sig, (info, None))
        self.started_runs += 1
        return True

    def _derive(self, info: PodInfo, snap: Snapshot, sig: bytes) -> WindowCache | None:
        """`sig`'s cache from the newest parked sibling, exact (module docstring), or None."""
        self._pods = {s: p for s, p in self._pods.items() if s in self.parked}
        now = self.clock()
        candidates = [
            c for c in self.parked.newest_first()
            if c.signature in self._pods and c.classified and c.order is snap.order
            and now <= c.created + self.max_age
        ]
        if not candidates:
            return None
        cs = self._cycle_state(info, snap, sig)
        parts = pod_parts(self.fw, info, self.signer.soft_spread)
        if cs.rejected is not None or cs.allowed is not None or parts is None:
            return None
        self._pods[sig] = (info, parts)  # the derived cache's, when it is parked in turn
        for cache in candidates:
            kept = self._parts_of(cache.signature)
            assert kept is not None
            sibling, sibling_parts = kept
            if sibling_parts is None or not inert_difference(
                self.fw, cache, sibling, sibling_parts, info, parts, cs, snap
            ):
                continue
            out = sibling_copy(self.fw, cache, info, snap, sig, now)
            rows = self.parked.changed_rows(cache.signature, snap.alive)
            out.recheck_rows(self.fw, info, snap, cs, rows, -1, True)
            return out if out.nlive else None
        return None
