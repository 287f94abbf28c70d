"""WindowCaches of signatures whose run another signature interrupted, kept to resume.

Pods of a few Deployments arrive interleaved (a run of one, then of another, then the first
again). kube flushes its batch state at every change of signature, and the next run starts
with a full cycle and a fresh evaluation of every node. Ours parks the interrupted run's
WindowCache instead, and journals every row whose pods change while it is parked (each assume,
each churned row). When its signature comes back, the cache re-evaluates just those rows, as
the rescore path does after churn, and is exact again: the pod's hint is the full cycle's pick.

Anything the journal cannot express drops every parked cache: a node change, a pod with
pod (anti-)affinity terms (they reach whole topology domains), a nomination, a replace.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ...framework import Rows
from ...framework.snapshot import BoolArray
from .window_cache import WindowCache

__all__ = ["DEFAULT_SERVER_PARKED_BYTES", "ParkedBudget", "ParkedStates"]

# parked caches per profile, and their bytes: a cache holds arrays of node length (~0.5 MB at
# 5000 nodes, ~5 MB at 50,000), so a big cluster keeps fewer (12 at 50,000 nodes)
MAX_PARKED = 16
MAX_PARKED_BYTES = 64 << 20
# parked bytes over every cluster and profile of a server (--max-parked-mib)
DEFAULT_SERVER_PARKED_BYTES = 256 << 20
# journal entries kept; a cache whose missed rows fell off it is dropped (re-evaluating that
# many rows costs about what a fresh evaluation does)
MAX_JOURNAL = 8192


@dataclass(slots=True)
class _Parked:
    cache: WindowCache
    pending: set[int]  # rows its last hint had not re-evaluated yet (the last pick, churn)
    since: int  # journal position when parked: every row journaled from here on changed
    nbytes: int


class ParkedBudget:
    """The parked bytes of every cluster and profile of one server, bounded: tenants share it,
    so a cluster that parks more leaves less to others, never more memory to the server.
    A profile over it evicts its own oldest caches, then parks nothing (batching stays exact;
    an interrupted run just starts afresh, as kube's does). Thread-safe: clusters park under
    their own locks."""

    def __init__(self, max_bytes: int = DEFAULT_SERVER_PARKED_BYTES) -> None:
        self.max_bytes = max_bytes  # <= 0: unbounded
        self.total = 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        with self._lock:
            if 0 < self.max_bytes < self.total + n:
                return False
            self.total += n
            return True

    def give(self, n: int) -> None:
        with self._lock:
            self.total -= n


class _Held:
    """A profile's bytes in the budget: given back when its ParkedStates goes (a deleted
    cluster), by a finalizer that must not hold the ParkedStates itself."""

    __slots__ = ("nbytes",)

    def __init__(self) -> None:
        self.nbytes = 0


def _give_back(budget: ParkedBudget, held: _Held) -> None:
    budget.give(held.nbytes)


class ParkedStates:
    """One profile's parked caches and the journal of rows changed since each was parked."""

    def __init__(self, budget: ParkedBudget | None = None) -> None:
        self._parked: OrderedDict[bytes, _Parked] = OrderedDict()
        self._journal: list[int] = []
        self._base = 0  # absolute position of _journal[0]
        self._budget = budget or ParkedBudget(0)
        self._held = _Held()
        weakref.finalize(self, _give_back, self._budget, self._held)

    @property
    def _bytes(self) -> int:
        return self._held.nbytes

    def _add(self, n: int) -> None:
        self._held.nbytes += n

    def _sub(self, n: int) -> None:
        self._held.nbytes -= n
        self._budget.give(n)

    def __len__(self) -> int:
        return len(self._parked)

    def __contains__(self, signature: bytes) -> bool:
        return signature in self._parked

    def park(self, cache: WindowCache, pending: Iterable[int]) -> None:
        self.drop(cache.signature)
        size = cache.nbytes()
        while not self._budget.take(size):  # the server's budget: this profile's oldest first
            if not self._parked:
                return  # others hold the rest: not parked
            self._sub(self._parked.popitem(last=False)[1].nbytes)
        self._parked[cache.signature] = _Parked(
            cache, set(pending), self._base + len(self._journal), size
        )
        self._add(size)
        while len(self._parked) > 1 and (
            len(self._parked) > MAX_PARKED or self._bytes > MAX_PARKED_BYTES
        ):
            self._sub(self._parked.popitem(last=False)[1].nbytes)

    def changed(self, rows: Iterable[int]) -> None:
        """Rows whose pods changed: every parked cache re-evaluates them when resumed."""
        if not self._parked:
            self._journal.clear()
            return
        self._journal.extend(rows)
        if len(self._journal) > MAX_JOURNAL:
            cut = self._base + len(self._journal) - MAX_JOURNAL // 2
            for sig in [s for s, p in self._parked.items() if p.since < cut]:
                self.drop(sig)
            keep = min((p.since for p in self._parked.values()), default=cut)
            del self._journal[: keep - self._base]
            self._base = keep

    def drop(self, signature: bytes) -> None:
        p = self._parked.pop(signature, None)
        if p is not None:
            self._sub(p.nbytes)

    def clear(self) -> None:
        self._parked.clear()
        self._sub(self._bytes)
        self._journal.clear()

    def resume(self, signature: bytes, alive: BoolArray) -> tuple[WindowCache, Rows] | None:
        """The parked cache of `signature` and the live rows changed since it was parked,
        ascending (`alive`: the snapshot's per-row liveness)."""
        p = self._parked.pop(signature, None)
        if p is None:
            return None
        self._sub(p.nbytes)
        return p.cache, self._changed(p, alive)

    def newest_first(self) -> list[WindowCache]:
        """The parked caches, the one parked last first (it has the fewest rows to redo)."""
        return [p.cache for p in reversed(self._parked.values())]

    def changed_rows(self, signature: bytes, alive: BoolArray) -> Rows:
        """What `resume` would give with the cache of `signature` (parked), which stays."""
        return self._changed(self._parked[signature], alive)

    def _changed(self, p: _Parked, alive: BoolArray) -> Rows:
        changed = np.zeros(len(alive), dtype=np.bool_)
        changed[np.array(self._journal[p.since - self._base:], dtype=np.intp)] = True
        changed[np.array(list(p.pending), dtype=np.intp)] = True
        rows: Rows = np.flatnonzero(changed & alive)
        return rows
