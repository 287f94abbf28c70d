"""Simulations (issue #27): what-if questions answered on a copy-on-write fork of a cluster
with the unmodified cycle. `fork.py` is the fork every step runs on."""

from __future__ import annotations

from .fork import SIM_PARKED_BYTES, ClusterFork, ForkSettings

__all__ = ["SIM_PARKED_BYTES", "ClusterFork", "ForkSettings"]
