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

from ..errors import ConfigError
from ..framework import Code, FilterResult, PluginTraits, PreFilterResult, Rows
from ..framework.feature import DEFAULT_FEATURES, Features
from ..framework.podinfo import PodInfo
from ..framework.snapshot import BoolArray, IntArray, Snapshot
from ..model import CPU, EPHEMERAL_STORAGE, MAX_QUANTITY, MEMORY, PODS
from ..names import is_qualified_name
from .resource_scoring import (
    DEFAULT_RESOURCES,
    MAX_CUSTOM_PRIORITY_SCORE,
    ResourceSpec,
    encode_requests,
    gather,
    is_extended_resource_name,
    is_scalar_resource_name,
    least_allocated,
    most_allocated,
    parse_resources,
    reject_unknown_keys,
    requested_to_capacity_ratio,
)
from .resource_scoring_one import (
    gather_one,
    least_allocated_one,
    most_allocated_one,
    requested_to_capacity_ratio_one,
)

__all__ = [
    "NAME",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "ERR_REASON_TOO_MANY_PODS",
    "UtilizationShapePoint",
    "NodeResourcesFitArgs",
    "NodeResourcesFit",
    "FitState",
    "insufficient_reason",
    "new",
]

NAME = "NodeResourcesFit"

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
_STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

ERR_REASON_TOO_MANY_PODS = "Too many pods"

_FIELD = f"pluginConfig[{NAME}].args"


def insufficient_reason(resource: str) -> str:
    """fitsRequest's reason for a resource without room: "Insufficient <name>"."""
    return f"Insufficient {resource}"


# ---- args ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    utilization: int  # 0..100
    score: int  # 0..10 (MaxCustomPriorityScore)


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    """kube's NodeResourcesFitArgs after defaulting (v1 SetDefaults_NodeResourcesFitArgs)."""

    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()
    strategy: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    shape: tuple[UtilizationShapePoint, ...] = ()

    def __post_init__(self) -> None:
        """ValidateNodeResourcesFitArgs, plus the shape NewFit needs for the ratio strategy."""
        for i, res in enumerate(sorted(self.ignored_resources)):
            if not is_qualified_name(res):
                raise ConfigError(f"{_FIELD}.ignoredResources[{i}]", f"invalid name {res!r}")
        for i, group in enumerate(sorted(self.ignored_resource_groups)):
            f = f"{_FIELD}.ignoredResourceGroups[{i}]"
            if "/" in group:
                raise ConfigError(f, "resource group name can't contain '/'")
            if not is_qualified_name(group):
                raise ConfigError(f, f"invalid name {group!r}")
        sf = f"{_FIELD}.scoringStrategy"
        if self.strategy not in _STRATEGIES:
            supported = ", ".join(f'"{s}"' for s in _STRATEGIES)
            raise ConfigError(
                f"{sf}.type", f'Unsupported value: "{self.strategy}": supported values: {supported}'
            )
        for i, r in enumerate(self.resources):
            if r.weight <= 0 or r.weight > 100:
                raise ConfigError(
                    f"{sf}.resources[{i}].weight",
                    f"resource weight of {r.name} not in valid range (0, 100]",
                )
        shape_field = f"{sf}.requestedToCapacityRatio.shape"
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO and not self.shape:
            raise ConfigError(shape_field, "at least one point must be specified")
        for i in range(1, len(self.shape)):
            if self.shape[i - 1].utilization >= self.shape[i].utilization:
                raise ConfigError(
                    f"{shape_field}[{i}].utilization", "values must be sorted in increasing order"
                )
        for i, p in enumerate(self.shape):
            if not 0 <= p.utilization <= 100:
                raise ConfigError(f"{shape_field}[{i}].utilization", "not in valid range [0, 100]")
            if not 0 <= p.score <= MAX_CUSTOM_PRIORITY_SCORE:
                raise ConfigError(
                    f"{shape_field}[{i}].score",
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )

    @classmethod
    def parse(cls, args: Mapping[str, Any] | None) -> NodeResourcesFitArgs:
        """From `pluginConfig[].args` (camelCase, as in the YAML)."""
        if not args:
            return cls()
        reject_unknown_keys(
            args,
            ("apiVersion", "kind", "ignoredResources", "ignoredResourceGroups", "scoringStrategy"),
            _FIELD,
        )
        kind = args.get("kind", "NodeResourcesFitArgs")
        if kind != "NodeResourcesFitArgs":
            raise ConfigError(f"{_FIELD}.kind", f"expected NodeResourcesFitArgs, got {kind!r}")
        ignored = _string_list(args.get("ignoredResources"), f"{_FIELD}.ignoredResources")
        groups = _string_list(args.get("ignoredResourceGroups"), f"{_FIELD}.ignoredResourceGroups")
        strategy = args.get("scoringStrategy")
        if strategy is None:
            return cls(
                ignored_resources=frozenset(ignored), ignored_resource_groups=frozenset(groups)
            )
        sf = f"{_FIELD}.scoringStrategy"
        if not isinstance(strategy, Mapping):
            raise ConfigError(sf, f"must be an object, got {strategy!r}")
        reject_unknown_keys(strategy, ("type", "resources", "requestedToCapacityRatio"), sf)
        stype = strategy.get("type", "")
        if not isinstance(stype, str):
            raise ConfigError(f"{sf}.type", f"must be a string, got {stype!r}")
        resources = parse_resources(strategy.get("resources"), f"{sf}.resources")
        shape: tuple[UtilizationShapePoint, ...] = ()
        rtcr = strategy.get("requestedToCapacityRatio")
        if rtcr is not None:
            rf = f"{sf}.requestedToCapacityRatio"
            if not isinstance(rtcr, Mapping):
                raise ConfigError(rf, f"must be an object, got {rtcr!r}")
            reject_unknown_keys(rtcr, ("shape",), rf)
            shape = _parse_shape(rtcr.get("shape"), f"{rf}.shape")
        return cls(
            ignored_resources=frozenset(ignored),
            ignored_resource_groups=frozenset(groups),
            strategy=stype,
            resources=resources,
            shape=shape,
        )


def _string_list(value: Any, field: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(field, f"must be a list of strings, got {value!r}")
    return list(value)


def _parse_shape(value: Any, field: str) -> tuple[UtilizationShapePoint, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ConfigError(field, f"must be a list, got {value!r}")
    points: list[UtilizationShapePoint] = []
    for i, item in enumerate(value):
        f = f"{field}[{i}]"
        if not isinstance(item, Mapping):
            raise ConfigError(f, f"must be an object, got {item!r}")
        reject_unknown_keys(item, ("utilization", "score"), f)
        u, s = item.get("utilization", 0), item.get("score", 0)
        for key, v in (("utilization", u), ("score", s)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise ConfigError(f"{f}.{key}", f"must be an integer, got {v!r}")
        points.append(UtilizationShapePoint(u, s))
    return tuple(points)


# ---- plugin ----------------------------------------------------------------------------------


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


class NodeResourcesFit:
    name = NAME
    traits = PluginTraits(
        normalize_is_identity=True,  # kube has no NormalizeScore for it
        pre_filter_assume_stable=True,  # reads only the pod
        pre_score_assume_stable=True,  # reads only the pod
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

    def filter(self, state: FitState, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult:
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
