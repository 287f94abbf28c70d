"""schedsvc.v1 messages -> domain types, with the request validation kube's API server would do.

Every error is an InvalidArgument naming the field as the request spells it
(`pods[2].containers[0].requests["cpu"]`), so a client can point at it. A `Converter` is one
server's conversion: its caches (PodCaches, server/cache.py) and the per-field item limit. Pods
are convert_pod.py, selectors and affinity convert_selectors.py, budgets convert_preemption.py;
nodes and namespaces, which repeat little, are converted here without a cache.
"""

from __future__ import annotations

import dataclasses
import operator

from schedsvc import model
from schedsvc.errors import InvalidArgument
from schedsvc.v1 import schedule_pb2 as pb

from .cache import PodCaches
from .convert_pod import TAINT_EFFECTS, pod_without_cache
from .convert_preemption import pdb_from_pb
from .counts import DEFAULT_MAX_ITEMS, check_counts
from .validation import (
    check_key,
    dns1123_label_error,
    dns1123_subdomain_error,
    label_value_error,
    labels,
    resources,
)

__all__ = ["CostlyPod", "Converter"]


class CostlyPod(Exception):  # noqa: N818 - a signal, not an error
    """A pod the caches have not seen is larger than the caller let it convert here (the event
    loop): nothing was converted; convert it where time does not matter."""


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _identity_prefix(uid: bytes, name: bytes) -> bytes:
    """How fields 1 (uid) and 2 (name) open a serialized Pod (wire format, field order)."""
    if len(uid) < 0x80 and len(name) < 0x80:
        if name:
            return b"\n%c%b\x12%c%b" % (len(uid), uid, len(name), name)
        return b"\n%c%b" % (len(uid), uid)
    out = b"\n" + _varint(len(uid)) + uid
    return out + b"\x12" + _varint(len(name)) + name if name else out


# The whole-pod cache stores every field but uid and name, in constructor order, so a hit is one
# positional constructor call (kwargs cost a microsecond more).
_POD_FIELDS = tuple(f.name for f in dataclasses.fields(model.Pod))
if _POD_FIELDS[:2] != ("uid", "name"):  # pragma: no cover - guards a model change
    raise ImportError("convert.py expects model.Pod to open with uid, name")
_pod_rest = operator.attrgetter(*_POD_FIELDS[2:])
# model.Pod is a frozen slotted dataclass without __post_init__: its generated __init__ sets
# each field by name through object.__setattr__, a third of a cached pod's conversion. The
# slots' own setters skip the name lookups (tests/test_convert_pod_shape.py holds the two equal).
if not hasattr(model.Pod, "__slots__") or hasattr(model.Pod, "__post_init__"):  # pragma: no cover
    raise ImportError("convert.py expects model.Pod slotted and without __post_init__")
_SET_UID, _SET_NAME, *_SETS_REST = [model.Pod.__dict__[f].__set__ for f in _POD_FIELDS]
_new_object = object.__new__


def pod_of_shape(uid: str, name: str, rest: tuple[object, ...]) -> model.Pod:
    """model.Pod(uid, name, *rest) (`rest`: every field after name, in order)."""
    pod: model.Pod = _new_object(model.Pod)
    _SET_UID(pod, uid)
    _SET_NAME(pod, name)
    for set_field, value in zip(_SETS_REST, rest):  # noqa: B905 - lengths held by the test
        set_field(pod, value)
    return pod


class Converter:
    """One server's proto -> domain conversion: the caches it keeps and the item limit
    (entries allowed in any repeated or map field of a pod, node or namespace)."""

    def __init__(self, max_items: int = DEFAULT_MAX_ITEMS) -> None:
        self.max_items = max_items
        self.caches = PodCaches()
        self._pods = self.caches.pods

    def pod_from_pb(
        self, msg: pb.Pod, field_prefix: str, max_miss_bytes: int = 0
    ) -> model.Pod:
        """A validated domain Pod; errors name fields under `field_prefix` (e.g. "pods[2]").
        With `max_miss_bytes`, a pod the whole-pod cache misses that is larger than that
        raises CostlyPod before any work (converting costs about a microsecond per byte).

        Pods to schedule mostly differ only in uid and name, so the rest of the serialized
        message is a cache key for the whole converted pod, and the pods it yields share a shape
        token (model.Pod.shape) that lets the engine memoize per-shape work. The serializer
        writes fields in number order, so the rest is what follows the uid/name prefix; if the
        bytes do not open with exactly that prefix we convert without the cache. Bound pods
        (node_name set) skip this cache: they differ in node_name and would only churn it;
        their sub-messages are still cached.
        """
        uid = msg.uid
        if not uid:
            raise InvalidArgument(f"{field_prefix}.uid", "a pod needs a uid")
        if msg.node_name:
            if max_miss_bytes and msg.ByteSize() > max_miss_bytes:
                raise CostlyPod
            return pod_without_cache(msg, field_prefix, self.caches, self.max_items)
        name = msg.name
        data = msg.SerializeToString()
        prefix = _identity_prefix(uid.encode(), name.encode())
        if not data.startswith(prefix):  # pragma: no cover - another serializer's field order
            if max_miss_bytes and len(data) > max_miss_bytes:
                raise CostlyPod
            return pod_without_cache(msg, field_prefix, self.caches, self.max_items)
        key = data[len(prefix) :]
        rest = self._pods.get(key)
        if rest is None:
            if max_miss_bytes and len(key) > max_miss_bytes:
                raise CostlyPod
            # a fresh shape token: pods converted from these bytes are equal but for uid and name
            pod = pod_without_cache(msg, field_prefix, self.caches, self.max_items)
            rest = (*_pod_rest(pod)[:-1], object())
            self._pods.put(key, rest, len(key))
        return pod_of_shape(uid, name, rest)

    def node_from_pb(self, msg: pb.Node, field_prefix: str) -> model.Node:
        """A validated domain Node; errors name fields under `field_prefix`
        (e.g. "upsert_nodes[0]")."""
        if not msg.name:
            raise InvalidArgument(f"{field_prefix}.name", "a node needs a name")
        if (err := dns1123_subdomain_error(msg.name)) is not None:
            raise InvalidArgument(f"{field_prefix}.name", err)
        check_counts(msg, field_prefix, self.max_items)
        taints = []
        seen: set[tuple[str, str]] = set()
        for i, t in enumerate(msg.taints):
            path = f"{field_prefix}.taints[{i}]"
            check_key(t.key, f"{path}.key")
            err = label_value_error(t.value)
            if err is not None:
                raise InvalidArgument(f"{path}.value", err)
            if t.effect not in TAINT_EFFECTS:
                raise InvalidArgument(f"{path}.effect", f"unknown taint effect {t.effect!r}")
            if (t.key, t.effect) in seen:
                raise InvalidArgument(path, f"duplicate taint {t.key!r} with effect {t.effect}")
            seen.add((t.key, t.effect))
            taints.append(model.Taint(key=t.key, value=t.value, effect=t.effect))
        images = []
        for i, im in enumerate(msg.images):
            if im.size_bytes < 0:
                raise InvalidArgument(
                    f"{field_prefix}.images[{i}].size_bytes", "must not be negative"
                )
            images.append(model.ContainerImage(names=tuple(im.names), size_bytes=im.size_bytes))
        return model.Node(
            name=msg.name,
            labels=labels(msg.labels, f"{field_prefix}.labels"),
            taints=tuple(taints),
            allocatable=resources(msg.allocatable, f"{field_prefix}.allocatable"),
            unschedulable=msg.unschedulable,
            images=tuple(images),
        )

    def namespace_from_pb(self, msg: pb.Namespace, field_prefix: str) -> model.Namespace:
        """A validated domain Namespace (its labels feed pod affinity's namespace_selector)."""
        if not msg.name:
            raise InvalidArgument(f"{field_prefix}.name", "a namespace needs a name")
        if (err := dns1123_label_error(msg.name)) is not None:
            raise InvalidArgument(f"{field_prefix}.name", err)
        check_counts(msg, field_prefix, self.max_items)
        return model.Namespace(name=msg.name, labels=labels(msg.labels, f"{field_prefix}.labels"))

    def pdb_from_pb(self, msg: pb.PodDisruptionBudget, prefix: str) -> model.PodDisruptionBudget:
        """A validated PodDisruptionBudget; its selector goes through this server's caches,
        its lists are under the item limit."""
        return pdb_from_pb(msg, prefix, self.caches, self.max_items)
