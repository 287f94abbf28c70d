"""Pods a step re-places (a drained node's, scale_up's pending ones) as the server would
receive them: pending, equal pods sharing one shape token."""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterable
from dataclasses import replace

from ...model import Pod

__all__ = ["pending_with_shapes"]

# the fields equal pods share: all but their identity, placement and token
_SHAPE_FIELDS = tuple(
    f.name for f in dataclasses.fields(Pod)
    if f.name not in ("uid", "name", "node_name", "nominated_node_name", "shape")
)
_shape_values = operator.attrgetter(*_SHAPE_FIELDS)


def pending_with_shapes(pods: Iterable[Pod]) -> list[Pod]:
    """The pods as pending pods (node and nomination cleared), equal ones (all fields but uid
    and name) sharing one shape token, as the server's conversion cache gives a run of equal
    pods: PodInfo and the batching signature are then worked out once per run. A pod's own
    token is kept (its equals already share it).

    Pods are equal when every field's repr is (the repr of the pod with uid, name, node and
    nomination cleared, field by field). A field object several pods share (bound pods'
    cached sub-messages) is repr'd once: `seen` holds the objects, so no id is reused while
    it is keyed; a str is its own key (equal strs, equal reprs), any other value its repr
    in a 1-tuple (never equal to a str)."""
    tokens: dict[tuple[object, ...], object] = {}
    seen: dict[int, tuple[object, tuple[str]]] = {}
    out: list[Pod] = []
    for pod in pods:
        token = pod.shape
        if token is None:
            key = tuple(_field_key(v, seen) for v in _shape_values(pod))
            token = tokens.setdefault(key, object())
        out.append(replace(pod, node_name="", nominated_node_name="", shape=token))
    return out


def _field_key(value: object, seen: dict[int, tuple[object, tuple[str]]]) -> object:
    if type(value) is str:
        return value
    hit = seen.get(id(value))
    if hit is None:
        hit = seen[id(value)] = (value, (repr(value),))
    return hit[1]
