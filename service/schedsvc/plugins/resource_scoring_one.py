"""The resource scorers on one row, for batching's rescoring of a single node per hint.

There numpy's per-call cost dominates, so these are resource_scoring.py's formulas on Python
ints (floats converted as Go and numpy convert them), checked against the vectorized kernels on
random clusters in tests/plugins/test_resource_scoring_one_row.py.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

from ..framework import MAX_NODE_SCORE
from ..framework.snapshot import Snapshot
from ..model import CPU, EPHEMERAL_STORAGE, MEMORY
from .resource_scoring import MAX_UTILIZATION, ResourceSpec, is_scalar_resource_name

__all__ = [
    "gather_one",
    "least_allocated_one",
    "most_allocated_one",
    "requested_to_capacity_ratio_one",
    "balanced_allocation_one",
    "balanced_allocation_change_one",
]


def gather_one(
    snap: Snapshot,
    row: int,
    specs: Sequence[ResourceSpec],
    pod_requests: Sequence[int],
    use_requested: bool,
) -> tuple[list[int], list[int]]:
    """gather() for a single row: (allocatable, requested) per scored resource."""
    cols = _cpu_memory_columns(tuple(specs))
    if cols is not None:
        # cpu and memory only (kube's default): their columns are fixed (snapshot.py's
        # _BASE_RESOURCES lead every column block, and compaction keeps them in place)
        allocatable = snap.allocatable[row].tolist()
        used = (snap.requested if use_requested else snap.nonzero_requested)[row].tolist()
        fixed = [allocatable[j] for j in cols]
        return fixed, [
            used[j] + r if a != 0 else 0 for j, a, r in zip(cols, fixed, pod_requests, strict=True)
        ]
    # one row of each column block as Python ints: indexing numpy element by element costs more
    allocatable = snap.allocatable[row].tolist()
    requested = snap.requested[row].tolist()
    nonzero = snap.nonzero_requested[row].tolist() if not use_requested else []
    index = snap.resource_index
    alloc: list[int] = []
    req: list[int] = []
    for spec, pod_req in zip(specs, pod_requests, strict=True):
        name = spec.name
        a = used = 0
        if name in (CPU, MEMORY):
            j = 0 if name == CPU else 1
            a = allocatable[j]
            used = requested[index[name]] if use_requested else nonzero[j]
        elif name == EPHEMERAL_STORAGE:
            col = index[EPHEMERAL_STORAGE]
            a, used = allocatable[col], requested[col]
        elif is_scalar_resource_name(name) and pod_req != 0:
            scol = index.get(name)
            if scol is not None:
                a, used = allocatable[scol], requested[scol]
        alloc.append(a)
        req.append(used + pod_req if a != 0 else 0)
    return alloc, req


@functools.lru_cache(maxsize=64)
def _cpu_memory_columns(specs: tuple[ResourceSpec, ...]) -> tuple[int, ...] | None:
    """Per spec its column when every spec is cpu or memory, else None."""
    if all(spec.name in (CPU, MEMORY) for spec in specs):
        return tuple(0 if spec.name == CPU else 1 for spec in specs)
    return None


def least_allocated_one(alloc: list[int], req: list[int], weights: Sequence[int]) -> int:
    """The weighted mean (floored) over the resources the node has of their free share."""
    total = wsum = 0
    for a, r, w in zip(alloc, req, weights, strict=True):
        if a != 0:
            total += (0 if r > a else (a - r) * MAX_NODE_SCORE // a) * w
            wsum += w
    return total // wsum if wsum > 0 else 0


def most_allocated_one(alloc: list[int], req: list[int], weights: Sequence[int]) -> int:
    """The weighted mean (floored) over the resources the node has of their used share."""
    total = wsum = 0
    for a, r, w in zip(alloc, req, weights, strict=True):
        if a != 0:
            total += min(r, a) * MAX_NODE_SCORE // a * w
            wsum += w
    return total // wsum if wsum > 0 else 0


def _broken_linear_one(p: int, utilization: Sequence[int], score: Sequence[int]) -> int:
    k = next((i for i, u in enumerate(utilization) if p <= u), len(utilization))
    if k >= len(utilization):
        return score[-1]
    if k == 0:
        return score[0]
    num = (score[k] - score[k - 1]) * (p - utilization[k - 1])
    den = utilization[k] - utilization[k - 1]
    q = abs(num) // den
    return score[k - 1] + (-q if num < 0 else q)


def requested_to_capacity_ratio_one(
    alloc: list[int],
    req: list[int],
    weights: Sequence[int],
    utilization: Sequence[int],
    score: Sequence[int],
) -> int:
    total = wsum = 0
    for a, r, w in zip(alloc, req, weights, strict=True):
        if a == 0:
            continue
        util = MAX_UTILIZATION if r > a else r * MAX_UTILIZATION // a
        per = _broken_linear_one(util, utilization, score)
        if per > 0:
            total += per * w
            wsum += w
    return (2 * total + wsum) // (2 * wsum) if wsum > 0 else 0


def balanced_allocation_one(alloc: list[int], req: list[int]) -> int:
    fracs = [min(float(r) / float(a), 1.0) for a, r in zip(alloc, req, strict=True) if a != 0]
    std = 0.0
    if len(fracs) == 2:
        std = abs((fracs[0] - fracs[1]) / 2)
    elif len(fracs) > 2:
        total = 0.0
        for f in fracs:  # resource order, as kube accumulates
            total += f
        mean = total / len(fracs)
        acc = 0.0
        for f in fracs:
            acc += (f - mean) * (f - mean)
        std = math.sqrt(acc / len(fracs))
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_allocation_change_one(
    alloc: list[int], req: list[int], pod_requests: Sequence[int]
) -> int:
    """balanced_allocation_change on one row: 50 + (50 + with - without) / 2, Go's division."""
    without = [r - p if a != 0 else 0 for a, r, p in zip(alloc, req, pod_requests, strict=True)]
    half = MAX_NODE_SCORE // 2
    delta = half + balanced_allocation_one(alloc, req) - balanced_allocation_one(alloc, without)
    q = abs(delta) // 2
    return half + (-q if delta < 0 else q)
