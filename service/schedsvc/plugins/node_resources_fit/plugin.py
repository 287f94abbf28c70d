"""NodeResourcesFit: a node must have room for the pod's requests; score by allocation.

kube's noderesources/fit.go. Filter compares the pod's requests (PodRequests: sum of
containers, max with each init container, plus overhead) with allocatable minus requested on
each node; Score applies the configured strategy (LeastAllocated, MostAllocated or
RequestedToCapacityRatio) over the configured resources, reading the nodes' non-zero requests
for cpu and memory. There is no NormalizeScore.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...framework import Code, FilterResult, PluginTraits, PreFilterResult, Rows, filter_error
from ...framework.feature import DEFAULT_FEATURES, Features
from ...framework.podinfo import PodInfo
from ...framework.snapshot import BoolArray, IntArray, Snapshot
from ...model import CPU, EPHEMERAL_STORAGE, MAX_QUANTITY, MEMORY, PODS
from ..resource_scoring import (
    MAX_CUSTOM_PRIORITY_SCORE,
    encode_requests,
    gather,
    is_extended_resource_name,
    is_scalar_resource_name,
    least_allocated,
    most_allocated,
    requested_to_capacity_ratio,
)
from ..resource_scoring_one import (
    gather_one,
    least_allocated_one,
    most_allocated_one,
    requested_to_capacity_ratio_one,
)
from .args import LEAST_ALLOCATED, MOST_ALLOCATED, NAME, NodeResourcesFitArgs

# kube's Filter reading the PreFilter state a profile did not run (getPreFilterState)
MISSING_PRE_FILTER_STATE = 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'

__all__ = [
    "ERR_REASON_TOO_MANY_PODS",
    "NodeResourcesFit",
    "FitState",
    "insufficient_reason",
    "new",
]

ERR_REASON_TOO_MANY_PODS = "Too many pods"


def insufficient_reason(resource: str) -> str:
    """fitsRequest's reason for a resource without room: "Insufficient <name>"."""
    return f"Insufficient {resource}"


@dataclass(frozen=True, slots=True)
class FitState:
    """The pod's filter requests (computePodResourceRequest) resolved to snapshot columns."""

    cpu: int
    memory: int
    ephemeral_storage: int
    # (name, column, quantity), sorted by name; column None: no node or held pod names the
    # resource (allocatable 0 everywhere), and a read-only request must not add a column for it
    scalars: tuple[tuple[str, int | None, int], ...]
    any_request: bool  # kube's early return: a pod requesting nothing checks only the pod count
    # (column, quantity) of every positive request, for the one-row path
    positive: tuple[tuple[int | None, int], ...] = ()
    # (name, column, quantity) of ignored resources the pod requests: not checked against
    # allocatable (kube), but a node's summed usage must stay in int64 (ours)
    ignored: tuple[tuple[str, int, int], ...] = ()

    @staticmethod
    def of(states: Mapping[str, object]) -> FitState | None:
        """The state Fit's PreFilter left among a cycle's per-plugin states; None when it did
        not run (the profile lacks Fit, or its preFilter is disabled)."""
        state = states.get(NAME)
        return state if isinstance(state, FitState) else None

    def requests_by_column(self) -> tuple[tuple[int | None, int], ...]:
        """(column, quantity) of each resource the pod requests a positive amount of and Fit
        checks against allocatable (column None: no node has it); what preemption's reprieve
        must keep room for besides one pod slot."""
        return self.positive


class NodeResourcesFit:
    name = NAME
    traits = PluginTraits(
        normalize_is_identity=True,  # kube has no NormalizeScore for it
        pre_filter_assume_stable=True,  # reads only the pod
        pre_score_assume_stable=True,  # reads only the pod
        row_usage_only=True,  # allocatable, requested, nonzero_requested of the row
    )

    def __init__(self, args: NodeResourcesFitArgs) -> None:
        self.args = args
        self._weights = np.array([r.weight for r in args.resources], dtype=np.int64)
        self._weight_list = [r.weight for r in args.resources]
        self._shape_u = tuple(p.utilization for p in args.shape)
        # MaxNodeScore / MaxCustomPriorityScore, integer as kube computes it
        self._shape_s = tuple(p.score * (100 // MAX_CUSTOM_PRIORITY_SCORE) for p in args.shape)

    # ---- filter ------------------------------------------------------------------------
    def _ignored(self, resource: str) -> bool:
        if not is_extended_resource_name(resource):
            return False
        return (
            resource in self.args.ignored_resources
            or resource.split("/", 1)[0] in self.args.ignored_resource_groups
        )

    def pre_filter(self, pod: PodInfo, snap: Snapshot) -> PreFilterResult:
        req = pod.requests
        scalars: list[tuple[str, int | None, int]] = []
        ignored: list[tuple[str, int, int]] = []
        any_scalar = False
        for name in sorted(req):
            if name in (CPU, MEMORY, EPHEMERAL_STORAGE) or not is_scalar_resource_name(name):
                continue
            any_scalar = True
            qty = req[name]
            if qty == 0:
                continue
            col = snap.resource_col(name)
            if self._ignored(name):
                if col is not None:
                    ignored.append((name, col, qty))
                continue
            # a resource no node has fails everywhere (no column: allocatable 0)
            scalars.append((name, col, qty))
        cpu, mem, eph = req.get(CPU, 0), req.get(MEMORY, 0), req.get(EPHEMERAL_STORAGE, 0)
        any_request = bool(cpu or mem or eph or any_scalar)
        idx = snap.resource_index
        checks: list[tuple[int | None, int]] = [
            (idx[CPU], cpu), (idx[MEMORY], mem), (idx[EPHEMERAL_STORAGE], eph)
        ]
        checks.extend((col, qty) for _, col, qty in scalars)
        state = FitState(
            cpu=cpu,
            memory=mem,
            ephemeral_storage=eph,
            scalars=tuple(scalars),
            any_request=any_request,
            positive=tuple((c, q) for c, q in checks if q > 0) if any_request else (),
            ignored=tuple(ignored),
        )
        return PreFilterResult(state=state)

    def filter(
        self, state: FitState | None, pod: PodInfo, snap: Snapshot, rows: Rows
    ) -> FilterResult:
        if state is None:  # PreFilter disabled in the profile: kube's Filter errs
            return filter_error(len(rows), MISSING_PRE_FILTER_STATE)
        pods_col = snap.resource_index[PODS]
        too_many: BoolArray = snap.requested[rows, pods_col] + 1 > snap.allocatable[rows, pods_col]
        reasons: list[tuple[str, BoolArray]] = [(ERR_REASON_TOO_MANY_PODS, too_many)]
        infeasible = too_many.copy()
        unresolvable = np.zeros(len(rows), dtype=np.bool_)
        if state.any_request:
            idx = snap.resource_index
            checks: list[tuple[str, int | None, int]] = [
                (CPU, idx[CPU], state.cpu),
                (MEMORY, idx[MEMORY], state.memory),
                (EPHEMERAL_STORAGE, idx[EPHEMERAL_STORAGE], state.ephemeral_storage),
            ]
            checks.extend(state.scalars)
            for resource, col, qty in checks:
                if qty <= 0:
                    continue
                if col is None:  # no node has it: allocatable 0, short everywhere
                    short = np.ones(len(rows), dtype=np.bool_)
                    reasons.append((insufficient_reason(resource), short))
                    infeasible |= short
                    unresolvable |= short
                    continue
                alloc = snap.allocatable[rows, col]
                short = qty > alloc - snap.requested[rows, col]
                if short.any():
                    reasons.append((insufficient_reason(resource), short))
                    infeasible |= short
                    unresolvable |= short & (qty > alloc)
            for resource, col, qty in state.ignored:
                # kube does not check ignored resources; we refuse only a node whose summed
                # usage would leave int64 (validation bounds every pod's requests to half)
                short = qty > MAX_QUANTITY - snap.requested[rows, col]
                if short.any():
                    reasons.append((insufficient_reason(resource), short))
                    infeasible |= short
        return FilterResult(
            feasible=~infeasible,
            reasons=reasons,
            code=Code.UNSCHEDULABLE,
            unresolvable=unresolvable,
        )

    def filter_one(self, state: FitState, pod: PodInfo, snap: Snapshot, row: int) -> bool:
        """filter's verdict for one row in scalar arithmetic (batching's rescore path)."""
        alloc = snap.allocatable[row].tolist()
        used = snap.requested[row].tolist()
        pods_col = snap.resource_index[PODS]
        if used[pods_col] + 1 > alloc[pods_col]:
            return False
        for col, qty in state.positive:
            if col is None or qty > alloc[col] - used[col]:
                return False
        for _, col, qty in state.ignored:
            if qty > MAX_QUANTITY - used[col]:
                return False
        return True

    # ---- score -------------------------------------------------------------------------
    def pre_score(self, pod: PodInfo, snap: Snapshot, rows: Rows) -> tuple[int, ...]:
        return self._score_requests(pod)

    def _score_requests(self, pod: PodInfo) -> tuple[int, ...]:
        """The pod's non-zero requests (100m/200Mi per container without one), per resource."""
        nz = pod.nonzero_requests
        return tuple(nz.get(r.name, 0) for r in self.args.resources)

    def score(
        self, state: tuple[int, ...] | None, pod: PodInfo, snap: Snapshot, rows: Rows
    ) -> IntArray:
        """state None: preScore is disabled; kube's Score then computes the requests itself."""
        if len(rows) == 1:  # batching's rescore of one node: the scalar path
            return np.array([self.score_one(state, pod, snap, int(rows[0]))], dtype=np.int64)
        if state is None:
            state = self._score_requests(pod)
        alloc, req = gather(snap, rows, self.args.resources, state, use_requested=False)
        strategy = self.args.strategy
        if strategy == LEAST_ALLOCATED:
            return least_allocated(alloc, req, self._weights)
        if strategy == MOST_ALLOCATED:
            return most_allocated(alloc, req, self._weights)
        return requested_to_capacity_ratio(alloc, req, self._weights, self._shape_u, self._shape_s)

    def score_one(
        self, state: tuple[int, ...] | None, pod: PodInfo, snap: Snapshot, row: int
    ) -> int:
        """score for one row in scalar arithmetic (batching's rescore path)."""
        if state is None:  # preScore disabled, as in score
            state = self._score_requests(pod)
        alloc, req = gather_one(snap, row, self.args.resources, state, use_requested=False)
        weights = self._weight_list
        strategy = self.args.strategy
        if strategy == LEAST_ALLOCATED:
            return least_allocated_one(alloc, req, weights)
        if strategy == MOST_ALLOCATED:
            return most_allocated_one(alloc, req, weights)
        return requested_to_capacity_ratio_one(alloc, req, weights, self._shape_u, self._shape_s)

    def normalize(self, state: Any, pod: PodInfo, scores: IntArray) -> IntArray:
        return scores  # kube's Fit has no ScoreExtensions

    def sign(self, pod: PodInfo) -> bytes | None:
        """Filter reads the requests, Score the non-zero requests of the scored resources."""
        nz = pod.nonzero_requests
        scored = b"".join(f"{r.name}={nz.get(r.name, 0)};".encode() for r in self.args.resources)
        return encode_requests(pod.requests) + b"|" + scored


def new(
    args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
) -> NodeResourcesFit:
    return NodeResourcesFit(NodeResourcesFitArgs.parse(args))
