"""Pods matching a (namespace, label selector) per node row, kept up to date incrementally.

PodTopologySpread (and anything else that counts "pods of this kind on each node") asks for the
count array of a (namespace, selector) pair. The first request scans the snapshot's pods once;
from then on the array follows every pod added or removed through the PodListener hooks, so a
scheduling cycle reads it in O(1) and per-domain totals are one `np.bincount` away.

Entries are kept in least-recently-used order and bounded, so pods whose selectors are unique
(matchLabelKeys on a pod-template hash, for instance) cannot grow the index without limit.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from ..model import LabelSelector
from .snapshot import PodRecord, Snapshot

__all__ = ["SelectorCounts", "CountArray"]

CountArray = npt.NDArray[np.int32]

DEFAULT_MAX_ENTRIES = 256




class SelectorCounts:
    """A PodListener: for each (namespace, selector) asked for, an int32 count per row.

    Counts cover the pods the snapshot holds on nodes (bound or assumed), never the pods that are
    only nominated, as kube's NodeInfo.Pods does, nor terminating ones (a deletionTimestamp),
    which kube's countPodsMatchSelector skips. Arrays handed out are live views of the index:
    read them within the cycle, never write to them.
    """

    def __init__(self, snap: Snapshot, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        # weakly: the snapshot holds its listeners, and a cycle would leave a replaced
        # snapshot to the collector's full pass instead of freeing it at once
        self._snap: Snapshot = weakref.proxy(snap)
        self._capacity = snap.capacity
        self._max_entries = max_entries
        # namespace -> selector -> counts per row
        self._by_ns: dict[str, dict[LabelSelector, CountArray]] = {}
        self._lru: OrderedDict[tuple[str, LabelSelector], None] = OrderedDict()
        # namespace -> (key, value) -> the selectors whose first matchLabels pair it is: a pod
        # can match those only if it carries the pair, so an assume looks at its own labels'
        # selectors, not at every Deployment's; selectors without matchLabels are `_unkeyed`
        self._keyed: dict[str, dict[tuple[str, str], set[LabelSelector]]] = {}
        self._unkeyed: dict[str, set[LabelSelector]] = {}

    @classmethod
    def for_snapshot(cls, snap: Snapshot) -> SelectorCounts:
        """The index registered on `snap`, registering one the first time."""
        return snap.listener_of(cls, lambda: cls(snap))

    def __len__(self) -> int:
        return len(self._lru)

    def counts(self, namespace: str, selector: LabelSelector) -> CountArray:
        """Pods in `namespace` whose labels match `selector`, per row (length = capacity)."""
        return self.counts_canonical(namespace, selector.canonical())

    def peek(self, namespace: str, sel: LabelSelector) -> CountArray | None:
        """The kept counts of a canonical selector, or None when not kept; leaves its
        recency alone (a per-pod read, where counts_canonical's bookkeeping would cost more)."""
        per_ns = self._by_ns.get(namespace)
        return per_ns.get(sel) if per_ns is not None else None

    def counts_canonical(self, namespace: str, sel: LabelSelector) -> CountArray:
        """`counts` for a selector already canonical: a batch asks once per pod."""
        key = (namespace, sel)
        per_ns = self._by_ns.get(namespace)
        arr = per_ns.get(sel) if per_ns is not None else None
        if arr is not None:
            self._lru.move_to_end(key)
            return arr
        arr = np.zeros(self._capacity, dtype=np.int32)
        index = self._snap.index
        for rec in self._snap.pods.values():
            pod = rec.pod
            if pod.namespace == namespace and not pod.terminating and sel.matches(pod.labels):
                arr[index[rec.node_name]] += 1
        self._by_ns.setdefault(namespace, {})[sel] = arr
        self._lru[key] = None
        self._index(namespace, sel, add=True)
        while len(self._lru) > self._max_entries:
            (old_ns, old_sel), _ = self._lru.popitem(last=False)
            entries = self._by_ns[old_ns]
            del entries[old_sel]
            self._index(old_ns, old_sel, add=False)
            if not entries:
                del self._by_ns[old_ns]
        return arr

    def _index(self, namespace: str, sel: LabelSelector, add: bool) -> None:
        if sel.match_labels:
            per_pair = self._keyed.setdefault(namespace, {})
            pair = sel.match_labels[0]
            if add:
                per_pair.setdefault(pair, set()).add(sel)
            else:
                per_pair[pair].discard(sel)
                if not per_pair[pair]:
                    del per_pair[pair]
        elif add:
            self._unkeyed.setdefault(namespace, set()).add(sel)
        else:
            self._unkeyed[namespace].discard(sel)

    # ---- PodListener ---------------------------------------------------------------------
    def _update(self, rec: PodRecord, row: int, delta: int) -> None:
        pod = rec.pod
        entries = self._by_ns.get(pod.namespace)
        if not entries or pod.terminating:
            return
        labels = pod.labels
        if len(entries) <= len(labels):
            for sel, arr in entries.items():
                if sel.matches(labels):
                    arr[row] += delta
            return
        per_pair = self._keyed.get(pod.namespace, {})
        for pair in labels.items():
            for sel in per_pair.get(pair, ()):
                if sel.matches(labels):
                    entries[sel][row] += delta
        for sel in self._unkeyed.get(pod.namespace, ()):
            if sel.matches(labels):
                entries[sel][row] += delta

    def pod_added(self, rec: PodRecord, row: int) -> None:
        self._update(rec, row, +1)

    def pod_removed(self, rec: PodRecord, row: int) -> None:
        self._update(rec, row, -1)

    def grow(self, capacity: int) -> None:
        if capacity <= self._capacity:
            return
        for entries in self._by_ns.values():
            for sel, arr in entries.items():
                out = np.zeros(capacity, dtype=np.int32)
                out[: arr.shape[0]] = arr
                entries[sel] = out
        self._capacity = capacity

    # ---- forks (framework/fork.py) ----------------------------------------------------------
    def fork(self, snap: Snapshot) -> ForkedSelectorCounts:
        """This index as seen by `snap`, a fork of its snapshot: see ForkedSelectorCounts."""
        return ForkedSelectorCounts(self, snap)


def _matching(
    entries: dict[LabelSelector, CountArray], keyed: dict[tuple[str, str], set[LabelSelector]],
    unkeyed: set[LabelSelector], labels: Mapping[str, str],
) -> list[LabelSelector]:
    """The kept selectors a pod with `labels` matches: the same set SelectorCounts._update
    counts it in, found the same two ways."""
    if len(entries) <= len(labels):
        return [sel for sel in entries if sel.matches(labels)]
    out = [sel for pair in labels.items() for sel in keyed.get(pair, ()) if sel.matches(labels)]
    out.extend(sel for sel in unkeyed if sel.matches(labels))
    return out


class ForkedSelectorCounts(SelectorCounts):
    """SelectorCounts of a fork: the origin's tables copied (they are bounded by the LRU),
    its count arrays shared and copied the first time the fork changes one, so the origin
    is never written; a selector first asked for here is scanned over the fork's pods."""

    def __init__(self, origin: SelectorCounts, snap: Snapshot) -> None:
        super().__init__(snap, origin._max_entries)
        self._capacity = origin._capacity
        self._by_ns = {ns: dict(e) for ns, e in origin._by_ns.items()}
        self._lru = OrderedDict(origin._lru)
        self._keyed = {ns: {p: set(s) for p, s in d.items()} for ns, d in origin._keyed.items()}
        self._unkeyed = {ns: set(s) for ns, s in origin._unkeyed.items()}
        self.origin = origin
        # ids of the origin's arrays, which stays alive (and unchanged) meanwhile
        self._shared = {id(a) for e in origin._by_ns.values() for a in e.values()}

    def _update(self, rec: PodRecord, row: int, delta: int) -> None:
        pod = rec.pod
        entries = self._by_ns.get(pod.namespace)
        if entries and self._shared and not pod.terminating:
            keyed = self._keyed.get(pod.namespace, {})
            unkeyed = self._unkeyed.get(pod.namespace, set())
            for sel in _matching(entries, keyed, unkeyed, pod.labels):
                arr = entries[sel]
                if id(arr) in self._shared:
                    self._shared.discard(id(arr))
                    entries[sel] = arr.copy()
        super()._update(rec, row, delta)

    def commit(self) -> None:
        """The origin (itself a fork's index) takes this one's tables."""
        o = self.origin
        o._by_ns, o._lru, o._keyed, o._unkeyed = self._by_ns, self._lru, self._keyed, self._unkeyed
        o._capacity = self._capacity
