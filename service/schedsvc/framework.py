"""Extension points, one small protocol each, as kube's framework/interface.go has them.

Every point works on a *block* of node rows at once (`rows`, an int array of snapshot rows):
filters return a boolean mask and the reasons of the rejected rows, scores an int64 array.
Per-pod work that does not depend on the block is done once, in pre_filter/pre_score, and
handed back as the plugin's own typed state object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .engine.podinfo import PodInfo
from .engine.snapshot import BoolArray, IntArray, Snapshot

__all__ = [
    "MAX_NODE_SCORE",
    "Rows",
    "Code",
    "PreFilterResult",
    "FilterResult",
    "SKIP",
    "Skip",
    "Plugin",
    "PreFilterPlugin",
    "FilterPlugin",
    "PreScorePlugin",
    "ScorePlugin",
    "SignPlugin",
    "default_normalize_score",
]

MAX_NODE_SCORE = 100

Rows = npt.NDArray[np.intp]


class Code:
    UNSCHEDULABLE = "Unschedulable"
    UNRESOLVABLE = "UnschedulableAndUnresolvable"


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
    `reject` rejects the pod on every node with these reasons.
    """

    state: Any = None
    node_names: frozenset[str] | None = None
    reject: tuple[str, ...] = ()
    reject_code: str = Code.UNRESOLVABLE


@dataclass(slots=True)
class FilterResult:
    """`feasible[i]` for each row of the block; `reasons` lists (reason, mask over the block).

    A rejected row's reasons are the entries whose mask is True there, in list order. A row that
    is infeasible must have at least one reason.
    """

    feasible: BoolArray
    reasons: list[tuple[str, BoolArray]] = field(default_factory=list)
    code: str = Code.UNSCHEDULABLE
    # codes per reason when they differ (reason -> code); `code` otherwise
    reason_codes: dict[str, str] = field(default_factory=dict)


@runtime_checkable
class Plugin(Protocol):
    """`name` is kube's plugin name.

    Optional class attributes the runtime reads (default False): `filter_is_static` and
    `score_is_static` say the result depends only on the pod and on what
    `Snapshot.static_generation` tracks (node set, labels, taints, unschedulable, images), never
    on usage; batching then keeps their results for rows that changed only in usage.
    `normalize_is_identity` says normalize returns its input (kube has no NormalizeScore for
    the plugin), so batching can keep a running weighted sum of its raw scores.
    `normalize_uniform` says normalize maps equal raw scores to equal scores whatever their
    number (kube's DefaultNormalizeScore): while a plugin's cached raw scores are all equal,
    batching adds one constant instead of renormalizing every node.
    `pre_filter_assume_stable` says PreFilter's result for a pod the profile can sign does not
    change when a pod of the same signature is assumed: batching then keeps the CycleState
    across a run of such pods instead of running PreFilter for each. `pre_score_assume_stable`
    says the same of PreScore, over any non-empty set of rows.

    An optional `filter_one(state, pod, snap, row) -> bool` is a scalar path for one row, which
    batching's rescore of the last chosen node takes; it must agree with `filter`. An optional
    `score_one(state, pod, snap, row) -> int` is the same for `score`.
    """

    name: str


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
