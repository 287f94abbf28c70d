"""NodePorts: the pod's host ports must be free on the node (kube's HostPortInfo rule).

A wanted (protocol, port) on 0.0.0.0 conflicts with that pair in use on any IP; on a specific IP
it conflicts with the pair in use on that IP or on 0.0.0.0. Protocol defaults to TCP, IP to
0.0.0.0. App containers' and sidecars' ports count (kube's GetHostPorts; PodInfo.host_ports).
Reads usage (`snap.host_ports`): not static.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..framework import (
    SKIP,
    Code,
    FilterResult,
    PluginTraits,
    PreFilterResult,
    Rows,
    Skip,
    filter_error,
)
from ..framework.feature import DEFAULT_FEATURES, Features
from ..framework.podinfo import HostPort, PodInfo
from ..framework.snapshot import BoolArray, Snapshot

# kube's Filter reading the PreFilter state a profile did not run (getPreFilterState)
MISSING_PRE_FILTER_STATE = 'reading "PreFilterNodePorts" from cycleState: not found'

__all__ = ["NAME", "ERR_REASON", "DEFAULT_BIND_ALL_HOST_IP", "NodePorts", "wanted_ports", "new"]

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


def wanted_ports(pod: PodInfo) -> tuple[HostPort, ...]:
    """The pod's host ports (hostPort > 0), protocol and IP defaulted as HostPortInfo does."""
    return pod.host_ports


def conflicts(snap: Snapshot, port: HostPort, rows: Rows) -> BoolArray:
    """HostPortInfo.CheckConflict for every row of the block."""
    protocol, number, ip = port
    out = np.zeros(len(rows), dtype=np.bool_)
    in_use = snap.host_ports.get((protocol, number))
    if not in_use:
        return out
    if ip == DEFAULT_BIND_ALL_HOST_IP:
        for counts in in_use.values():
            out |= counts[rows] > 0
        return out
    for key in (DEFAULT_BIND_ALL_HOST_IP, ip):
        on_ip = in_use.get(key)
        if on_ip is not None:
            out |= on_ip[rows] > 0
    return out


class NodePorts:
    name = NAME
    traits = PluginTraits(
        pre_filter_assume_stable=True,  # reads only the pod
    )

    def pre_filter(self, pod: PodInfo, snap: Snapshot) -> PreFilterResult | Skip:
        ports = wanted_ports(pod)
        if not ports:
            return SKIP
        return PreFilterResult(state=ports)

    def filter(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> FilterResult:
        if state is None:  # PreFilter disabled in the profile: kube's Filter errs
            return filter_error(len(rows), MISSING_PRE_FILTER_STATE)
        ports: tuple[HostPort, ...] = state
        bad = np.zeros(len(rows), dtype=np.bool_)
        for p in ports:
            bad |= conflicts(snap, p, rows)
        return FilterResult(feasible=~bad, reasons=[(ERR_REASON, bad)], code=Code.UNSCHEDULABLE)

    def sign(self, pod: PodInfo) -> bytes | None:
        return json.dumps(sorted(wanted_ports(pod)), separators=(",", ":")).encode()


def new(
    args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
) -> NodePorts:
    if args:
        raise ConfigError(f"pluginConfig[{NAME}].args", "takes no arguments")
    return NodePorts()
