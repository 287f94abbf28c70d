"""VolumeBinding's Score under StorageCapacityScoring (kube's scorer.go), over a block.

Per storage class on a node: utilization = requested * 100 // capacity (100 when the capacity
is 0 or short), scored by the shape's broken line; the node's score is the mean over classes,
rounded half away from zero. A node with static bindings is scored by them alone (grouped by
the PV's spec.storageClassName, capacities summed); otherwise by the dynamic provisions that
recorded a capacity object (grouped by the claim's spec.storageClassName, the object's
capacity overwriting, not summing).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...framework.snapshot import BoolArray, IntArray
from ..resource_scoring import broken_linear
from .binder import PodVolumes

__all__ = ["score_pod_volumes"]

# class -> (requested, capacity, present) over the block
_Groups = dict[str, tuple[IntArray, IntArray, BoolArray]]


def _zeros(n: int) -> tuple[IntArray, IntArray, BoolArray]:
    return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.bool_)


def _static_groups(pv: PodVolumes, n: int) -> tuple[_Groups, BoolArray]:
    groups: _Groups = {}
    s = pv.static
    if s is None or not (s.chosen >= 0).any():
        return groups, np.zeros(n, dtype=np.bool_)
    capacity, spec_class = s.pv_columns()
    for k, claim in enumerate(s.claims):
        idx = s.chosen[k]
        valid = idx >= 0
        safe = np.where(valid, idx, 0)
        classes = spec_class[safe]
        for name in sorted(set(classes[valid].tolist())):
            m = valid & (classes == name)
            req, cap, present = groups.setdefault(name, _zeros(n))
            req += np.where(m, np.int64(claim.request or 0), np.int64(0))
            cap += np.where(m, capacity[safe], np.int64(0))
            present |= m
    has: BoolArray = np.asarray((s.chosen >= 0).any(axis=0), dtype=np.bool_)
    return groups, has


def _dynamic_groups(pv: PodVolumes, n: int) -> _Groups:
    groups: _Groups = {}
    for claim, prov, mask in pv.provisions:
        valid = mask & (prov.chosen >= 0)
        if not valid.any():
            continue
        caps = np.asarray([c.capacity or 0 for c in prov.capacities] + [0], dtype=np.int64)
        req, cap, present = groups.setdefault(claim.storage_class_name or "", _zeros(n))
        req += np.where(valid, np.int64(claim.request or 0), np.int64(0))
        cap[:] = np.where(valid, caps[prov.chosen], cap)
        present |= valid
    return groups


def _mean(
    groups: _Groups, use: BoolArray, n: int, shape: tuple[Sequence[int], Sequence[int]]
) -> tuple[IntArray, IntArray]:
    """(sum of class scores, number of classes) over the rows in `use`."""
    total = np.zeros(n, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    for req, cap, present in groups.values():
        m = present & use
        full = (cap == 0) | (req > cap)
        util = np.where(full, np.int64(100), req * 100 // np.where(cap == 0, 1, cap))
        total += np.where(m, broken_linear(util, shape[0], shape[1]), np.int64(0))
        count += m
    return total, count


def score_pod_volumes(
    pv: PodVolumes, shape: tuple[Sequence[int], Sequence[int]]
) -> IntArray:
    """The scores of the block's rows (feasible ones: FindPodVolumes found no reason)."""
    n = len(pv.bound_satisfied)
    static, has_static = _static_groups(pv, n)
    t1, c1 = _mean(static, has_static, n, shape)
    t2, c2 = _mean(_dynamic_groups(pv, n), ~has_static, n, shape)
    total, count = t1 + t2, c1 + c2
    out: IntArray = np.where(count > 0, (2 * total + count) // np.maximum(2 * count, 1), 0)
    return out
