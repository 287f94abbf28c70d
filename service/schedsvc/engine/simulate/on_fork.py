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
    pods: PodInfo and the batching signature are then worked out once per run, and a drain
    takes equal pods together. A pod's own token is not kept: equal pods may come with
    different tokens (a pod a drain moved earlier in the step carries that drain's token, its
    equals bound there none), and a token says nothing of pods that hold another.

    Pods are equal when every field's repr is (the repr of the pod with uid, name, node and
    nomination cleared, field by field). A field object several pods share (bound pods'
    cached sub-messages, a converted run's every field) is repr'd once: `seen` holds the
    objects, so no id is reused while it is keyed; a str is its own key (equal strs, equal
    reprs), any other value its repr in a 1-tuple (never equal to a str). Pods that share
    every field object are keyed once (`by_ids` holds their fields, for the same reason)."""
    tokens: dict[tuple[object, ...], object] = {}
    seen: dict[int, tuple[object, tuple[str]]] = {}
    by_ids: dict[tuple[int, ...], tuple[tuple[object, ...], object]] = {}
    out: list[Pod] = []
    for pod in pods:
        values = _shape_values(pod)
        ids = tuple(map(id, values))
        hit = by_ids.get(ids)
        if hit is None:
            key = tuple(_field_key(v, seen) for v in values)
            hit = by_ids[ids] = (values, tokens.setdefault(key, object()))
        out.append(replace(pod, node_name="", nominated_node_name="", shape=hit[1]))
    return out


def _field_key(value: object, seen: dict[int, tuple[object, tuple[str]]]) -> object:
    if type(value) is str:
        return value
    hit = seen.get(id(value))
    if hit is None:
        hit = seen[id(value)] = (value, (repr(value),))
    return hit[1]
