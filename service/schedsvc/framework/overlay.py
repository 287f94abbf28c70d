"""Copy-on-write views over a snapshot's maps and per-row pod tables, for forks (fork.py).

A fork must never write what its base keeps (the live cluster, or the fork it was made
from), yet copying a map of every pod costs as much as the cluster. An `OverlayMap` reads
through to its base and keeps its own writes and deletions beside it, so it costs what it
changes. It iterates exactly as a dict given the same writes would: the base's order minus
deleted keys, a base key overwritten in place where it was, then keys new to the overlay in
the order they were (last) inserted. Readers that walk `snap.pods` or `snap.nominated` in
order (preemption, the two-pass filter) therefore see a fork as they see the live snapshot.

`RowDicts` is the same idea for `pods_on_row`: a row's dict is copied, order kept, the first
time the fork writes it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import Protocol, TypeVar, overload

__all__ = ["OverlayMap", "OwnedValues", "RowDicts", "RowTable"]

K = TypeVar("K")
V = TypeVar("V")
_D = TypeVar("_D")
_MISSING: object = object()


class OverlayMap(MutableMapping[K, V]):
    """`base` read through, `own` written, `gone` the base keys deleted (or deleted and
    inserted again, which moves them to the end as in a dict). `base` is never written."""

    __slots__ = ("base", "own", "gone", "_len")

    def __init__(self, base: Mapping[K, V]) -> None:
        self.base = base
        self.own: dict[K, V] = {}
        self.gone: set[K] = set()
        self._len = len(base)

    def __getitem__(self, key: K) -> V:
        v = self.own.get(key, _MISSING)
        if v is not _MISSING:
            return v  # type: ignore[return-value]
        if key in self.gone:
            raise KeyError(key)
        return self.base[key]

    @overload
    def get(self, key: K, /) -> V | None: ...
    @overload
    def get(self, key: K, default: V | _D, /) -> V | _D: ...
    def get(self, key: K, default: object = None) -> object:
        v = self.own.get(key, _MISSING)
        if v is not _MISSING:
            return v
        if key in self.gone:
            return default
        return self.base.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.own or (key not in self.gone and key in self.base)

    def __setitem__(self, key: K, value: V) -> None:
        if key not in self:
            self._len += 1
        self.own[key] = value

    def __delitem__(self, key: K) -> None:
        if key in self.own:
            del self.own[key]
            if key in self.base:
                self.gone.add(key)
        elif key in self.base and key not in self.gone:
            self.gone.add(key)
        else:
            raise KeyError(key)
        self._len -= 1

    def pop(self, key: K, default: object = _MISSING) -> V:
        if key in self:
            v = self[key]
            del self[key]
            return v
        if default is _MISSING:
            raise KeyError(key)
        return default  # type: ignore[return-value]

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[K]:
        own, gone, base = self.own, self.gone, self.base
        if not own and not gone:
            yield from base
            return
        for k in base:
            if k not in gone:
                yield k
        for k in own:
            if k in gone or k not in base:
                yield k

    def values(self) -> Iterator[V]:  # type: ignore[override]
        """The values in iteration order (a generator: walk it, do not keep it)."""
        if not self.own and not self.gone:
            return iter(self.base.values())
        return (self[k] for k in self)

    def items(self) -> Iterator[tuple[K, V]]:  # type: ignore[override]
        """The items in iteration order (a generator: walk it, do not keep it)."""
        if not self.own and not self.gone:
            return iter(self.base.items())
        return ((k, self[k]) for k in self)

    def merge_into(self, parent: MutableMapping[K, V]) -> None:
        """Apply this overlay's changes to `parent` (what `base` reads through to): the
        parent then reads, and iterates, as this overlay does."""
        for k in self.gone:
            if k in parent:
                del parent[k]
        for k, v in self.own.items():
            parent[k] = v


class OwnedValues(OverlayMap[K, dict[_D, V]]):
    """An overlay of dicts whose `setdefault` hands out a dict the overlay owns (a copy of
    the base's, order kept): the writer may then change it in place."""

    __slots__ = ()

    def setdefault(self, key: K, default: dict[_D, V] | None = None) -> dict[_D, V]:
        v = self.own.get(key)
        if v is not None:
            return v
        base = self.get(key)
        mine = dict(base) if base is not None else (default if default is not None else {})
        self[key] = mine
        return mine


class RowTable(Protocol[V]):
    """What the snapshot's `pods_on_row` offers: a list's indexing, length and append."""

    def __getitem__(self, row: int, /) -> V: ...
    def __setitem__(self, row: int, value: V, /) -> None: ...
    def __len__(self) -> int: ...
    def append(self, value: V, /) -> None: ...


class RowDicts(RowTable[dict[K, V]]):
    """`pods_on_row` of a fork: the base's row dicts read as they are (never written), a
    row copied (its order kept) the first time the fork changes it (`own`)."""

    __slots__ = ("base", "owned", "_len")

    def __init__(self, base: RowTable[dict[K, V]]) -> None:
        self.base = base
        self.owned: dict[int, dict[K, V]] = {}  # row -> the fork's copy
        self._len = len(base)

    def __getitem__(self, row: int) -> dict[K, V]:
        d = self.owned.get(row)
        return d if d is not None else self.base[row]

    def __setitem__(self, row: int, value: dict[K, V]) -> None:
        if not 0 <= row < self._len:
            raise IndexError(row)
        self.owned[row] = value

    def __len__(self) -> int:
        return self._len

    def append(self, value: dict[K, V]) -> None:
        self.owned[self._len] = value
        self._len += 1

    def own(self, row: int) -> dict[K, V]:
        """The row's dict, the fork's own from now on."""
        d = self.owned.get(row)
        if d is None:
            d = self.owned[row] = dict(self.base[row])
        return d

    def merge_into(self, parent: RowTable[dict[K, V]]) -> None:
        """Hand the rows this view owns to `parent` (what `base` reads through to)."""
        for row in sorted(self.owned):
            if row < len(parent):
                parent[row] = self.owned[row]
            else:
                parent.append(self.owned[row])
