"""Engine clusters loaded with nodes and pods, for tests that drive the engine directly
(no gRPC): the Cluster a request would reach, with a fixed tie-break seed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Cluster, Engine, SnapshotUpdate
from schedsvc.model import Node, Pod

__all__ = ["cluster_of"]


def cluster_of(
    nodes: Iterable[Node], pods: Iterable[Pod] = (), *, seed: int = 3, batching: bool = False,
    **config: Any,
) -> Cluster:
    """Cluster "t" of a fresh engine configured by `config` (KubeSchedulerConfiguration keys),
    holding `nodes` and `pods` (bound or nominated as their fields say)."""
    engine = Engine(parse_config(config), seed=seed, batching_enabled=batching)
    c = engine.cluster("t")
    c.update(SnapshotUpdate(upsert_nodes=list(nodes), upsert_pods=list(pods)))
    return c
