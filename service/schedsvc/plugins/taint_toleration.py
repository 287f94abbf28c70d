"""TaintToleration: NoSchedule/NoExecute taints must be tolerated; untolerated PreferNoSchedule
taints lower the score.

Tolerance is evaluated once per distinct taint of the cluster (`snap.taint_list`), giving a
boolean per taint column; a block of rows then needs one gather over `snap.taint_matrix`.
Reads only node taints: static.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..framework import Code, FilterResult, PluginTraits, Rows, default_normalize_score
from ..framework.feature import DEFAULT_FEATURES, Features
from ..framework.podinfo import PodInfo
from ..framework.snapshot import BoolArray, IntArray, Snapshot
from ..model import Taint, Toleration

__all__ = [
    "NAME",
    "ERR_REASON_NOT_MATCH",
    "TaintToleration",
    "new",
]

NAME = "TaintToleration"
ERR_REASON_NOT_MATCH = "node(s) had untolerated taint(s)"

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
_FILTER_EFFECTS = frozenset({NO_SCHEDULE, NO_EXECUTE})


def untolerated_columns(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: frozenset[str]
) -> BoolArray:
    """Per taint column: its effect is in `effects` and no toleration tolerates it."""
    return np.fromiter(
        (
            t.effect in effects and not any(tol.tolerates(t) for tol in tolerations)
            for t in taints
        ),
        dtype=np.bool_,
        count=len(taints),
    )


@dataclass(frozen=True, slots=True)
class _ScoreState:
    tolerations: tuple[Toleration, ...]  # those with effect PreferNoSchedule or empty


class TaintToleration:
    name = NAME
    traits = PluginTraits(
        filter_is_static=True,
        score_is_static=True,
        normalize_uniform=True,  # DefaultNormalizeScore, reversed
    )

    def filter(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult:
        cols = np.flatnonzero(
            untolerated_columns(snap.taint_list, pod.pod.tolerations, _FILTER_EFFECTS)
        )
        if cols.size == 0:
            return FilterResult(feasible=np.ones(len(rows), dtype=np.bool_))
        bad = np.asarray(snap.taint_matrix[np.ix_(rows, cols)].any(axis=1), dtype=np.bool_)
        return FilterResult(
            feasible=~bad, reasons=[(ERR_REASON_NOT_MATCH, bad)], code=Code.UNRESOLVABLE
        )

    def pre_score(self, pod: PodInfo, snap: Snapshot, rows: Rows) -> _ScoreState:
        # An empty effect means every effect, PreferNoSchedule included.
        tols = tuple(
            t for t in pod.pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)
        )
        return _ScoreState(tolerations=tols)

    def score(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> IntArray:
        if not isinstance(state, _ScoreState):
            state = self.pre_score(pod, snap, rows)
        cols = np.flatnonzero(
            untolerated_columns(
                snap.taint_list, state.tolerations, frozenset({PREFER_NO_SCHEDULE})
            )
        )
        if cols.size == 0:
            return np.zeros(len(rows), dtype=np.int64)
        out: IntArray = snap.taint_matrix[np.ix_(rows, cols)].sum(axis=1, dtype=np.int64)
        return out

    def normalize(self, state: Any, pod: PodInfo, scores: IntArray) -> IntArray:
        return default_normalize_score(scores, reverse=True)

    def sign(self, pod: PodInfo) -> bytes | None:
        tols = sorted(
            {(t.key, t.operator or "Equal", t.value, t.effect) for t in pod.pod.tolerations}
        )
        return json.dumps(tols, separators=(",", ":")).encode()


def new(
    args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
) -> TaintToleration:
    if args:
        raise ConfigError(f"pluginConfig[{NAME}].args", "takes no arguments")
    return TaintToleration()
