"""NodeUnschedulable: nodes with spec.unschedulable reject pods that do not tolerate it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..framework import Code, FilterResult, PluginTraits, Rows
from ..framework.feature import DEFAULT_FEATURES, Features
from ..framework.podinfo import PodInfo
from ..framework.snapshot import Snapshot
from ..model import Taint

__all__ = ["NAME", "NodeUnschedulable", "new", "ERR_REASON_UNSCHEDULABLE"]

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
# kube's v1.TaintNodeUnschedulable: a pod tolerating it may land on a cordoned node.
_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


class NodeUnschedulable:
    name = NAME
    traits = PluginTraits(
        filter_is_static=True,  # reads only spec.unschedulable, tracked by static_generation
    )

    def filter(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult:
        tolerated = any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in pod.pod.tolerations)
        if tolerated:
            return FilterResult(feasible=np.ones(len(rows), dtype=np.bool_))
        bad = snap.unschedulable[rows]
        return FilterResult(
            feasible=~bad, reasons=[(ERR_REASON_UNSCHEDULABLE, bad)], code=Code.UNRESOLVABLE
        )

    def sign(self, pod: PodInfo) -> bytes | None:
        tolerated = any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in pod.pod.tolerations)
        return b"1" if tolerated else b"0"


def new(
    args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
) -> NodeUnschedulable:
    if args:
        raise ConfigError(f"pluginConfig[{NAME}].args", "takes no arguments")
    return NodeUnschedulable()
