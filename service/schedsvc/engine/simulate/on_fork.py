"""Pods a step re-places (a drained node's, scale_up's pending ones) as the server would
receive them: pending, equal pods sharing one shape token."""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterable, Mapping
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

    Pods are equal as the pods with uid, name, node and nomination cleared compare (`==`):
    a map's entries in any order (a client may send them so: Go's protobuf does), so a key
    is no repr. A field object several pods share (bound pods' cached sub-messages, a
    converted run's every field) is keyed once: `seen` holds the objects, so no id is reused
    while it is keyed (`_key`). Pods that share every field object are keyed once (`by_ids`
    holds their fields, for the same reason)."""
    tokens: dict[tuple[object, ...], object] = {}
    seen: dict[int, tuple[object, object]] = {}
    by_ids: dict[tuple[int, ...], tuple[tuple[object, ...], object]] = {}
    out: list[Pod] = []
    for pod in pods:
        values = _shape_values(pod)
        ids = tuple(map(id, values))
        hit = by_ids.get(ids)
        if hit is None:
            key = tuple([_key(v, seen) for v in values])
            hit = by_ids[ids] = (values, tokens.setdefault(key, object()))
        out.append(replace(pod, node_name="", nominated_node_name="", shape=hit[1]))
    return out


def _key(value: object, seen: dict[int, tuple[object, object]]) -> object:
    """A hashable key, equal exactly for values that compare equal (`==`; a bool is no int
    here, which only splits what no pod holds): a str itself; anything else a tuple: an int
    or None with its class, a sequence item by item, a dataclass by its
    class and compared fields, a mapping by its items whatever their order (its keys are
    strs), any other value with its class. Worked out once per object (`seen` holds them)."""
    kind = type(value)
    if kind is str:
        return value
    if kind is int or value is None:
        return (kind, value)
    hit = seen.get(id(value))
    if hit is not None:
        return hit[1]
    out: object
    if kind is tuple or kind is list:
        out = (kind, tuple([_key(v, seen) for v in value]))  # type: ignore[attr-defined]
    elif (names := _compared(kind, value)) is not None:
        out = (kind, tuple([_key(getattr(value, n), seen) for n in names]))
    elif isinstance(value, Mapping):
        try:  # labels, selectors, requests: strs to strs or ints, equal as their item sets
            out = (Mapping, frozenset(value.items()))
        except TypeError:  # a value no hash compares
            out = (Mapping, tuple(sorted([(k, _key(v, seen)) for k, v in value.items()])))
    else:
        out = (kind, value)
    seen[id(value)] = (value, out)
    return out


# per class: the fields its `==` compares when it is a dataclass, else None (asked once)
_COMPARED: dict[type, tuple[str, ...] | None] = {}


def _compared(kind: type, value: object) -> tuple[str, ...] | None:
    names = _COMPARED.get(kind, ())
    if names == ():
        names = _COMPARED[kind] = (
            tuple(f.name for f in dataclasses.fields(value) if f.compare)  # type: ignore[arg-type]
            if dataclasses.is_dataclass(kind) else None
        )
    return names
