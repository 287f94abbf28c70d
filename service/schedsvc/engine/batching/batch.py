"""Opportunistic batching (KEP-5598, kube's runtime/batch.go) with rescoring, per profile,
keyed by the scheduling-cycle counter. The checks of batchStateCompatible run in kube's
order, each exit a named FlushReason. Where kube pops the next node of a stale sorted list,
the ScoreCache renormalizes the last full cycle's raw scores over the rows that remain.

Only rows whose node or pods changed can change their verdict for a signable pod (such a pod's
filters and scores read its own node only). Those rows are re-evaluated before each hint: the
last chosen node (the rescore path), and every row an UpdateSnapshot touched (churn), which is
re-filtered, rescored, and inserted at its visiting-order place if it became feasible. So a
hint equals the full cycle's choice.

The batch state wraps the cycle (`schedule`): the hint, or the full cycle it stands for, then
what is kept of the result, then the assume. Two caches: a cycle that visited every node and
scores nothing across nodes keeps a ScoreCache (its feasible rows, picks kept from one pod to
the next); a sampled cycle (percentageOfNodesToScore) or soft spreading keeps a WindowCache
(every node's verdict, so a hint reads the window of the sampled cycle it stands for, and
spreading is scored per window from counts moved by each placement).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np

from ...framework.affinity_index import pod_has_pod_affinity
from ...framework.podinfo import PodInfo
from ...framework.snapshot import Snapshot
from ...model import Pod
from ..cycle_context import CURRENT, CycleCursor
from ..observer import NULL_OBSERVER, Observer
from ..runtime import CycleState, Framework
from ..schedule_result import Path, ScheduleResult
from .batch_types import BatchAttempt, FlushReason, Hint, LastCycle
from .churn import Churn
from .parked import ParkedBudget, ParkedStates
from .rescore_path import score_cache_compatible, window_cache_compatible
from .run_memo import RunMemo
from .score_cache import COMPACT_MIN, ScoreCache
from .signature import PodSigner
from .window_cache import WindowCache

__all__ = ["FlushReason", "BatchAttempt", "Hint", "OpportunisticBatch"]


class OpportunisticBatch:
    """One profile's batch state. Called under the cluster lock only."""

    def __init__(
        self, fw: Framework, observer: Observer, enabled: bool,
        clock: Callable[[], float] = time.monotonic, compact_min: int = COMPACT_MIN,
        parked_budget: ParkedBudget | None = None,
    ) -> None:
        self.fw = fw
        self.profile = fw.name
        self.observer = observer
        self.enabled = enabled and fw.profile.batching.enabled
        self.rescore = fw.profile.batching.rescore
        self.max_age = fw.profile.batching.max_batch_age_seconds
        self.clock = clock
        self.compact_min = compact_min
        self.signer = PodSigner(fw, fw.profile.batching.soft_spread)
        self.state: ScoreCache | WindowCache | None = None
        self.last = LastCycle()
        self._signature: tuple[int, bytes | None, bool] = (-1, None, False)
        self._run: RunMemo | None = None
        self._hinted: tuple[int, int] = (-1, -1)  # (cycle, row) of the last hint given
        self._churn = Churn()  # what UpdateSnapshots changed since the state was exact
        self.batched_pods = 0
        self.parked = ParkedStates(parked_budget)  # WindowCaches of interrupted runs, to resume
        self.resumed_runs = 0

    # ---- bookkeeping ------------------------------------------------------------------------
    def _flush(self, reason: FlushReason) -> None:
        self.state = None
        rec = CURRENT.rec  # inside a cycle its record takes it; an update's flush is told now
        if rec is not None:
            rec.events.append(("batch_flush", self.profile, reason.value))
        elif self.observer is not NULL_OBSERVER:
            self.observer.batch_flush(self.profile, reason.value)

    def _event(self, what: str, value: str) -> None:
        """A batch attempt result or a skip, into the record of the cycle on this thread."""
        rec = CURRENT.rec
        if rec is not None:
            rec.events.append((what, self.profile, value))

    def on_snapshot_change(
        self, dirty: set[int] | None, node_rows: set[int] | None = None,
        nodes_changed: bool = False,
    ) -> None:
        """Rows whose pods changed (`dirty`) or whose node was upserted (`node_rows`); None
        when anything may have (replace, namespaces, nominated pods): then the state is
        flushed. `nodes_changed`: nodes were added, removed or relabelled, which moves
        cluster-wide score inputs."""
        if dirty is None or node_rows or nodes_changed:
            self.parked.clear()
        else:
            self.parked.changed(dirty)
        if self.state is None:
            return
        if dirty is None:
            self._flush(FlushReason.SNAPSHOT_CHANGED)
        else:
            self._churn.add(dirty, node_rows, nodes_changed)

    def pod_assumed(
        self, row: int, pod: Pod, generations: tuple[int, int] | None = None
    ) -> None:
        """A pod of any profile was assumed on `row`: parked caches re-evaluate it on resume;
        pod (anti-)affinity terms reach whole domains, which no row list expresses. The pod
        of this profile's cycle comes with the generations it moved the snapshot between: a
        CycleState valid before stays valid for the next pod of the same signature."""
        memo = self._run
        if generations is not None and memo is not None and memo.generation == generations[0]:
            # a CycleState valid before this pod's assume stays valid for the next pod of
            # the same signature (see RunMemo.serves)
            memo.generation = generations[1]
        if len(self.parked):
            if pod_has_pod_affinity(pod):
                self.parked.clear()
            else:
                self.parked.changed((row,))

    def _set_cycle(self, cycle: int, row: int, name: str, succeeded: bool) -> None:
        last = self.last  # in place: one per pod, read only here
        last.cycle, last.row, last.name, last.succeeded = cycle, row, name, succeeded

    # ---- the cycle, wrapped -----------------------------------------------------------------
    def schedule(
        self, info: PodInfo, snap: Snapshot, cursor: CycleCursor, to_find: int,
        nominated: bool, place: Callable[[], ScheduleResult],
        assume: Callable[[int], None] | None,
    ) -> ScheduleResult:
        """kube's GetNodeHint before schedulePod and StoreScheduleResults after it, as one call
        around the cycle: a hint stands for `place` (schedulePod); either way the result is
        kept before `assume` (None in a dry run) adds the pod to the snapshot. `nominated`:
        nominated pods count in this pod's filters, through a second pass no hint models."""
        r = self._hint(info, snap, cursor, to_find, nominated)
        if r is None:
            r = place()
        self.store_result(info, snap, cursor.cycle, r)
        if assume is not None and r.row >= 0:
            assume(r.row)
        return r

    def _hint(
        self, info: PodInfo, snap: Snapshot, cursor: CycleCursor, to_find: int,
        nominated: bool,
    ) -> ScheduleResult | None:
        """The hint as a result standing for the cycle; the cursor's start index moves as the
        (sampled) cycle the hint stands for would move it."""
        if nominated:
            # counted, so that batching turned off by nominations shows in the metrics
            if self.enabled:
                self._event("batch_skipped", FlushReason.NOMINATED_PODS.value)
            return None
        n = len(snap.order)
        if n == 0:
            return None
        hint = self.get_node_hint(
            info, snap, cursor.cycle, cursor.rng, cursor.next_start_index, to_find
        )
        if hint is None:
            return None
        row, score, processed = hint
        cursor.next_start_index = (cursor.next_start_index + processed) % n
        return ScheduleResult(Path.HINT, row, score, 1, 1)

    # ---- GetNodeHint ------------------------------------------------------------------------
    def get_node_hint(
        self, info: PodInfo, snap: Snapshot, cycle: int, rng: np.random.Generator,
        start_index: int, to_find: int,
    ) -> Hint | None:
        """A hint for the pod of `cycle`, or None: `start_index` is the position in
        `snap.order` the filter stage would visit first now, `to_find` the feasible nodes it
        would look for (numFeasibleNodesToFind)."""
        if not self.enabled:
            return None
        started = time.perf_counter()
        result: Hint | None = None
        try:
            sig, full = self.signer.sign(info)
            self._signature = (cycle, sig, full)
            if not self._batch_state_compatible(info, snap, cycle, sig, start_index, to_find):
                self._event("batch_attempt", BatchAttempt.NO_HINT)
                return result
            st = self.state
            if isinstance(st, WindowCache):
                memo = self._run  # the compatibility check made it this pod's
                assert memo is not None
                result = st.hint(self.fw, info, snap, memo.cycle_state, start_index, to_find, rng)
                if result is None:  # every node evaluated, none feasible
                    self._flush(FlushReason.EMPTY_LIST)
                    self._event("batch_attempt", BatchAttempt.NO_HINT)
                    return result
            else:
                assert st is not None
                row, score = st.pick(self.fw, info, rng)
                result = (row, score, len(snap.order))
            self._hinted = (cycle, result[0])
            self._event("batch_attempt", BatchAttempt.HINT)
            return result
        finally:
            rec = CURRENT.rec
            if rec is not None:
                ended = time.perf_counter()
                rec.hint = (result is not None, ended - started, ended)

    def _batch_state_compatible(
        self, info: PodInfo, snap: Snapshot, cycle: int, sig: bytes | None, start_index: int,
        to_find: int,
    ) -> bool:
        """kube's batchStateCompatible, plus the rescore path."""
        st = self.state
        if (st is None or st.signature != sig) and sig is not None and self.rescore and (
            sig in self.parked
        ):
            return self._resume(info, snap, cycle, sig)
        # a WindowCache is flushed where it is found empty (recheck, resume, its window)
        if st is None or (isinstance(st, ScoreCache) and st.nlive == 0):
            return False
        reason = self._kube_incompatible(snap, cycle, sig, st)
        cs: CycleState | None = None
        if reason is None:
            assert sig is not None
            cs = self._cycle_state(info, snap, sig)
            # a rejection cannot follow a success with an equal signature, and a pod narrowed
            # by PreFilter visits a rotation of its own (never stored: a signature match with
            # it would be a plugin signing too little); never hint from either
            if cs.rejected is not None or cs.allowed is not None:
                reason = FlushReason.POD_INCOMPATIBLE
        if reason is not None:
            self._flush(reason)
            return False
        assert cs is not None
        if isinstance(st, WindowCache):
            if st.pending:  # built by its first hint: nothing to recheck
                self._churn.reset()
                return True
            reason = window_cache_compatible(
                self.fw, info, snap, cs, st, self._churn, self.last.row, self.rescore,
                self._run,
            )
        else:
            reason = score_cache_compatible(
                self.fw, info, snap, cs, st, self._churn, self.last.row, start_index,
                to_find, self.rescore, self._run, self.compact_min,
            )
        if reason is not None:
            self._flush(reason)
            return False
        return True

    def _kube_incompatible(
        self, snap: Snapshot, cycle: int, sig: bytes | None, st: ScoreCache | WindowCache
    ) -> FlushReason | None:
        """kube's checks that need no PreFilter, in kube's order: why the state is flushed.
        A new signature parks the state first (a WindowCache, to resume)."""
        if cycle != self.last.cycle + 1:
            return FlushReason.POD_SKIPPED
        if not self.last.succeeded:
            return FlushReason.POD_FAILED
        if sig is None or sig != st.signature:
            self._park()
            return FlushReason.POD_INCOMPATIBLE
        if self.clock() > st.created + self.max_age:
            return FlushReason.EXPIRED
        if snap.row_of(self.last.name) != self.last.row:
            return FlushReason.NODE_MISSING
        return None

    def _park(self) -> None:
        """Keep the current WindowCache for when its signature comes back. It is exact but
        for the rows its next hint would re-evaluate; from now on the journal adds every row
        that changes. Called where kube flushes for a new signature, the run continuous."""
        st = self.state
        if (
            isinstance(st, WindowCache) and not st.pending and self.rescore
            and self.last.succeeded and self._churn.rows_only()
        ):
            self.parked.park(st, self._churn.pending(self.last.row))

    def _resume(self, info: PodInfo, snap: Snapshot, cycle: int, sig: bytes) -> bool:
        """The parked run of `sig` comes back: kube flushes the current state (counted as it
        would count it) and runs a full cycle; the parked cache re-evaluates the rows that
        changed since it was parked, and then hints what that cycle would pick."""
        resumed = self.parked.resume(sig, snap.alive)  # taken first: parking the current
        assert resumed is not None  # state may push the oldest parked cache, this one, out
        self._leave(cycle)
        st, live = resumed
        if self.clock() > st.created + self.max_age or st.order is not snap.order:
            return False
        cs = self._cycle_state(info, snap, sig)
        if cs.rejected is not None or cs.allowed is not None:
            return False
        self.state = st
        self._churn.reset()
        st.recheck_rows(self.fw, info, snap, cs, live, -1, True)
        st.renew(self.clock())
        self.resumed_runs += 1
        if st.nlive == 0:  # no node left to hint
            self._flush(FlushReason.EMPTY_LIST)
            return False
        return True

    def _leave(self, cycle: int) -> None:
        """The state ends as kube ends it when the signature changes (a WindowCache parked)."""
        if self.state is not None:
            if cycle != self.last.cycle + 1:
                self._flush(FlushReason.POD_SKIPPED)
            elif not self.last.succeeded:
                self._flush(FlushReason.POD_FAILED)
            else:
                self._park()
                self._flush(FlushReason.POD_INCOMPATIBLE)

    def _cycle_state(self, info: PodInfo, snap: Snapshot, sig: bytes) -> CycleState:
        """PreFilter for the pod, or the previous pod's CycleState when nothing but the
        assume of pods of this signature changed since (pre_filter_assume_stable)."""
        memo = self._run
        if (
            memo is not None and self.fw.pre_filter_assume_stable and memo.signature == sig
            and memo.generation == snap.generation
        ):
            return memo.cycle_state
        cs = self.fw.run_pre_filter(info, snap)
        self._run = RunMemo(sig, snap.generation, cs)
        return cs

    # ---- StoreScheduleResults ---------------------------------------------------------------
    def store_result(self, info: PodInfo, snap: Snapshot, cycle: int, r: ScheduleResult) -> None:
        """kube's StoreScheduleResults, before the pod is assumed: a scored cycle keeps what
        the next pod needs; any other ends the state (a failed one, a preempting pod's
        included, as kube's pod_failed)."""
        path = r.path
        if path is Path.HINT:
            self._set_cycle(cycle, r.row, snap.node(r.row).name, True)
            self.batched_pods += 1
            self._event("batch_attempt", BatchAttempt.HINT_USED)
            return
        if not self.enabled:
            return
        if self._hinted[0] == cycle:
            self._event("batch_attempt", BatchAttempt.HINT_NOT_USED)
        if path is Path.FAILED:
            self._set_cycle(cycle, -1, "", False)
            return
        self._set_cycle(cycle, r.row, snap.node(r.row).name, True)
        if path is Path.SCORED:
            self._keep(info, snap, r)
        elif path is Path.UNSCORED:  # one feasible node: nothing sorted to keep
            self._flush(FlushReason.EMPTY_LIST)  # counted always, as kube does
        elif path is Path.NOMINATED:  # nominated pods counted for this pod
            self._flush(FlushReason.NOMINATED_PODS)
        else:  # PreFilter narrowed the nodes
            self._flush(FlushReason.POD_NOT_BATCHABLE)

    def _keep(self, info: PodInfo, snap: Snapshot, r: ScheduleResult) -> None:
        """What a full, scored cycle leaves the next pod, and its CycleState. A cycle that
        visited every node (`complete`: no percentageOfNodesToScore cut) keeps a ScoreCache of
        its feasible rows; else, and for pods whose scores reach across nodes, a WindowCache
        that evaluates every node once, at the first hint."""
        started = time.perf_counter()
        cycle, cs = self.last.cycle, r.cs
        assert cs is not None and r.feasible_rows is not None and r.sr is not None
        sig_cycle, sig, full = self._signature
        if sig_cycle != cycle:
            sig, full = self.signer.sign(info)
        if sig is None:
            # counted whether or not a state existed, as kube's StoreScheduleResults does
            self._flush(FlushReason.POD_NOT_BATCHABLE)
            self._stored(started)
            return
        if cs.record_plugin_metrics:  # a sampled cycle's state would time the hints' filters
            cs = dataclasses.replace(cs, record_plugin_metrics=False)
        self._run = RunMemo(sig, snap.generation, cs)
        self.parked.drop(sig)  # this cycle's state replaces it
        if r.complete and not full and snap.order_ascending:
            # ScoreCache keys its rows as "rows ascending, rotated"; any other visiting order
            # (zones added zone by zone, a reused row) takes the WindowCache, which keys by
            # position
            sr = r.sr
            self.state = ScoreCache.new(
                self.fw, info, sig, r.feasible_rows, sr.raw, sr.states, sr.skipped,
                self.clock(), r.start_row,
            )
        else:
            # built at the first hint: a signature that changes every pod costs nothing here
            self.state = WindowCache.pending_for(sig, self.clock())
        self._churn.reset()
        self._stored(started)

    def _stored(self, started: float) -> None:
        rec = CURRENT.rec
        if rec is not None:
            ended = time.perf_counter()
            rec.store = (ended - started, ended)
