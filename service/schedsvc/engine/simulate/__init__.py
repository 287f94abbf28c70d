"""What-if on a fork (issue 27): a simulation's steps, run on a copy-on-write fork of a cluster
that never writes the cluster itself (`fork.py`). `steps.py` holds the domain types the server
converts."""

from __future__ import annotations

from .fork import SIM_PARKED_BYTES, ClusterFork, ForkSettings

__all__ = ["SIM_PARKED_BYTES", "ClusterFork", "ForkSettings"]
