"""kube's selectHost: the best total, a seeded uniform draw among the nodes that share it (kube
v1.35+ pops a score heap whose order among equal totals follows its parallel filter's finds;
docs/differences.md "Ties among the best nodes").

One function for the cycle and for batching's cache, so that a hint and the full cycle it
stands for draw from the same generator in the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..framework import Rows
from ..framework.snapshot import IntArray

__all__ = ["select_host", "best_positions", "select_best"]


def best_positions(totals: IntArray) -> tuple[int, Rows]:
    """The best total and every position holding it, ascending."""
    best = int(np.maximum.reduce(totals))
    ties: Rows = (totals == best).nonzero()[0]  # flatnonzero's result, one call less
    return best, ties


def select_host(ties: Sequence[int] | Rows, rng: np.random.Generator) -> int:
    """A position uniform among `ties`, drawing from `rng` only when there is a choice (a
    lone best consumes no randomness)."""
    if len(ties) > 1:
        return int(ties[int(rng.integers(len(ties)))])
    return int(ties[0])


def select_best(totals: IntArray, rng: np.random.Generator) -> tuple[int, int]:
    """kube's selectHost over `totals` in one call: (the chosen position, the best total)."""
    best = int(np.maximum.reduce(totals))
    ties = (totals == best).nonzero()[0]
    if len(ties) > 1:
        return int(ties[int(rng.integers(len(ties)))]), best
    return int(ties[0]), best
