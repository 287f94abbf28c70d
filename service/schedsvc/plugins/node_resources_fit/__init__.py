"""NodeResourcesFit (kube's noderesources/fit.go): its args (args.py) and the plugin with its
filter and score (plugin.py)."""

from __future__ import annotations

from .args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    NAME,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
    UtilizationShapePoint,
)
from .plugin import ERR_REASON_TOO_MANY_PODS, FitState, NodeResourcesFit, insufficient_reason, new

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
