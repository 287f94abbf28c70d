"""Kernels shared by NodeResourcesFit and NodeResourcesBalancedAllocation.

kube keeps these in noderesources/resource_allocation.go, least_allocated.go,
most_allocated.go, requested_to_capacity_ratio.go and helper/shape_score.go. Here they are pure
numpy over a block of rows: `gather` turns the snapshot's columns into two [rows, k] int64
matrices (allocatable and requested-with-the-pod, one column per configured resource, zero
where kube skips the resource), and each scorer maps those to one int64 score per row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError
from ..framework import MAX_NODE_SCORE, Rows
from ..framework.snapshot import IntArray, Snapshot
from ..model import CPU, EPHEMERAL_STORAGE, MEMORY
from ..names import is_qualified_name

__all__ = [
    "ResourceSpec",
    "DEFAULT_RESOURCES",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MAX_UTILIZATION",
    "is_extended_resource_name",
    "is_scalar_resource_name",
    "parse_resources",
    "reject_unknown_keys",
    "UtilizationShapePoint",
    "parse_shape",
    "validate_shape",
    "gather",
    "least_allocated",
    "most_allocated",
    "requested_to_capacity_ratio",
    "broken_linear",
    "balanced_allocation",
    "balanced_allocation_change",
    "encode_requests",
]

# kube's config.MaxCustomPriorityScore: shape scores are 0..10, scaled to MaxNodeScore.
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """kube's config.ResourceSpec: a resource scored, with its weight."""

    name: str
    weight: int = 1


DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))

# ---- resource names (k8s.io/kubernetes/pkg/apis/core/v1/helper) --------------------------------



def _is_prefixed_native(name: str) -> bool:
    return "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io."""
    if "/" not in name or _is_prefixed_native(name) or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


def is_scalar_resource_name(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, hugepages-, kubernetes.io/, attachable-volumes-."""
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or _is_prefixed_native(name)
        or name.startswith("attachable-volumes-")
    )


# ---- args ------------------------------------------------------------------------------------


def reject_unknown_keys(obj: Mapping[str, Any], allowed: Sequence[str], field: str) -> None:
    for key in obj:
        if key not in allowed:
            raise ConfigError(f"{field}.{key}", "unknown field")


def _as_int(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(field, f"must be an integer, got {value!r}")
    return value


def _as_mapping(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(field, f"must be an object, got {value!r}")
    return value


def parse_resources(value: Any, field: str) -> tuple[ResourceSpec, ...]:
    """A `resources: [{name, weight}]` list; empty or absent means the cpu/memory default.

    A missing or zero weight defaults to 1 (kube's SetDefaults_*Args); range checks are the
    caller's, since the two plugins validate weights differently.
    """
    if value is None:
        return DEFAULT_RESOURCES
    if not isinstance(value, list):
        raise ConfigError(field, f"must be a list, got {value!r}")
    if not value:
        return DEFAULT_RESOURCES
    out: list[ResourceSpec] = []
    for i, item in enumerate(value):
        f = f"{field}[{i}]"
        m = _as_mapping(item, f)
        reject_unknown_keys(m, ("name", "weight"), f)
        name = m.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{f}.name", "must be a non-empty string")
        weight = _as_int(m.get("weight", 0), f"{f}.weight")
        out.append(ResourceSpec(name, weight or 1))
    return tuple(out)


BoolArray2D = npt.NDArray[np.bool_]


# ---- gathering -------------------------------------------------------------------------------


def gather(
    snap: Snapshot,
    rows: Rows,
    specs: Sequence[ResourceSpec],
    pod_requests: Sequence[int],
    use_requested: bool,
) -> tuple[IntArray, IntArray]:
    """kube's resourceAllocationScorer.score up to the scorer call, for a block of rows.

    Returns (allocatable, requested) of shape [len(specs), len(rows)] (resource-major, so each
    resource is one contiguous row for the 1-D kernels below), requested including the pod.
    cpu/memory read the node's NonZeroRequested unless `use_requested`; every other resource
    reads Requested. A scalar resource the pod does not request, a resource kube does not
    track per node (pods, unknown names) and any resource with zero allocatable on a node are
    (0, 0) there: the scorers skip a zero allocatable.
    """
    n = len(rows)
    alloc = np.zeros((len(specs), n), dtype=np.int64)
    req = np.zeros((len(specs), n), dtype=np.int64)
    for i, (spec, pod_req) in enumerate(zip(specs, pod_requests, strict=True)):
        name = spec.name
        if name in (CPU, MEMORY):
            j = 0 if name == CPU else 1
            a = snap.allocatable[rows, j]
            if use_requested:
                used = snap.requested[rows, snap.resource_index[name]]
            else:
                used = snap.nonzero_requested[rows, j]
        elif name == EPHEMERAL_STORAGE:
            col = snap.resource_index[EPHEMERAL_STORAGE]
            a = snap.allocatable[rows, col]
            used = snap.requested[rows, col]
        elif is_scalar_resource_name(name) and pod_req != 0:
            scol = snap.resource_index.get(name)
            if scol is None:  # no node has it: allocatable 0 everywhere
                continue
            a = snap.allocatable[rows, scol]
            used = snap.requested[rows, scol]
        else:
            continue
        alloc[i] = a
        r = used + pod_req
        r[a == 0] = 0
        req[i] = r
    return alloc, req


# ---- scorers ---------------------------------------------------------------------------------
# Each loops over the few scored resources with 1-D array operations (no per-node Python).


def _weighted_sums(
    per: IntArray, counted: BoolArray2D, weights: IntArray
) -> tuple[IntArray, IntArray]:
    """Per node: sum of weight * score over the counted resources, and the sum of weights."""
    n = per.shape[1]
    total = np.zeros(n, dtype=np.int64)
    wsum = np.zeros(n, dtype=np.int64)
    for j in range(per.shape[0]):
        w = int(weights[j])
        total += per[j] * (counted[j] * w)
        wsum += counted[j] * w
    return total, wsum


def _weighted_mean_floor(per: IntArray, present: BoolArray2D, weights: IntArray) -> IntArray:
    total, wsum = _weighted_sums(per, present, weights)
    out: IntArray = np.where(wsum > 0, total // np.maximum(wsum, 1), 0)
    return out


def least_allocated(alloc: IntArray, req: IntArray, weights: IntArray) -> IntArray:
    """leastResourceScorer: sum(w * (cap - req) * 100 // cap) // sum(w), 0 when req > cap."""
    present = alloc != 0
    safe = np.where(present, alloc, 1)
    per = (alloc - req) * MAX_NODE_SCORE // safe
    per[req > alloc] = 0
    return _weighted_mean_floor(per, present, weights)


def most_allocated(alloc: IntArray, req: IntArray, weights: IntArray) -> IntArray:
    """mostResourceScorer: sum(w * min(req, cap) * 100 // cap) // sum(w)."""
    present = alloc != 0
    safe = np.where(present, alloc, 1)
    per = np.minimum(req, alloc) * MAX_NODE_SCORE // safe
    return _weighted_mean_floor(per, present, weights)


def _go_div(num: IntArray, den: IntArray) -> IntArray:
    """Go's int64 division: truncates toward zero (numpy's // floors)."""
    q: IntArray = np.abs(num) // den
    return np.where(num < 0, -q, q)


def broken_linear(
    p: IntArray, utilization: Sequence[int], score: Sequence[int]
) -> IntArray:
    """helper.BuildBrokenLinearFunction on an array of utilizations (0..100)."""
    us = np.asarray(utilization, dtype=np.int64)
    ss = np.asarray(score, dtype=np.int64)
    k = np.searchsorted(us, p, side="left")  # first i with p <= us[i]
    out = np.empty_like(p)
    last = k >= len(us)
    first = k == 0
    out[last] = ss[-1]
    out[first & ~last] = ss[0]
    mid = ~last & ~first
    if mid.any():
        i = k[mid]
        num = (ss[i] - ss[i - 1]) * (p[mid] - us[i - 1])
        out[mid] = ss[i - 1] + _go_div(num, us[i] - us[i - 1])
    return out


def requested_to_capacity_ratio(
    alloc: IntArray,
    req: IntArray,
    weights: IntArray,
    utilization: Sequence[int],
    score: Sequence[int],
) -> IntArray:
    """requestedToCapacityRatioScorer; `score` already scaled by MaxNodeScore/10.

    Per resource f(req * 100 // cap) (f(100) when req > cap); only resources scoring > 0 count,
    with their weights; the mean is rounded half away from zero (Go's math.Round).
    """
    present = alloc != 0
    safe = np.where(present, alloc, 1)
    util = np.where(req > alloc, MAX_UTILIZATION, req * MAX_UTILIZATION // safe)
    per = broken_linear(util.reshape(-1), utilization, score).reshape(util.shape)
    total, wsum = _weighted_sums(per, present & (per > 0), weights)
    # round(total / wsum) for total >= 0, wsum > 0, in exact integers
    out: IntArray = np.where(wsum > 0, (2 * total + wsum) // (2 * np.maximum(wsum, 1)), 0)
    return out


def balanced_allocation(alloc: IntArray, req: IntArray) -> IntArray:
    """balancedResourceScorer: int((1 - std) * 100) over the fractions req/cap capped at 1.

    Two fractions: std = |(f0 - f1) / 2|; more: the population std, summed in resource order as
    kube does (float64 throughout, so results match bit for bit); fewer: std 0. Absent
    resources contribute exact zeros to the sums, which leaves them bit-identical.
    """
    k, n = alloc.shape
    present = alloc != 0
    frac = req / np.where(present, alloc, 1)
    np.minimum(frac, 1.0, out=frac)
    frac[~present] = 0.0
    count = present.sum(axis=0)
    std = np.zeros(n, dtype=np.float64)
    if k == 2:
        both = count == 2
        std = np.where(both, np.abs((frac[0] - frac[1]) / 2), 0.0)
    elif k > 2:
        total = np.zeros(n, dtype=np.float64)
        for j in range(k):  # resource order, as kube accumulates
            total = total + frac[j]
        rank = np.cumsum(present, axis=0)
        f0 = np.where(present & (rank == 1), frac, 0.0).sum(axis=0)
        f1 = np.where(present & (rank == 2), frac, 0.0).sum(axis=0)
        std = np.where(count == 2, np.abs((f0 - f1) / 2), std)
        many = count > 2
        if many.any():
            mean = total / np.maximum(count, 1)
            acc = np.zeros(n, dtype=np.float64)
            for j in range(k):
                d = frac[j] - mean
                acc = acc + np.where(present[j], d * d, 0.0)
            std = np.where(many, np.sqrt(acc / np.maximum(count, 1)), std)
    out: IntArray = ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
    return out


def balanced_allocation_change(
    alloc: IntArray, req: IntArray, pod_requests: Sequence[int]
) -> IntArray:
    """kube v1.37's balancedResourceScorer: 50 + (50 + with - without) / 2 in Go's integers.

    `with` is balanced_allocation over (alloc, req), req including the pod as gather returns
    it; `without` the same over the node's requests without the pod (req minus the pod's
    request of each resource the node has: the entries kube fills, zero elsewhere). Each
    balance score lies in [50, 100] (a std of fractions in [0, 1] is at most 1/2), so the
    sum is never negative and Go's truncating division is a floor; truncated all the same.
    """
    pod = np.asarray(pod_requests, dtype=np.int64).reshape(-1, 1)
    without = np.where(alloc != 0, req - pod, 0)
    half = MAX_NODE_SCORE // 2
    delta = half + balanced_allocation(alloc, req) - balanced_allocation(alloc, without)
    q = np.abs(delta) // 2
    out: IntArray = half + np.where(delta < 0, -q, q)
    return out


def encode_requests(requests: Mapping[str, int]) -> bytes:
    """Canonical bytes of a request map (sorted `name=value;`), for signatures."""
    return "".join(f"{k}={v};" for k, v in sorted(requests.items())).encode()


@dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    """kube's config UtilizationShapePoint (RequestedToCapacityRatio, VolumeBinding)."""

    utilization: int  # 0..100
    score: int  # 0..10 (MaxCustomPriorityScore)


def parse_shape(value: Any, field: str) -> tuple[UtilizationShapePoint, ...]:
    """A `shape` list of args, each point's keys and types checked (ranges are the caller's)."""
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


def validate_shape(shape: tuple[UtilizationShapePoint, ...], field: str) -> None:
    """kube's validateFunctionShape: utilizations increasing, each in [0, 100], each score in
    [0, MaxCustomPriorityScore] (an empty shape is the caller's to refuse)."""
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            raise ConfigError(
                f"{field}[{i}].utilization", "values must be sorted in increasing order"
            )
    for i, p in enumerate(shape):
        if not 0 <= p.utilization <= 100:
            raise ConfigError(f"{field}[{i}].utilization", "not in valid range [0, 100]")
        if not 0 <= p.score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise ConfigError(
                f"{field}[{i}].score", f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
            )
