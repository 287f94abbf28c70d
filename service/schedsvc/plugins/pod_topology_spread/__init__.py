"""PodTopologySpread: spread matching pods evenly over topology domains (kube v1.35).

Split as kube splits it: args (configuration and constants), common (constraints and node
masks), filtering (DoNotSchedule), scoring (ScheduleAnyway), plugin (the extension points).
Pods without constraints of their own get the default constraints, applied through
`pod.default_selector` (kube's DefaultSelector).
"""

from __future__ import annotations

from .args import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    NAME,
    SYSTEM_DEFAULT_CONSTRAINTS,
    PodTopologySpreadArgs,
)
from .plugin import PodTopologySpread, new

__all__ = [
    "NAME",
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpreadArgs",
    "PodTopologySpread",
    "new",
]
