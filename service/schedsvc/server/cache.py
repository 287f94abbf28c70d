"""Conversion caches bounded in bytes, holding only what a whole request got through.

Converting a request repeats the same work for sub-messages and strings that recur (containers,
tolerations, label keys, quantities), so results are cached by their serialized or raw form.
Two rules keep a cache from becoming a way to hold the server's memory:

- **Bounded in bytes.** Each entry is charged for its key (and, roughly, the value built from
  it); past the budget the oldest entries go first.
- **Only what a whole request validated.** Entries made while a request converts are pending,
  visible to that request only, and kept when the request converted in full (`request_scope`).
  A rejected request leaves nothing behind, whatever it carried.

A request converts on one thread (the server runs a request's engine work in one executor
call), so pending entries are thread-local. The pod path's caches are a PodCaches each server's
Converter owns; the string checks of validation.py are module-wide (a verdict on a string).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from schedsvc import model

__all__ = ["ConversionCache", "PodCaches", "request_scope"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_ENTRY_OVERHEAD = 200  # dict slot, key object and value object headers, roughly


class _Scope(threading.local):
    pending: dict[tuple[int, Hashable], tuple[ConversionCache[object, object], object, int]] | None
    pending = None


_scope = _Scope()


class ConversionCache(Generic[K, V]):
    """key -> value, at most `max_bytes` of charged size, oldest evicted first."""

    def __init__(self, name: str, max_bytes: int) -> None:
        self.name = name
        self.max_bytes = max_bytes
        self._entries: dict[K, tuple[V, int]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        hit = self._entries.get(key)
        if hit is not None:
            return hit[0]
        pending = _scope.pending
        if pending:
            p = pending.get((id(self), key))
            if p is not None:
                return p[1]  # type: ignore[return-value]
        return None

    def put(self, key: K, value: V, size: int) -> None:
        """Remember `value` (charged `size` bytes of key, as much again for the value built
        from it, which holds copies of the key's strings, plus overhead): pending inside a
        request scope, kept at once outside one."""
        charged = 2 * size + _ENTRY_OVERHEAD
        pending = _scope.pending
        if pending is not None:
            pending[(id(self), key)] = (self, value, charged)  # type: ignore[assignment]
        else:
            self._store(key, value, charged)

    def _store(self, key: K, value: V, charged: int) -> None:
        if charged > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            while self._entries and self._bytes + charged > self.max_bytes:
                first = next(iter(self._entries))
                self._bytes -= self._entries.pop(first)[1]
            self._entries[key] = (value, charged)
            self._bytes += charged

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


# Bytes each pod-path cache may hold. Shapes are few in a real cluster; these hold hundreds of
# them, and all of them together stay a small part of a cluster's memory (tests/test_soak.py).
POD_CACHE_BYTES = 512 * 1024


class PodCaches:
    """The pod conversion caches of one server: sub-messages that repeat across pods, keyed by
    their serialized bytes, and whole pods but for uid and name (Converter.pod_from_pb)."""

    __slots__ = ("containers", "affinities", "tolerations", "spreads", "selectors", "pods")

    def __init__(self, max_bytes: int = POD_CACHE_BYTES) -> None:
        self.containers: ConversionCache[bytes, model.Container] = ConversionCache(
            "containers", max_bytes
        )
        self.affinities: ConversionCache[bytes, model.Affinity] = ConversionCache(
            "affinities", max_bytes
        )
        self.tolerations: ConversionCache[bytes, model.Toleration] = ConversionCache(
            "tolerations", max_bytes
        )
        self.spreads: ConversionCache[
            tuple[bytes, ...], tuple[model.TopologySpreadConstraint, ...]
        ] = ConversionCache("spread constraints", max_bytes)
        self.selectors: ConversionCache[bytes, model.LabelSelector] = ConversionCache(
            "selectors", max_bytes
        )
        self.pods: ConversionCache[bytes, tuple[Any, ...]] = ConversionCache("pods", 2 * max_bytes)


@contextmanager
def request_scope() -> Iterator[None]:
    """Convert one request inside: its cache entries are kept only if the body returns."""
    if _scope.pending is not None:  # nested: the outer scope decides
        yield
        return
    _scope.pending = {}
    try:
        yield
        pending = _scope.pending
        _scope.pending = None
        for (_, key), (cache, value, charged) in pending.items():
            cache._store(key, value, charged)
    finally:
        _scope.pending = None
