"""A profile's framework: its plugins per extension point, run over blocks of node rows.

The filter chain runs plugin by plugin over the rows still feasible, so a node is judged by the
first plugin that rejects it, exactly as kube's RunFilterPlugins stops at the first failure.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..config import ProfileConfig
from ..framework import (
    SKIP,
    Code,
    FilterOnePlugin,
    FilterPlugin,
    Plugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    Rejection,
    ReservePlugin,
    Rows,
    ScoreOnePlugin,
    ScorePlugin,
    SignPlugin,
    SignRescoredPlugin,
    WindowScorePlugin,
)
from ..framework.podinfo import PodInfo
from ..framework.snapshot import BoolArray, IntArray, Snapshot
from ..plugins.registry import Registry
from .cycle_context import CURRENT
from .observer import NULL_OBSERVER, Observer
from .plugin_error import error_reasons, pre_filter_error_message

__all__ = ["Framework", "CycleState", "Rejection", "BlockResult", "ScoreResult"]


@dataclass(slots=True)
class CycleState:
    """Per-pod, per-cycle plugin state (kube's CycleState, typed per plugin by the plugin)."""

    states: dict[str, Any] = field(default_factory=dict)
    skip_filter: set[str] = field(default_factory=set)
    # PreFilterResult narrowing: names allowed, and the plugins that narrowed
    allowed: frozenset[str] | None = None
    narrowed_by: list[str] = field(default_factory=list)
    # PreFilter rejected the pod outright: (message, plugins)
    rejected: tuple[str, tuple[str, ...], Code] | None = None
    # kube's ShouldRecordPluginMetrics: time each plugin in this (sampled) cycle
    record_plugin_metrics: bool = False


@dataclass(slots=True)
class BlockResult:
    feasible: BoolArray  # over the block
    rejections: list[Rejection]
    error: tuple[int, str] | None = None  # the first Filter Error: (position, kube's message)


@dataclass(slots=True)
class ScoreResult:
    totals: IntArray
    per_plugin: dict[str, IntArray]  # normalized, before weight
    skipped: set[str]
    raw: dict[str, IntArray]  # before normalization (batching renormalizes these)
    states: dict[str, Any]  # PreScore states, which normalize may read


class Framework:
    """The plugins of one profile, instantiated once and shared by its extension points."""

    def __init__(self, profile: ProfileConfig, registry: Registry) -> None:
        self.profile = profile
        self.name = profile.scheduler_name
        names: list[str] = []
        for point in ("preFilter", "filter", "preScore", "score", "reserve"):
            for n in profile.points.get(point, ()):
                if n not in names:
                    names.append(n)
        self.plugins: dict[str, Plugin] = {
            n: registry.new(n, profile.plugin_args.get(n), profile.features) for n in names
        }
        self.pre_filter: list[PreFilterPlugin] = [
            p for n in profile.points["preFilter"]
            if isinstance(p := self.plugins[n], PreFilterPlugin)
        ]
        self.filter: list[FilterPlugin] = [
            p for n in profile.points["filter"] if isinstance(p := self.plugins[n], FilterPlugin)
        ]
        self.pre_score: list[PreScorePlugin] = [
            p for n in profile.points["preScore"]
            if isinstance(p := self.plugins[n], PreScorePlugin)
        ]
        self.score: list[ScorePlugin] = [
            p for n in profile.points["score"] if isinstance(p := self.plugins[n], ScorePlugin)
        ]
        self.reserve: list[ReservePlugin] = [
            p for n in profile.points.get("reserve", ())
            if isinstance(p := self.plugins[n], ReservePlugin)
        ]
        self.weights: dict[str, int] = {p.name: profile.weights.get(p.name, 1) for p in self.score}
        self.generic_workload = profile.features.generic_workload  # read once: preemption asks
        self._derive_batching()
        self.observer: Observer = NULL_OBSERVER  # set by the engine: one report per point

    def _derive_batching(self) -> None:
        """What batching reads of the plugins: who signs, what holds across a run's assumes,
        the scalar paths of the one-row recheck, the plugins scored per window."""
        self.signers: list[SignPlugin] = [
            p for p in self.plugins.values() if isinstance(p, SignPlugin)
        ]
        self.fully_signable = all(isinstance(p, SignPlugin) for p in self.plugins.values())
        self.pre_filter_assume_stable = all(
            p.traits.pre_filter_assume_stable for p in self.pre_filter
        )
        # of the PreScores a dynamic_only run_score runs
        self.pre_score_assume_stable = all(
            p.traits.pre_score_assume_stable for p in self.pre_score
            if not p.traits.score_is_static
        )
        # the dynamic score plugins as score_one walks them: (name, plugin, scalar path)
        self._dynamic_score: list[tuple[str, ScorePlugin, ScoreOnePlugin | None]] = [
            (p.name, p, p if isinstance(p, ScoreOnePlugin) else None) for p in self.score
            if not p.traits.score_is_static
        ]
        # the chain as filter_one walks it: (name, plugin, filter_is_static, scalar path)
        self._filter_chain: list[tuple[str, FilterPlugin, bool, FilterOnePlugin | None]] = [
            (p.name, p, p.traits.filter_is_static, p if isinstance(p, FilterOnePlugin) else None)
            for p in self.filter
        ]
        # plugins batching scores per window (WindowScorePlugin), not from per-row raw scores
        self.window_scored: dict[str, WindowScorePlugin] = {
            p.name: p for p in self.score
            if p.traits.window_scored and isinstance(p, WindowScorePlugin)
        }
        self.window_scored_names = frozenset(self.window_scored)
        # soft spreading may sign what `sign` refuses (batching.softSpread)
        self.rescored_signers: dict[str, SignRescoredPlugin] = {
            p.name: p for p in self.signers if isinstance(p, SignRescoredPlugin)
        }

    # ---- PreFilter ------------------------------------------------------------------------
    def run_pre_filter(self, pod: PodInfo, snap: Snapshot, record: bool = False) -> CycleState:
        """PreFilter for one cycle; `record` samples per-plugin durations (kube: 10%)."""
        started = time.perf_counter()
        cs = self._pre_filter(pod, snap, CycleState(record_plugin_metrics=record))
        status = "Success" if cs.rejected is None else cs.rejected[2]
        self._point("PreFilter", status, started, time.perf_counter())
        return cs

    def _point(self, point: str, status: str, started: float, ended: float) -> None:
        """An extension point ran: into the record of the cycle on this thread, if any."""
        rec = CURRENT.rec
        if rec is not None:
            rec.points.append((point, status, ended - started, ended))
        elif self.observer is not NULL_OBSERVER:
            self.observer.extension_point(self.name, point, status, ended - started)

    def _plugin(self, plugin: str, point: str, status: str, seconds: float) -> None:
        """One plugin's duration in a sampled cycle: into the cycle's record, as _point."""
        rec = CURRENT.rec
        if rec is not None:
            rec.plugins.append((plugin, point, status, seconds))
        elif self.observer is not NULL_OBSERVER:
            self.observer.plugin_duration(plugin, point, status, seconds)

    def _pre_filter(self, pod: PodInfo, snap: Snapshot, cs: CycleState) -> CycleState:
        filter_names = {p.name for p in self.filter}
        record = cs.record_plugin_metrics
        for p in self.pre_filter:
            t0 = time.perf_counter() if record else 0.0
            res = p.pre_filter(pod, snap)
            if record:
                self._plugin(
                    p.name, "PreFilter", _pre_filter_status(res), time.perf_counter() - t0
                )
            if res is SKIP:
                cs.skip_filter.add(p.name)
                continue
            assert isinstance(res, PreFilterResult)
            if res.reject:
                msg = ", ".join(res.reject)
                if res.reject_code is Code.ERROR:
                    msg = pre_filter_error_message(p.name, res.reject[0])
                cs.rejected = (msg, (p.name,), res.reject_code)
                return cs
            cs.states[p.name] = res.state
            if res.node_names is not None:
                cs.narrowed_by.append(p.name)
                cs.allowed = (
                    res.node_names if cs.allowed is None else cs.allowed & res.node_names
                )
        if cs.allowed is not None and not cs.allowed:
            names = cs.narrowed_by
            msg = (
                f"node(s) didn't satisfy plugin {names[0]}"
                if len(names) == 1
                else f"node(s) didn't satisfy plugin(s) {_go_list(sorted(names))} simultaneously"
            )
            cs.rejected = (msg, tuple(names), Code.UNRESOLVABLE)
        # a filter plugin with no PreFilter keeps running
        cs.skip_filter &= filter_names
        return cs

    # ---- Filter ---------------------------------------------------------------------------
    def run_filter(
        self, cs: CycleState, pod: PodInfo, snap: Snapshot, rows: Rows, dynamic_only: bool = False,
        diagnose: bool = True,
    ) -> BlockResult:
        """Run the chain over `rows`; each plugin sees only the rows still feasible.

        `dynamic_only` skips plugins whose verdict reads no usage (filter_is_static), for rows
        known to have passed them and changed only in usage since. Without `diagnose` only the
        feasibility is computed, not the rejections (batching needs no reasons).
        """
        feasible = np.ones(len(rows), dtype=np.bool_)
        live = np.arange(len(rows))  # positions in the block still feasible
        rejections: list[Rejection] = []
        error: tuple[int, str] | None = None
        record = cs.record_plugin_metrics
        for p in self.filter:
            if p.name in cs.skip_filter or live.size == 0:
                continue
            if dynamic_only and p.traits.filter_is_static:
                continue
            sub = rows[live]
            t0 = time.perf_counter() if record else 0.0
            res = p.filter(cs.states.get(p.name), pod, snap, sub)
            ok = res.feasible
            if record:
                self._plugin(
                    p.name, "Filter", "Success" if ok.all() else res.code,
                    time.perf_counter() - t0,
                )
            if ok.all():
                continue
            bad = ~ok
            if not diagnose:
                feasible[live[bad]] = False
                live = live[ok]
                continue
            errors = None
            if res.code is Code.ERROR or Code.ERROR in res.reason_codes.values():
                reasons, errors, err = error_reasons(p.name, res, sub, bad, live)
                if err is not None and (error is None or err[0] < error[0]):
                    error = err
            else:
                reasons = [(r, _as_rows(sub[m & bad])) for r, m in res.reasons if (m & bad).any()]
            rejections.append(Rejection(
                p.name, _as_rows(sub[bad]), reasons, _code(res.code),
                res.unresolvable_rows(sub, bad), errors,
            ))
            feasible[live[bad]] = False
            live = live[ok]
        return BlockResult(feasible, rejections, error)

    def filter_one(
        self, cs: CycleState, pod: PodInfo, snap: Snapshot, row: int, dynamic_only: bool = False
    ) -> bool:
        """run_filter's feasibility for a single row, through the plugins' scalar paths where
        they have one: batching re-checks the last chosen node once per pod."""
        rows: Rows | None = None
        states, skip = cs.states, cs.skip_filter
        for name, p, static, one in self._filter_chain:
            if name in skip or (dynamic_only and static):
                continue
            if one is not None:
                if not one.filter_one(states.get(name), pod, snap, row):
                    return False
                continue
            if rows is None:
                rows = np.array([row], dtype=np.intp)
            if not p.filter(states.get(name), pod, snap, rows).feasible[0]:
                return False
        return True

    # ---- Score ----------------------------------------------------------------------------
    def run_score(
        self, pod: PodInfo, snap: Snapshot, rows: Rows, record: bool = False,
        dynamic_only: bool = False, raw_only: bool = False,
        exclude: frozenset[str] = frozenset(),
    ) -> ScoreResult:
        """PreScore, Score, NormalizeScore and weights; `record` samples per-plugin durations.

        `dynamic_only` leaves out plugins whose score reads no usage (score_is_static): for
        batching, which keeps their raw scores of rows that changed only in usage. With
        `raw_only` normalization and weights are left out too (per_plugin and totals empty).
        Plugins in `exclude` are left out (batching scores window_scored plugins per window).
        """
        started = time.perf_counter()
        states: dict[str, Any] = {}
        skipped: set[str] = set()
        for pre in self.pre_score:
            if (dynamic_only and pre.traits.score_is_static) or pre.name in exclude:
                continue
            t0 = time.perf_counter() if record else 0.0
            st = pre.pre_score(pod, snap, rows)
            if record:
                self._plugin(
                    pre.name, "PreScore", "Skip" if st is SKIP else "Success",
                    time.perf_counter() - t0,
                )
            if st is SKIP:
                skipped.add(pre.name)
            else:
                states[pre.name] = st
        scoring = time.perf_counter()
        self._point("PreScore", "Success", started, scoring)
        totals = np.zeros(len(rows), dtype=np.int64)
        per_plugin: dict[str, IntArray] = {}
        raws: dict[str, IntArray] = {}
        for p in self.score:
            if (dynamic_only and p.traits.score_is_static) or p.name in exclude:
                continue
            if p.name in skipped:
                per_plugin[p.name] = np.zeros(len(rows), dtype=np.int64)
                continue
            st = states.get(p.name)
            t0 = time.perf_counter() if record else 0.0
            raw = np.asarray(p.score(st, pod, snap, rows), dtype=np.int64)
            raws[p.name] = raw
            if raw_only:
                continue
            norm = p.normalize(st, pod, raw.copy())
            if record:
                self._plugin(p.name, "Score", "Success", time.perf_counter() - t0)
            per_plugin[p.name] = norm
            totals += norm * self.weights[p.name]
        self._point("Score", "Success", scoring, time.perf_counter())
        return ScoreResult(totals, per_plugin, skipped, raws, states)

    def evaluate(
        self, cs: CycleState, pod: PodInfo, snap: Snapshot, rows: Rows,
        pre_scored: tuple[dict[str, Any], set[str]] | None,
    ) -> tuple[BoolArray, ScoreResult | None]:
        """Batching's evaluation of `rows` in one pass: feasibility (no reasons), then the raw
        scores (not window_scored) of those that pass, from `pre_scored` (an earlier PreScore
        that holds) or a fresh PreScore; None when no row passes."""
        ok = self.run_filter(cs, pod, snap, rows, diagnose=False).feasible
        frows, exclude = rows[ok], self.window_scored_names
        if len(frows) == 0:
            return ok, None
        if pre_scored is None:
            return ok, self.run_score(pod, snap, frows, raw_only=True, exclude=exclude)
        states, skipped = pre_scored
        raws = {
            p.name: np.asarray(p.score(states.get(p.name), pod, snap, frows), dtype=np.int64)
            for p in self.score if p.name not in skipped and p.name not in exclude
        }
        return ok, ScoreResult(np.zeros(0, dtype=np.int64), {}, skipped, raws, states)

    def score_one(
        self, pod: PodInfo, snap: Snapshot, row: int, pre_scored: tuple[dict[str, Any], set[str]],
        exclude: frozenset[str] = frozenset(),
    ) -> dict[str, int]:
        """Raw scores of the dynamic (not score_is_static) plugins for one row, given their
        PreScore (states, skipped) from an earlier run_score: batching's one-row rescore."""
        states, skipped = pre_scored
        out: dict[str, int] = {}
        rows: Rows | None = None
        for name, p, one in self._dynamic_score:
            if name in skipped or name in exclude:
                continue
            if one is not None:
                out[name] = one.score_one(states.get(name), pod, snap, row)
                continue
            if rows is None:
                rows = np.array([row], dtype=np.intp)
            out[name] = int(p.score(states.get(name), pod, snap, rows)[0])
        return out


def _as_rows(a: Any) -> Rows:
    return np.asarray(a, dtype=np.intp)


def _code(code: Code) -> Code:
    """A rejection's code: an erring plugin's other rows are unresolvable (none is resolvable
    by preemption, which never runs after an Error)."""
    return Code.UNRESOLVABLE if code is Code.ERROR else code


def _pre_filter_status(res: object) -> str:
    """kube's status code name for one PreFilter result."""
    if res is SKIP:
        return "Skip"
    if isinstance(res, PreFilterResult) and res.reject:
        return res.reject_code
    return "Success"


def _go_list(items: list[str]) -> str:
    """Go's %v of a []string: [a b c]."""
    return "[" + " ".join(items) + "]"
