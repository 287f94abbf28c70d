"""Pods a step re-places (a drained node's, scale_up's pending ones) as the server would
receive them: pending, equal pods sharing one shape token."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ...model import Pod

__all__ = ["pending_with_shapes"]


def pending_with_shapes(pods: Iterable[Pod]) -> list[Pod]:
    """The pods as pending pods (node and nomination cleared), equal ones (all fields but uid
    and name) sharing one shape token, as the server's conversion cache gives a run of equal
    pods: PodInfo and the batching signature are then worked out once per run. A pod's own
    token is kept (its equals already share it)."""
    tokens: dict[str, object] = {}
    out: list[Pod] = []
    for pod in pods:
        token = pod.shape
        if token is None:
            key = repr(replace(pod, uid="", name="", node_name="", nominated_node_name=""))
            token = tokens.setdefault(key, object())
        out.append(replace(pod, node_name="", nominated_node_name="", shape=token))
    return out
