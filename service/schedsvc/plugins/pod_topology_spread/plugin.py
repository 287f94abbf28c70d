"""The PodTopologySpread plugin (kube's plugin.go): its extension points over filtering.py and
scoring.py, and its batching signatures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...framework import SKIP, FilterResult, PluginTraits, PreFilterResult, Rows, Skip, filter_error
from ...framework.feature import DEFAULT_FEATURES, Features
from ...framework.podinfo import PodInfo
from ...framework.snapshot import IntArray, Snapshot
from ...model import Pod
from . import filtering, scoring, window
from .args import (
    DO_NOT_SCHEDULE,
    NAME,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SYSTEM_DEFAULTING,
    PodTopologySpreadArgs,
)
from .common import Constraint, constraints_for

# kube's Filter reading the PreFilter state a profile did not run (getPreFilterState)
MISSING_PRE_FILTER_STATE = 'reading "PreFilterPodTopologySpread" from cycleState: not found'

__all__ = ["PodTopologySpread", "new"]


class PodTopologySpread:
    name = NAME
    # a signable pod has no DoNotSchedule constraint, so its PreFilter is a Skip; its soft
    # constraints (batching.softSpread) are scored per window from kept counts (window.py)
    traits = PluginTraits(
        pre_filter_assume_stable=True,
        pre_score_assume_stable=True,
        window_scored=True,
    )

    def __init__(self, args: PodTopologySpreadArgs) -> None:
        self.args = args
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        self.default_constraints = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else args.default_constraints
        )

    def constraints(self, pod: Pod, action: str) -> list[Constraint]:
        return constraints_for(pod, action, self.default_constraints)

    # ---- filter ------------------------------------------------------------------------------
    def pre_filter(self, pod: PodInfo, snap: Snapshot) -> PreFilterResult | Skip:
        constraints = self.constraints(pod.pod, DO_NOT_SCHEDULE)
        if not constraints:
            return SKIP
        return filtering.pre_filter(pod, snap, constraints)

    def filter(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult:
        if state is None:  # PreFilter disabled in the profile: kube's Filter errs
            return filter_error(len(rows), MISSING_PRE_FILTER_STATE)
        if not isinstance(state, filtering.FilterState) or not state.constraints:
            return FilterResult(feasible=np.ones(len(rows), dtype=np.bool_))
        return filtering.filter_rows(state, rows)

    # ---- score -------------------------------------------------------------------------------
    def pre_score(self, pod: PodInfo, snap: Snapshot, rows: Rows) -> Any | Skip:
        soft = self._scored_constraints(pod.pod, snap)
        if soft is None:
            return SKIP
        return scoring.pre_score(pod, snap, rows, soft, self._require_all(pod.pod))

    def _scored_constraints(self, p: Pod, snap: Snapshot) -> list[Constraint] | None:
        """The soft constraints PreScore scores by, or None when it skips the pod."""
        if snap.num_nodes == 0:
            return None
        return self.constraints(p, SCHEDULE_ANYWAY) or None

    def _require_all(self, p: Pod) -> bool:
        # Only non-system-default spreading needs every topology key on a node, so nodes
        # without a zone label still get hostname spreading.
        return bool(p.topology_spread_constraints) or not self.system_defaulted

    def score(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> IntArray:
        assert isinstance(state, scoring.ScoreState)
        return scoring.score(state, rows)

    def normalize(self, state: Any, pod: PodInfo, scores: IntArray) -> IntArray:
        if not isinstance(state, scoring.ScoreState):
            return scores
        return scoring.normalize(state, scores)

    # ---- batching: scores per window -----------------------------------------------------
    def window_state(self, pod: PodInfo, snap: Snapshot, rows: Rows) -> Any | Skip:
        soft = self._scored_constraints(pod.pod, snap)
        if soft is None:
            return SKIP
        return window.window_state(pod, snap, rows, soft, self._require_all(pod.pod))

    def window_sync(self, state: Any, snap: Snapshot, rows: Rows) -> None:
        assert isinstance(state, window.WindowState)
        window.window_sync(state, rows)

    def window_scores(self, state: Any, rows: Rows) -> tuple[IntArray, IntArray]:
        assert isinstance(state, window.WindowState)
        return window.window_scores(state, rows)

    # ---- batching ----------------------------------------------------------------------------
    def sign(self, pod: PodInfo) -> bytes | None:
        """Unsignable when spreading applies to the pod (its own or default constraints)."""
        p = pod.pod
        if p.topology_spread_constraints:
            return None
        sel = p.default_selector
        if self.default_constraints and sel is not None and not sel.is_empty:
            return None
        return b""

    def sign_rescored(self, pod: PodInfo) -> bytes | None:
        """A signature for batching that scores this plugin per window (our extension,
        `batching.softSpread`): soft constraints only change scores, which window.py
        recomputes exactly from kept counts. Hard constraints change feasibility across
        nodes, so they stay unsignable. The score reads the pod's namespace, labels
        (self-match), resolved constraints, whether they need every topology key (the pod's
        own constraints do, the system defaults do not, even when they are equal), and, for
        the Honor policies, its node selector, node affinity and tolerations: signed here too,
        since a profile may disable the plugins that would otherwise sign them."""
        p = pod.pod
        if self.constraints(p, DO_NOT_SCHEDULE):
            return None
        soft = self.constraints(p, SCHEDULE_ANYWAY)
        if not soft:
            return self.sign(pod)
        honored: list[object] = []
        if any(c.honor_affinity for c in soft):
            honored += [
                sorted(p.node_selector.items()),
                p.affinity.node_affinity if p.affinity is not None else None,
            ]
        if any(c.honor_taints for c in soft):
            honored.append(p.tolerations)
        return repr(
            (p.namespace, sorted(p.labels.items()), soft, self._require_all(p), honored)
        ).encode()


def new(
    args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
) -> PodTopologySpread:
    return PodTopologySpread(PodTopologySpreadArgs.parse(args))
