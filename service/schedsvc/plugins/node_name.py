"""NodeName: a pod that names its node (spec.nodeName) fits only there. Static."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..framework import Code, FilterResult, PluginTraits, Rows
from ..framework.feature import DEFAULT_FEATURES, Features
from ..framework.podinfo import PodInfo
from ..framework.snapshot import Snapshot

__all__ = ["NAME", "ERR_REASON", "NodeName", "new"]

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = NAME
    traits = PluginTraits(
        filter_is_static=True,
    )

    def filter(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult:
        wanted = pod.pod.node_name
        if not wanted:
            return FilterResult(feasible=np.ones(len(rows), dtype=np.bool_))
        row = snap.index.get(wanted)
        bad = rows != (row if row is not None else -1)
        return FilterResult(feasible=~bad, reasons=[(ERR_REASON, bad)], code=Code.UNRESOLVABLE)

    def sign(self, pod: PodInfo) -> bytes | None:
        return pod.pod.node_name.encode()


def new(
    args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
) -> NodeName:
    if args:
        raise ConfigError(f"pluginConfig[{NAME}].args", "takes no arguments")
    return NodeName()
