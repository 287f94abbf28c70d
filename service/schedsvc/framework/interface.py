"""Extension points, one small protocol each, as kube's framework/interface.go has them.

Every point works on a *block* of node rows at once (`rows`, an int array of snapshot rows):
filters return a boolean mask and the reasons of the rejected rows, scores an int64 array.
Per-pod work that does not depend on the block is done once, in pre_filter/pre_score, and
handed back as the plugin's own typed state object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .podinfo import PodInfo
from .snapshot import BoolArray, IntArray, Snapshot

__all__ = [
    "filter_error",
    "MAX_NODE_SCORE",
    "Rows",
    "Code",
    "PluginTraits",
    "NO_TRAITS",
    "PreFilterResult",
    "FilterResult",
    "Rejection",
    "SKIP",
    "Skip",
    "Plugin",
    "PreFilterPlugin",
    "FilterPlugin",
    "PreScorePlugin",
    "ScorePlugin",
    "SignPlugin",
    "ReservePlugin",
    "FilterOnePlugin",
    "ScoreOnePlugin",
    "SignRescoredPlugin",
    "WindowScorePlugin",
    "default_normalize_score",
]

MAX_NODE_SCORE = 100

Rows = npt.NDArray[np.intp]


class Code(StrEnum):
    """kube's fwk.Code for a rejection, spelled as its String(). ERROR is no rejection: the
    plugin could not decide, and kube ends the cycle with the error (no PostFilter)."""

    UNSCHEDULABLE = "Unschedulable"
    UNRESOLVABLE = "UnschedulableAndUnresolvable"
    ERROR = "Error"


@dataclass(frozen=True, slots=True)
class PluginTraits:
    """What a plugin promises about itself, read once when a profile's framework is built.

    Batching trusts these to skip work, so each is a claim a test must hold the plugin to.
    `filter_is_static` / `score_is_static`: the result depends only on the pod and on what
    `Snapshot.static_generation` tracks (node set, labels, taints, unschedulable, images),
    never on usage; batching keeps them for rows that changed only in usage.
    `normalize_is_identity`: kube has no NormalizeScore for the plugin, so batching keeps a
    running weighted sum of its raw scores. `normalize_uniform`: equal raw scores normalize to
    equal scores whatever their number (DefaultNormalizeScore), so while a plugin's cached raw
    scores are all equal batching adds one constant instead of renormalizing.
    `pre_filter_assume_stable`: PreFilter's result for a pod the profile can sign does not
    change when a pod of the same signature is assumed, so a run of such pods keeps its
    CycleState. `pre_score_assume_stable`: the same of PreScore, over any non-empty rows.
    `window_scored`: PreScore reads the set of rows it is given (kube's filteredNodes) or the
    pods of other nodes, so a row's raw score is no fact of its own: batching asks the plugin
    (WindowScorePlugin) for the scores of each window instead of caching raw scores per row.
    `row_usage_only`: Filter and Score of a row read, of the snapshot, only that row's
    `allocatable`, `requested` and `nonzero_requested` and the resource columns (besides the
    pod and the plugin's own PreFilter/PreScore state): rows equal in those get equal verdicts
    and raw scores, whatever their pods, labels or taints. A fill's rounds key their rescoring
    by them (engine/simulate/fill_run.py).
    """

    filter_is_static: bool = False
    score_is_static: bool = False
    normalize_is_identity: bool = False
    normalize_uniform: bool = False
    pre_filter_assume_stable: bool = False
    pre_score_assume_stable: bool = False
    window_scored: bool = False
    row_usage_only: bool = False


NO_TRAITS = PluginTraits()


class Skip:
    """PreFilter/PreScore said Skip: the plugin's Filter/Score do not run for this pod."""

    _instance: Skip | None = None

    def __new__(cls) -> Skip:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "SKIP"


SKIP = Skip()


@dataclass(slots=True)
class PreFilterResult:
    """What pre_filter hands back.

    `state` goes to filter; `node_names` narrows the nodes to evaluate (kube's PreFilterResult,
    nodes outside it are rejected with "node(s) didn't satisfy plugin(s) [Name]");
    `reject` rejects the pod on every node with these reasons; with `reject_code` ERROR it
    is kube's PreFilter Error instead, which ends the cycle with the (first) reason.
    """

    state: Any = None
    node_names: frozenset[str] | None = None
    reject: tuple[str, ...] = ()
    reject_code: Code = Code.UNRESOLVABLE


@dataclass(slots=True)
class FilterResult:
    """`feasible[i]` for each row of the block; `reasons` lists (reason, mask over the block).

    A rejected row's reasons are the entries whose mask is True there, in list order. A row that
    is infeasible must have at least one reason. A reason whose code (`reason_codes`, else
    `code`) is ERROR is kube's Filter Error on its rows: the runtime ends the cycle with it.
    """

    feasible: BoolArray
    reasons: list[tuple[str, BoolArray]] = field(default_factory=list)
    code: Code = Code.UNSCHEDULABLE
    # codes per reason when they differ (reason -> code); `code` otherwise
    reason_codes: dict[str, Code] = field(default_factory=dict)
    # rows (over the block) whose status is UnschedulableAndUnresolvable although `code` is
    # Unschedulable: preemption cannot help there (NodeResourcesFit: a request beyond the
    # node's whole allocatable)
    unresolvable: BoolArray | None = None

    def unresolvable_rows(self, sub: Rows, bad: BoolArray) -> Rows | None:
        """The rejected rows of `sub` whose code is UnschedulableAndUnresolvable under an
        Unschedulable result: by the per-row flag (NodeResourcesFit) or a reason's own code."""
        if self.code in (Code.UNRESOLVABLE, Code.ERROR):
            return None
        mask: BoolArray | None = self.unresolvable
        for reason, m in self.reasons:
            if self.reason_codes.get(reason) == Code.UNRESOLVABLE:
                mask = m if mask is None else mask | m
        if mask is None:
            return None
        mask = mask & bad
        return np.asarray(sub[mask], dtype=np.intp) if mask.any() else None


@dataclass(slots=True)
class Rejection:
    """Rows a plugin rejected in one block, and each reason's rows among them."""

    plugin: str
    rows: Rows
    reasons: list[tuple[str, Rows]]
    code: Code
    # rows among `rows` whose status is UnschedulableAndUnresolvable although `code` is
    # Unschedulable (a resource beyond allocatable, a reason_codes entry): preemption skips them
    unresolvable: Rows | None = None
    # rows among `rows` whose status is kube's Error (their reasons are wrapped as kube's
    # RunFilterPlugins wraps them): the cycle ends with the first in visiting order
    errors: Rows | None = None


@runtime_checkable
class Plugin(Protocol):
    """`name` is kube's plugin name; `traits` what the plugin promises (see PluginTraits)."""

    name: str
    traits: PluginTraits


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, pod: PodInfo, snap: Snapshot) -> PreFilterResult | Skip: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, pod: PodInfo, snap: Snapshot, rows: Rows) -> Any | Skip:
        """`rows` are the feasible nodes; return the state handed to score, or SKIP."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> IntArray: ...

    def normalize(self, state: Any, pod: PodInfo, scores: IntArray) -> IntArray:
        """Over the scores of every feasible node; return `scores` itself when there is none."""
        ...


@runtime_checkable
class SignPlugin(Plugin, Protocol):
    def sign(self, pod: PodInfo) -> bytes | None:
        """The bytes of the pod fields this plugin reads; None makes the pod unsignable."""
        ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, pod: PodInfo, snap: Snapshot, row: int) -> None:
        """kube's Reserve for a pod placed (not dry run) on `row`: record in the snapshot what
        the placement takes, so the next pod sees it. It reads the snapshot afresh rather than
        the cycle's state (a batched pod has none of its own); the cycle's Filter passed there
        under the same lock, so it cannot fail, and no later stage of ours fails: no Unreserve
        (a placed pod the client removes is undone through the snapshot instead)."""
        ...


@runtime_checkable
class FilterOnePlugin(FilterPlugin, Protocol):
    def filter_one(self, state: Any, pod: PodInfo, snap: Snapshot, row: int) -> bool:
        """`filter` for one row, in scalar arithmetic: batching re-checks the last chosen
        node once per pod, where a block of one costs more than the check."""
        ...


@runtime_checkable
class ScoreOnePlugin(ScorePlugin, Protocol):
    def score_one(self, state: Any, pod: PodInfo, snap: Snapshot, row: int) -> int:
        """`score` for one row (raw, before normalize); must agree with `score`."""
        ...


@runtime_checkable
class SignRescoredPlugin(SignPlugin, Protocol):
    def sign_rescored(self, pod: PodInfo) -> bytes | None:
        """A signature for a pod `sign` refuses because its scores reach other nodes (soft
        spreading): batching may serve it if it rescores every cached node per hint."""
        ...


@runtime_checkable
class WindowScorePlugin(ScorePlugin, Protocol):
    """Scores batching reads per window (trait `window_scored`): a state built once over every
    row, kept up to date by the rows whose pods changed, and read for any set of rows exactly
    as PreScore, Score and NormalizeScore over those rows would score them."""

    def window_state(self, pod: PodInfo, snap: Snapshot, rows: Rows) -> Any | Skip:
        """The state over `rows` (every node), or SKIP when PreScore would skip the pod."""
        ...

    def window_sync(self, state: Any, snap: Snapshot, rows: Rows) -> None:
        """The pods on `rows` changed (a pod assumed, churn) since the state was built."""
        ...

    def window_scores(self, state: Any, rows: Rows) -> tuple[IntArray, IntArray]:
        """(raw, normalized) scores of `rows`, as a cycle whose feasible nodes are `rows`."""
        ...


def filter_error(n: int, message: str) -> FilterResult:
    """kube's Filter returning an Error status on every row of a block (the runtime ends the
    cycle with it): what a plugin whose Filter reads its PreFilter state returns when the
    profile disabled that PreFilter (kube's getPreFilterState error, `message`)."""
    return FilterResult(
        np.zeros(n, dtype=np.bool_), [(message, np.ones(n, dtype=np.bool_))], code=Code.ERROR
    )


def default_normalize_score(scores: IntArray, reverse: bool) -> IntArray:
    """kube's helper.DefaultNormalizeScore with MaxNodeScore, vectorized."""
    if scores.size == 0:
        return scores
    max_count = int(scores.max())
    if max_count <= 0:
        if reverse:
            return np.full_like(scores, MAX_NODE_SCORE)
        return scores
    out = MAX_NODE_SCORE * scores // max_count
    if reverse:
        out = MAX_NODE_SCORE - out
    return out
