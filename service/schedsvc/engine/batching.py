"""Opportunistic batching (KEP-5598) with rescoring, per profile, keyed by the cycle counter.

The checks run in the order of kube's batch.go, each exit a named flush reason. Where kube
pops the next node of a stale sorted list, we keep the last full cycle's feasible rows (in
visiting order) with each plugin's *raw* scores: a hint renormalizes them over the rows that
remain and picks the best exactly as a full cycle would (same ties, same seeded draw).

Only rows whose node or pods changed can change their verdict for a signable pod (such a pod's
filters and scores read its own node only). Those rows are re-evaluated before each hint: the
last chosen node (the rescore path), and every row an UpdateSnapshot touched (churn), which is
re-filtered, rescored, and inserted at its visiting-order place if it became feasible. So with
percentageOfNodesToScore 100 a hint equals the full cycle's choice. (Changes that reach other
nodes flush instead: namespaces, nominations, pods with inter-pod terms; see Cluster.update.)

A hint must cost little next to a full cycle, so a run of equal pods does per pod only what
changed: the run keeps its CycleState and PreScore (_RunMemo), a node that stops fitting is
tombstoned, uniform normalizations are one constant, and the best score and its ties are kept
from one pick to the next.
"""

from __future__ import annotations

import bisect
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from ..framework import Rows
from ..model import Pod
from .observer import Observer
from .podinfo import PodInfo
from .runtime import CycleState, Framework, ScoreResult
from .snapshot import BoolArray, IntArray, Snapshot

__all__ = ["FlushReason", "HintResult", "BatchState"]


class FlushReason(StrEnum):
    POD_SKIPPED = "pod_skipped"
    POD_FAILED = "pod_failed"
    POD_INCOMPATIBLE = "pod_incompatible"
    EXPIRED = "expired"
    NODE_MISSING = "node_missing"
    NODE_NOT_FULL = "node_not_full"
    EMPTY_LIST = "empty_list"
    POD_NOT_BATCHABLE = "pod_not_batchable"
    # ours: an UpdateSnapshot may have changed any node, so cached scores are no longer exact
    SNAPSHOT_CHANGED = "snapshot_changed"


@dataclass(slots=True)
class HintResult:
    row: int | None
    score: int = 0


@dataclass(slots=True)
class _Cached:
    signature: bytes
    # feasible rows of the last full cycle, in visiting order; a row that stops fitting stays
    # as a tombstone (live False) until the next compaction, so removing one costs O(1)
    rows: Rows
    raw: dict[str, IntArray]  # plugin -> raw scores aligned with rows
    states: dict[str, Any]  # plugin -> its PreScore state (for normalize)
    skipped: set[str]
    created: float
    start_row: int  # first row the full cycle visited: the visiting order is rows rotated there
    full_rescore: bool = False  # soft spreading: every cached row is rescored before a hint
    # the full cycle visited every node, so the rows are every feasible node, not a sample:
    # only then does the rescore path pick what a full cycle would
    complete: bool = True
    keys: Rows = field(default_factory=lambda: np.zeros(0, dtype=np.intp))  # rotated rows
    live: BoolArray = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))
    nlive: int = 0
    # weighted sum of the raw scores of plugins whose normalize is the identity; _DEAD at
    # tombstones, so the best of it is the best live row
    fixed: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    identity: list[tuple[str, int]] = field(default_factory=list)  # (plugin, weight) in fixed
    # normalize_uniform plugins: [raw value at store, live rows whose raw differs from it];
    # while every count is 0 their normalized scores are one constant, `uniform_total`
    uniform: dict[str, list[int]] = field(default_factory=dict)
    uniform_total: int = 0
    dense: bool = False  # another normalizing plugin: renormalize every row for each hint
    # the best of `fixed` and its positions, ascending, kept up to date by _kill and _set_one
    # (a run changes one row per pod); None: recompute at the next pick
    ties: list[int] | None = None
    best: int = 0


@dataclass(slots=True)
class _RunMemo:
    """What a run of pods of one signature shares while the only snapshot changes are the
    assumes of such pods: PreFilter's CycleState (pre_filter_assume_stable) and the PreScore
    of the one-row rescore (pre_score_assume_stable)."""

    signature: bytes
    generation: int
    cycle_state: CycleState
    pre_scored: tuple[dict[str, Any], set[str]] | None = None


_DEAD = np.int64(-(1 << 62))  # below any weighted sum of scores
_COMPACT_MIN = 64  # compact once tombstones outnumber live rows in a cache longer than this


# every Pod field a plugin may read: all but the pod's identity
_SIGNED_FIELDS = tuple(
    f.name for f in dataclasses.fields(Pod) if f.name not in ("uid", "name", "shape")
)
_SIG_MEMO_MAX = 1024
# bytes of signatures the memo may hold (a signature carries the pod's names: images, labels,
# ...; the fields it keeps alive are about as big), so huge dry-run pods cannot pin memory
_SIG_MEMO_BYTES = 4 * 1024 * 1024
_Signed = tuple[bytes | None, bool]


_SPAN = 1 << 40  # above any row number, so rotated keys never collide


def _rotated(rows: Rows, start_row: int) -> Rows:
    """Sort keys of the visiting order: rows ascending, rotated to start at start_row."""
    out: Rows = np.where(rows < start_row, rows + _SPAN, rows)
    return out


def _discard(sorted_list: list[int], item: int) -> None:
    """Remove `item` from an ascending list if there (bisect, not a linear scan)."""
    i = bisect.bisect_left(sorted_list, item)
    if i < len(sorted_list) and sorted_list[i] == item:
        del sorted_list[i]


def _positions(st: _Cached, rows: Rows) -> tuple[Rows, BoolArray]:
    """Where `rows` are (or would be inserted) in the cached rows, and which are cached.

    The cached rows are in visiting order: snapshot rows ascending, rotated to start at
    `start_row`; rotating the keys makes that order sorted, so a binary search finds them.
    """
    want = _rotated(rows, st.start_row)
    pos: Rows = np.searchsorted(st.keys, want)
    inside = pos < len(st.rows)
    present: BoolArray = np.zeros(len(rows), dtype=np.bool_)
    present[inside] = st.rows[pos[inside]] == rows[inside]
    return pos, present


class BatchState:
    """One profile's batch state. Called under the cluster lock only."""

    def __init__(
        self,
        fw: Framework,
        observer: Observer,
        enabled: bool,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fw = fw
        self.profile = fw.name
        self.observer = observer
        self.enabled = enabled and fw.profile.batching.enabled
        self.rescore = fw.profile.batching.rescore
        self.max_age = fw.profile.batching.max_batch_age_seconds
        self.soft_spread = fw.profile.batching.soft_spread
        self.clock = clock
        self._state: _Cached | None = None
        self.last_cycle = -1
        self.last_row = -1
        self.last_name = ""
        self.succeeded = False
        self._signature: tuple[int, bytes | None, bool] = (-1, None, False)
        self._shape_sig: tuple[object | None, _Signed] = (None, (None, False))
        self._run: _RunMemo | None = None
        self._hinted: tuple[int, int] = (-1, -1)  # (cycle, row) of the last hint given
        self._dirty: set[int] = set()  # rows an UpdateSnapshot touched since the last store
        self._sig_memo: dict[tuple[int, ...], tuple[tuple[Any, ...], _Signed]] = {}
        self._sig_memo_bytes = 0
        self._dirty_nodes: set[int] = set()  # of those, rows whose node itself was upserted
        # the node set changed: cluster-wide inputs (ImageLocality's share of nodes holding an
        # image) moved for every node, so every cached row is rescored before the next hint
        self._rescore_all = False
        self.batched_pods = 0

    # ---- bookkeeping ------------------------------------------------------------------------
    def _flush(self, reason: FlushReason) -> None:
        self._state = None
        self.observer.batch_flush(self.profile, reason.value)

    def on_snapshot_change(
        self, dirty: set[int] | None, node_rows: set[int] | None = None,
        nodes_changed: bool = False,
    ) -> None:
        """Rows whose pods changed (`dirty`) or whose node was upserted (`node_rows`); None
        when anything may have (replace, namespaces, nominated pods): then the state is
        flushed. `nodes_changed`: nodes were added, removed or relabelled, which moves
        cluster-wide score inputs."""
        if self._state is None:
            return
        if dirty is None:
            self._flush(FlushReason.SNAPSHOT_CHANGED)
        else:
            self._dirty |= dirty
            self._dirty_nodes |= node_rows or set()
            self._rescore_all |= nodes_changed

    def _set_cycle(self, cycle: int, row: int, name: str, succeeded: bool) -> None:
        self.last_cycle, self.last_row, self.last_name = cycle, row, name
        self.succeeded = succeeded

    # ---- GetNodeHint ------------------------------------------------------------------------
    def get_node_hint(
        self, info: PodInfo, snap: Snapshot, cycle: int, rng: np.random.Generator,
        start_row: int,
    ) -> HintResult:
        """A hint for the pod of `cycle`; `start_row` is the row the filter stage would
        visit first now (the visiting order's rotation, which node changes can move)."""
        started = time.perf_counter()
        result = HintResult(None)
        try:
            if not self.enabled:
                return result
            sig, full = self._sign(info)
            self._signature = (cycle, sig, full)
            row = self._compatible(info, snap, cycle, sig, start_row)
            if row is None:
                self.observer.batch_attempt(self.profile, "no_hint")
                return result
            result = self._pick(info, rng)
            self._hinted = (cycle, result.row if result.row is not None else -1)
            self.observer.batch_attempt(
                self.profile, "hint" if result.row is not None else "no_hint"
            )
            return result
        finally:
            if self.enabled:
                self.observer.hint_duration(
                    self.profile, result.row is not None, time.perf_counter() - started
                )

    def _sign(self, info: PodInfo) -> tuple[bytes | None, bool]:
        """The pod's signature, memoized per pod shape: by the conversion cache's shape token
        (Pod.shape) for a run of equal pods, else by the identities of the pod's fields.

        Pods converted from equal messages share every field object but uid and name (the
        server's conversion cache), so the memo is keyed by those objects' identities and holds
        them, which keeps the identities from being reused while the entry lives."""
        pod = info.pod
        if pod.nominated_node_name:  # tried on its node first: no batching for it
            return None, False
        shape = pod.shape
        if shape is not None and shape is self._shape_sig[0]:
            return self._shape_sig[1]
        result = self._sign_fields(info)
        if shape is not None:
            self._shape_sig = (shape, result)
        return result

    def _sign_fields(self, info: PodInfo) -> _Signed:
        pod = info.pod
        fields = tuple(getattr(pod, f) for f in _SIGNED_FIELDS)
        key = tuple(map(id, fields))
        hit = self._sig_memo.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], fields, strict=True)):
            return hit[1]
        result = self.fw.sign(info, self.soft_spread)
        size = len(result[0] or b"")
        if len(self._sig_memo) >= _SIG_MEMO_MAX or self._sig_memo_bytes + size > _SIG_MEMO_BYTES:
            self._sig_memo.clear()
            self._sig_memo_bytes = 0
        if size <= _SIG_MEMO_BYTES:
            self._sig_memo[key] = (fields, result)
            self._sig_memo_bytes += size
        return result

    def _compatible(
        self, info: PodInfo, snap: Snapshot, cycle: int, sig: bytes | None, start_row: int
    ) -> int | None:
        """kube's batchStateCompatible, plus the rescore path; the last chosen row on success."""
        st = self._state
        if st is None or st.nlive == 0:
            return None
        if cycle != self.last_cycle + 1:
            self._flush(FlushReason.POD_SKIPPED)
            return None
        if not self.succeeded:
            self._flush(FlushReason.POD_FAILED)
            return None
        if sig is None or sig != st.signature:
            self._flush(FlushReason.POD_INCOMPATIBLE)
            return None
        if self.clock() > st.created + self.max_age:
            self._flush(FlushReason.EXPIRED)
            return None
        row = self.last_row
        if snap.row_of(self.last_name) != row:
            self._flush(FlushReason.NODE_MISSING)
            return None
        cs = self._cycle_state(info, snap, sig)
        if cs.rejected is not None:
            # cannot follow a success with an equal signature; never hint from a rejection
            self._flush(FlushReason.POD_INCOMPATIBLE)
            return None
        if cs.allowed is not None:
            # a pod narrowed by PreFilter visits a rotation of its own; never stored, and a
            # signature match with such a pod would be a plugin signing too little
            self._flush(FlushReason.POD_INCOMPATIBLE)
            return None
        if start_row != st.start_row:  # node changes moved where the filter stage starts
            self._rotate(st, start_row)
        if self._rescore_all:  # nodes changed: some cached rows may be gone
            gone = np.flatnonzero(st.live & ~snap.alive[st.rows])
            if len(gone):
                self._kill(st, gone)
        if self._dirty:
            ok = self._recheck(info, snap, cs, row)
        else:
            ok = self._recheck_last(info, snap, cs, row)
        if not ok:
            self._flush(FlushReason.NODE_NOT_FULL)
            return None
        if st.nlive == 0:
            self._flush(FlushReason.EMPTY_LIST)
            return None
        if st.full_rescore or self._rescore_all:
            # soft spreading: the last placement moved counts for every node in its domains;
            # a node-set change moved ImageLocality's spread for every node
            self._rescore_all = False
            self._compact(st)
            sr = self.fw.run_score(info, snap, st.rows)
            st.raw, st.states, st.skipped = sr.raw, dict(sr.states), set(sr.skipped)
            self._index(st, info)
        elif len(st.rows) > _COMPACT_MIN and 2 * st.nlive < len(st.rows):
            self._compact(st)  # tombstones outnumber live rows: amortized O(1) per removal
        return row

    def _cycle_state(self, info: PodInfo, snap: Snapshot, sig: bytes) -> CycleState:
        """PreFilter for the pod, or the previous pod's CycleState when nothing but the
        assume of pods of this signature changed since (pre_filter_assume_stable)."""
        memo = self._run
        if (
            memo is not None and memo.signature == sig and memo.generation == snap.generation
            and self.fw.pre_filter_assume_stable
        ):
            return memo.cycle_state
        cs = self.fw.run_pre_filter(info, snap)
        self._run = _RunMemo(sig, snap.generation, cs)
        return cs

    def assumed(self, before: int, after: int) -> None:
        """The pod of this cycle was assumed, taking the generation from `before` to `after`:
        a CycleState valid before stays valid for the next pod of the same signature."""
        memo = self._run
        if memo is not None and memo.generation == before:
            memo.generation = after

    def _recheck_last(self, info: PodInfo, snap: Snapshot, cs: CycleState, row: int) -> bool:
        """The rescore path when only the last chosen row changed (it holds the last pod):
        drop it if it no longer fits, else rescore it. False when it still fits but rescoring
        is off, or the cache holds a sample (kube's node_not_full)."""
        st = self._state
        assert st is not None
        key = row + _SPAN if row < st.start_row else row
        pos = int(st.keys.searchsorted(key))
        present = pos < len(st.rows) and int(st.rows[pos]) == row
        cached = present and bool(st.live[pos])
        # a cached row changed only in usage: it passed every static filter and keeps its
        # static scores
        fits = self.fw.filter_one(cs, info, snap, row, dynamic_only=cached)
        if not fits:
            if cached:
                self._kill_one(st, pos)
            return True
        if not (self.rescore and st.complete):
            return False
        if st.full_rescore:
            return True  # every cached row is rescored next anyway
        memo = self._run  # _cycle_state made it current for this pod
        if cached and memo is not None and memo.pre_scored is not None:
            self._set_one(st, pos, self.fw.score_one(info, snap, row, memo.pre_scored))
            return True
        rows = np.array([row], dtype=np.intp)
        sr = self.fw.run_score(info, snap, rows, dynamic_only=cached, raw_only=True)
        if cached and memo is not None and self.fw.pre_score_assume_stable:
            memo.pre_scored = (sr.states, sr.skipped)
        if present:
            self._set_one(st, pos, {k: int(v[0]) for k, v in sr.raw.items()})
        else:
            self._upsert(st, rows, sr.raw)
        return True

    def _set_one(self, st: _Cached, pos: int, raw: dict[str, int]) -> None:
        """_upsert for one cached row (live or a tombstone), in scalar arithmetic."""
        was_live = bool(st.live[pos])
        for name, new in raw.items():
            col = st.raw.get(name)
            if col is None:
                continue
            u = st.uniform.get(name)
            if u is not None:
                if was_live and int(col[pos]) != u[0]:
                    u[1] -= 1
                if new != u[0]:
                    u[1] += 1
            col[pos] = new
        new_fixed = sum(int(st.raw[name][pos]) * weight for name, weight in st.identity)
        ties = st.ties
        if ties is not None:
            if was_live and int(st.fixed[pos]) == st.best:
                _discard(ties, pos)
            if new_fixed > st.best:
                ties[:] = [pos]
                st.best = new_fixed
            elif new_fixed == st.best:
                bisect.insort(ties, pos)
            if not ties:
                st.ties = None
        st.fixed[pos] = new_fixed
        if not was_live:
            st.live[pos] = True
            st.nlive += 1

    def _recheck(self, info: PodInfo, snap: Snapshot, cs: CycleState, row: int) -> bool:
        """The rescore path for the last chosen row and every row an UpdateSnapshot touched:
        re-filter them, drop those that stopped fitting, rescore and (re)insert the others."""
        st = self._state
        assert st is not None
        check = self._dirty | {row}
        node_dirty = self._dirty_nodes
        self._dirty, self._dirty_nodes = set(), set()
        rows = np.array(sorted(r for r in check if snap.alive[r]), dtype=np.intp)
        pos, present = _positions(st, rows)
        cached = present.copy()
        cached[present] = st.live[pos[present]]
        # cached rows that changed only in usage passed every static filter and keep their
        # static scores; every other row (new, a tombstone, a node upserted) is evaluated in full
        usage_only = cached & np.array([r not in node_dirty for r in rows.tolist()], bool)
        feasible = np.zeros(len(rows), dtype=np.bool_)
        for part, dyn in ((usage_only, True), (~usage_only, False)):
            if part.any():
                feasible[part] = self.fw.run_filter(
                    cs, info, snap, rows[part], dynamic_only=dyn, diagnose=False
                ).feasible
        if not (self.rescore and st.complete) and bool(feasible[rows == row].any()):
            return False
        out = pos[cached & ~feasible]
        if len(out):
            self._kill(st, out)
        for part, dyn in ((usage_only, True), (~usage_only, False)):
            ok = rows[part & feasible]
            if len(ok):
                # Rescore path: these nodes still fit (or fit now); their usage changed.
                sr = self.fw.run_score(info, snap, ok, dynamic_only=dyn, raw_only=True)
                self._upsert(st, ok, sr.raw)
        return True

    # ---- the cache's arrays -------------------------------------------------------------------
    def _index(self, st: _Cached, info: PodInfo) -> None:
        """Derive the running sums from st.raw over the live rows (after a store or rescore)."""
        fw = self.fw
        st.identity = [
            (p.name, fw.weights[p.name]) for p in fw.score
            if p.name not in st.skipped and p.name in st.raw
            and getattr(p, "normalize_is_identity", False)
        ]
        st.fixed = self._fixed(st, slice(None))
        st.fixed[~st.live] = _DEAD
        st.ties = None
        st.uniform, st.uniform_total, st.dense = {}, 0, False
        for p in fw.score:
            if p.name in st.skipped or getattr(p, "normalize_is_identity", False):
                continue
            if not getattr(p, "normalize_uniform", False) or p.name not in st.raw:
                st.dense = True
                continue
            arr = st.raw[p.name]
            live = arr[st.live]
            base = int(live[0]) if len(live) else 0
            st.uniform[p.name] = [base, int(np.count_nonzero(live != base))]
            one = p.normalize(st.states.get(p.name), info, np.array([base], dtype=np.int64))
            st.uniform_total += int(one[0]) * fw.weights[p.name]

    @staticmethod
    def _fixed(st: _Cached, at: Any) -> IntArray:
        """Weighted sum of the identity-normalized plugins' raw scores at `at`."""
        total: IntArray | None = None
        for name, weight in st.identity:
            term = st.raw[name][at] * weight
            total = term if total is None else total + term
        if total is None:
            zeros: IntArray = np.zeros(len(st.rows), dtype=np.int64)[at]
            return zeros
        return total

    def _kill(self, st: _Cached, at: Rows) -> None:
        """Tombstone the live rows at positions `at`: they stopped fitting."""
        for name, u in st.uniform.items():
            u[1] -= int(np.count_nonzero(st.raw[name][at] != u[0]))
        if st.ties is not None:
            for p in at[st.fixed[at] == st.best].tolist():
                _discard(st.ties, p)
            if not st.ties:
                st.ties = None
        st.live[at] = False
        st.fixed[at] = _DEAD
        st.nlive -= len(at)

    @staticmethod
    def _kill_one(st: _Cached, pos: int) -> None:
        """_kill for one position, in scalar arithmetic."""
        for name, u in st.uniform.items():
            if int(st.raw[name][pos]) != u[0]:
                u[1] -= 1
        ties = st.ties
        if ties is not None and int(st.fixed[pos]) == st.best:
            _discard(ties, pos)
            if not ties:
                st.ties = None
        st.live[pos] = False
        st.fixed[pos] = _DEAD
        st.nlive -= 1

    @staticmethod
    def _compact(st: _Cached) -> None:
        """Drop the tombstones."""
        if st.nlive == len(st.rows):
            return
        keep = st.live
        st.ties = None
        st.rows = st.rows[keep]
        st.keys = st.keys[keep]
        st.fixed = st.fixed[keep]
        st.raw = {k: v[keep] for k, v in st.raw.items()}
        st.live = np.ones(len(st.rows), dtype=np.bool_)

    def _rotate(self, st: _Cached, start_row: int) -> None:
        """Reorder the cache to the visiting order that now starts at `start_row`."""
        self._compact(st)
        st.start_row = start_row
        st.ties = None
        keys = _rotated(st.rows, start_row)
        order = np.argsort(keys, kind="stable")
        st.keys = keys[order]
        st.rows = st.rows[order]
        st.fixed = st.fixed[order]
        st.raw = {k: v[order] for k, v in st.raw.items()}

    def _upsert(self, st: _Cached, rows: Rows, raw: dict[str, IntArray]) -> None:
        """Set the raw scores of `rows` (which fit), reviving tombstones and inserting rows not
        cached at their visiting place. A row not live comes with every plugin's score but those
        whose PreScore skipped it: such a plugin's inputs changed for every node (a node change),
        so a full rescore follows, and 0 holds the place until then."""
        pos, present = _positions(st, rows)
        st.ties = None
        if present.any():
            at = pos[present]
            was_live = st.live[at]
            for name, arr in raw.items():
                col = st.raw.get(name)
                if col is None:
                    continue
                new = arr[present]
                u = st.uniform.get(name)
                if u is not None:
                    u[1] += int(np.count_nonzero(new != u[0]))
                    u[1] -= int(np.count_nonzero((col[at] != u[0]) & was_live))
                col[at] = new
            st.fixed[at] = self._fixed(st, at)
            st.nlive += int(np.count_nonzero(~was_live))
            st.live[at] = True
        if present.all():
            return
        # in visiting order: rows on both sides of the wrap can share an insertion point, and
        # np.insert keeps the order it is given there
        new = np.flatnonzero(~present)
        keys = _rotated(rows[new], st.start_row)
        order = np.argsort(keys, kind="stable")
        new, keys = new[order], keys[order]
        where = pos[new]
        count = len(new)
        zeros = np.zeros(count, dtype=np.int64)
        values = {name: raw[name][new] if name in raw else zeros for name in st.raw}
        st.rows = np.insert(st.rows, where, rows[new])
        st.keys = np.insert(st.keys, where, keys)
        st.live = np.insert(st.live, where, True)
        st.raw = {name: np.insert(arr, where, values[name]) for name, arr in st.raw.items()}
        for name, u in st.uniform.items():
            u[1] += int(np.count_nonzero(values[name] != u[0]))
        added = np.zeros(count, dtype=np.int64)
        for name, weight in st.identity:
            added += values[name] * weight
        st.fixed = np.insert(st.fixed, where, added)
        st.nlive += count

    def _pick(self, info: PodInfo, rng: np.random.Generator) -> HintResult:
        """Select host over the cached rows exactly as a full cycle would over its feasible set."""
        st = self._state
        assert st is not None
        if st.nlive == 1:  # kube scores no single feasible node
            return HintResult(int(st.rows[int(np.flatnonzero(st.live)[0])]), 0)
        if not st.dense and not any(u[1] for u in st.uniform.values()):
            # every normalizing plugin is uniform over the live rows: one constant for all,
            # and the best of the fixed sums is kept from one pick to the next
            if st.ties is None:
                st.best = int(st.fixed.max())
                st.ties = np.flatnonzero(st.fixed == st.best).tolist()
            ties = st.ties
            pos = ties[int(rng.integers(len(ties)))] if len(ties) > 1 else ties[0]
            return HintResult(int(st.rows[pos]), st.best + st.uniform_total)
        self._compact(st)
        totals = st.fixed.copy()
        for p in self.fw.score:
            if p.name in st.skipped or getattr(p, "normalize_is_identity", False):
                continue
            norm = p.normalize(st.states.get(p.name), info, st.raw[p.name].copy())
            totals += norm * self.fw.weights[p.name]
        best = int(totals.max())
        found = np.flatnonzero(totals == best)
        pick = int(found[rng.integers(len(found))]) if len(found) > 1 else int(found[0])
        return HintResult(int(st.rows[pick]), best)

    # ---- StoreScheduleResults ---------------------------------------------------------------
    def hint_used(self, cycle: int, row: int, name: str) -> None:
        self._set_cycle(cycle, row, name, True)
        self.batched_pods += 1
        self.observer.batch_attempt(self.profile, "hint_used")

    def _note_unused_hint(self, cycle: int) -> None:
        if self._hinted[0] == cycle:
            self.observer.batch_attempt(self.profile, "hint_not_used")

    def store(
        self, info: PodInfo, cycle: int, row: int, name: str, feasible: Rows, sr: ScoreResult,
        start_row: int, cs: CycleState, generation: int, complete: bool = True,
    ) -> None:
        """After a full, scored cycle: keep its feasible rows and raw scores for the next pod,
        and its CycleState (PreFilter ran at snapshot `generation`). `complete`: the cycle
        visited every node (no percentageOfNodesToScore cut), so `feasible` is all of them."""
        if not self.enabled:
            return
        started = time.perf_counter()
        self._note_unused_hint(cycle)
        self._set_cycle(cycle, row, name, True)
        sig_cycle, sig, full = self._signature
        if sig_cycle != cycle:
            sig, full = self._sign(info)
        if sig is None:
            # counted whether or not a state existed, as kube's StoreScheduleResults does
            self._flush(FlushReason.POD_NOT_BATCHABLE)
            self.observer.store_duration(self.profile, time.perf_counter() - started)
            return
        if cs.record_plugin_metrics:  # a sampled cycle's state would time the hints' filters
            cs = dataclasses.replace(cs, record_plugin_metrics=False)
        self._run = _RunMemo(sig, generation, cs)
        n = len(feasible)
        st = self._state = _Cached(
            signature=sig,
            rows=feasible.copy(),
            raw={k: np.array(v, dtype=np.int64) for k, v in sr.raw.items()},
            states=dict(sr.states),
            skipped=set(sr.skipped),
            created=self.clock(),
            start_row=start_row,
            full_rescore=full,
            complete=complete,
            keys=_rotated(feasible, start_row),
            live=np.ones(n, dtype=np.bool_),
            nlive=n,
        )
        self._index(st, info)
        self._dirty, self._dirty_nodes = set(), set()
        self._rescore_all = False
        self.observer.store_duration(self.profile, time.perf_counter() - started)

    def store_unbatchable(self, cycle: int, row: int, name: str) -> None:
        """A scored cycle whose results cannot serve the next pod (PreFilter narrowed it)."""
        if not self.enabled:
            return
        self._note_unused_hint(cycle)
        self._set_cycle(cycle, row, name, True)
        self._flush(FlushReason.POD_NOT_BATCHABLE)

    def store_unscored(self, cycle: int, row: int, name: str) -> None:
        """One feasible node, placed without scoring: nothing sorted to keep (kube: empty_list)."""
        if not self.enabled:
            return
        self._note_unused_hint(cycle)
        self._set_cycle(cycle, row, name, True)
        self._flush(FlushReason.EMPTY_LIST)  # counted always, as kube does

    def store_failure(self, cycle: int) -> None:
        if not self.enabled:
            return
        self._note_unused_hint(cycle)
        self._set_cycle(cycle, -1, "", False)
