"""Incremental index of the pods inter-pod affinity reads, kept by the snapshot's listener hooks.

Two things kube's InterPodAffinity would otherwise rebuild by walking every pod in every cycle:

- **Terms of existing pods, grouped.** Pods that carry pod (anti-)affinity terms are few in kind
  (the replicas of one workload share their terms), so each distinct resolved term keeps an int32
  array: how many pods on each row hold it. A cycle evaluates a term against the incoming pod once
  and, when it matches, turns the array into per-topology-value counts with one `np.bincount`.
  Groups: required anti-affinity (Filter), required affinity (Score, hardPodAffinityWeight), and
  preferred affinity/anti-affinity with their signed weight (Score).
- **Pods matching a selector, per row.** For the incoming pod's own terms: how many pods on each
  row match a conjunction of (namespaces, selector) pairs. Created on first use (one scan of the
  pods), updated on every pod added/removed, bounded in least-recently-used order.

Only pods on nodes are indexed (kube's NodeInfo.Pods), never pods that are only nominated.
Arrays handed out are live views: read them within the cycle, never write to them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

from ..model import (
    LabelSelector,
    LabelSelectorRequirement,
    Pod,
    PodAffinityTerm,
)
from .overlay import OverlayMap
from .snapshot import IntArray, NominatedKey, PodRecord, Snapshot

__all__ = [
    "AffinityIndex",
    "AffinityTerm",
    "CountArray",
    "ForkedAffinityIndex",
    "NamespaceFilter",
    "SelectorKey",
    "TermGroups",
    "merge_label_keys",
    "pod_has_pod_affinity",
    "topology_counts",
]

CountArray = npt.NDArray[np.int32]
# The namespaces an incoming pod's term reaches: a set of names, or None for every namespace.
NamespaceFilter = frozenset[str] | None
# A conjunction of (namespaces, selector) conditions; a pod counts when it meets all of them.
SelectorKey = frozenset[tuple[NamespaceFilter, LabelSelector]]

DEFAULT_MAX_SELECTORS = 256




def merge_label_keys(
    term: PodAffinityTerm, owner_labels: Mapping[str, str]
) -> LabelSelector | None:
    """The term's selector with matchLabelKeys (In) and mismatchLabelKeys (NotIn) merged in.

    This is what kube-apiserver does when the owner pod is created: each key the owner carries
    becomes a requirement with the owner's value; keys it lacks are ignored; a nil selector stays
    nil (matches nothing). Merging twice adds equal requirements, which changes no match.
    """
    sel = term.label_selector
    if sel is None or (not term.match_label_keys and not term.mismatch_label_keys):
        return sel
    extra: list[LabelSelectorRequirement] = []
    for key in term.match_label_keys:
        if key in owner_labels:
            extra.append(LabelSelectorRequirement(key, "In", (owner_labels[key],)))
    for key in term.mismatch_label_keys:
        if key in owner_labels:
            extra.append(LabelSelectorRequirement(key, "NotIn", (owner_labels[key],)))
    if not extra:
        return sel
    return LabelSelector(
        match_labels=sel.match_labels, match_expressions=sel.match_expressions + tuple(extra)
    )


def pod_has_pod_affinity(pod: Pod) -> bool:
    """kube's podWithAffinity: the pod sets podAffinity or podAntiAffinity (even empty)."""
    a = pod.affinity
    return a is not None and (a.pod_affinity is not None or a.pod_anti_affinity is not None)


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """kube's framework.AffinityTerm of an existing pod, resolved against its owner.

    `namespaces` is the owner's namespace when the term names none and has no namespaceSelector.
    `namespace_selector` None is kube's labels.Nothing(); an empty selector matches every
    namespace. `selector` None (a nil labelSelector) matches no pod.
    """

    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    selector: LabelSelector | None
    topology_key: str

    @classmethod
    def of(cls, owner: Pod, term: PodAffinityTerm) -> AffinityTerm:
        if not term.namespaces and term.namespace_selector is None:
            namespaces = frozenset((owner.namespace,))
        else:
            namespaces = frozenset(term.namespaces)
        sel = merge_label_keys(term, owner.labels)
        nss = term.namespace_selector
        return cls(
            namespaces=namespaces,
            namespace_selector=nss.canonical() if nss is not None else None,
            selector=sel.canonical() if sel is not None else None,
            topology_key=term.topology_key,
        )

    def matches(self, pod: Pod, namespace_labels: Mapping[str, str]) -> bool:
        """AffinityTerm.Matches: namespace in the set or its labels selected, then the labels."""
        if pod.namespace in self.namespaces or (
            self.namespace_selector is not None
            and self.namespace_selector.matches(namespace_labels)
        ):
            return self.selector is not None and self.selector.matches(pod.labels)
        return False


def _key_matches(key: SelectorKey, pod: Pod) -> bool:
    for namespaces, selector in key:
        if namespaces is not None and pod.namespace not in namespaces:
            return False
        if not selector.matches(pod.labels):
            return False
    return True


def topology_counts(snap: Snapshot, topology_key: str, per_row: CountArray) -> IntArray | None:
    """Sum `per_row` over the rows sharing each value of `topology_key`.

    Returns an int64 table indexed by the key's LabelColumn value id (length = its vocabulary),
    or None when no node carries the key. Rows without the key contribute nothing.
    """
    col = snap.labels.get(topology_key)
    if col is None:
        return None
    n = snap.n_rows
    ids = col.ids[:n]
    counts = per_row[:n]
    keep = (ids >= 0) & (counts != 0)
    table = np.bincount(ids[keep], weights=counts[keep], minlength=len(col.vocab))
    out: IntArray = table.astype(np.int64)
    return out


_K = TypeVar("_K", AffinityTerm, tuple[AffinityTerm, int])


class TermGroups(Generic[_K]):
    """Distinct terms of existing pods -> how many pods on each row hold the term."""

    __slots__ = ("counts", "_totals")

    def __init__(self) -> None:
        self.counts: dict[_K, CountArray] = {}
        self._totals: dict[_K, int] = {}

    def __len__(self) -> int:
        return len(self.counts)

    def add(self, key: _K, row: int, capacity: int) -> None:
        arr = self.counts.get(key)
        if arr is None:
            arr = np.zeros(capacity, dtype=np.int32)
            self.counts[key] = arr
            self._totals[key] = 0
        arr[row] += 1
        self._totals[key] += 1

    def remove(self, key: _K, row: int) -> None:
        self.counts[key][row] -= 1
        self._totals[key] -= 1
        if self._totals[key] == 0:
            del self._totals[key]
            del self.counts[key]

    def grow(self, capacity: int) -> None:
        for k, arr in self.counts.items():
            self.counts[k] = _padded(arr, capacity)


def _padded(arr: CountArray, capacity: int) -> CountArray:
    out = np.zeros(capacity, dtype=np.int32)
    out[: arr.shape[0]] = arr
    return out


@dataclass(frozen=True, slots=True)
class _Terms:
    """The terms one indexed pod added, so removal undoes exactly that."""

    required_affinity: tuple[AffinityTerm, ...]
    required_anti: tuple[AffinityTerm, ...]
    preferred: tuple[tuple[AffinityTerm, int], ...]


def _terms_of(pod: Pod) -> _Terms:
    a = pod.affinity
    req: list[AffinityTerm] = []
    anti: list[AffinityTerm] = []
    pref: list[tuple[AffinityTerm, int]] = []
    if a is not None and a.pod_affinity is not None:
        req.extend(AffinityTerm.of(pod, t) for t in a.pod_affinity.required)
        pref.extend((AffinityTerm.of(pod, w.term), w.weight) for w in a.pod_affinity.preferred)
    if a is not None and a.pod_anti_affinity is not None:
        anti.extend(AffinityTerm.of(pod, t) for t in a.pod_anti_affinity.required)
        pref.extend(
            (AffinityTerm.of(pod, w.term), -w.weight) for w in a.pod_anti_affinity.preferred
        )
    return _Terms(tuple(req), tuple(anti), tuple(pref))


class AffinityIndex:
    """A PodListener over one snapshot; see the module docstring.

    `required_anti`, `required_affinity` and `preferred` (keyed by (term, signed weight):
    +weight for preferred affinity, -weight for preferred anti-affinity) group the existing
    pods' terms. A pod holding the same term twice counts twice, as kube adds it twice.
    """

    def __init__(self, max_selectors: int = DEFAULT_MAX_SELECTORS) -> None:
        self._capacity = 0
        self._max_selectors = max_selectors
        self._pods: MutableMapping[str | NominatedKey, tuple[Pod, int]] = {}
        self.required_anti: TermGroups[AffinityTerm] = TermGroups()
        self.required_affinity: TermGroups[AffinityTerm] = TermGroups()
        self.preferred: TermGroups[tuple[AffinityTerm, int]] = TermGroups()
        self._terms: MutableMapping[str | NominatedKey, _Terms] = {}
        self._selectors: OrderedDict[SelectorKey, CountArray] = OrderedDict()

    @classmethod
    def for_snapshot(cls, snap: Snapshot) -> AffinityIndex:
        """The index registered on `snap`, registering (and filling) one the first time."""
        return snap.listener_of(cls, lambda: cls())

    # ---- PodListener -------------------------------------------------------------------------
    def grow(self, capacity: int) -> None:
        if capacity <= self._capacity:
            return
        self._capacity = capacity
        self.required_anti.grow(capacity)
        self.required_affinity.grow(capacity)
        self.preferred.grow(capacity)
        for k, arr in self._selectors.items():
            self._selectors[k] = _padded(arr, capacity)

    def pod_added(self, rec: PodRecord, row: int) -> None:
        pod = rec.pod
        key = rec.key  # a uid, or a two-pass temporary's own key
        if key in self._pods:  # never twice: undo the first before counting again
            old, old_row = self._pods[key]
            self._remove(key, old, old_row)
        self._pods[key] = (pod, row)
        for sel, arr in self._selectors.items():
            if _key_matches(sel, pod):
                arr[row] += 1
        if not pod_has_pod_affinity(pod):
            return
        terms = _terms_of(pod)
        self._terms[key] = terms
        cap = self._capacity
        for t in terms.required_affinity:
            self.required_affinity.add(t, row, cap)
        for t in terms.required_anti:
            self.required_anti.add(t, row, cap)
        for tw in terms.preferred:
            self.preferred.add(tw, row, cap)

    def pod_removed(self, rec: PodRecord, row: int) -> None:
        entry = self._pods.get(rec.key)
        if entry is not None:
            self._remove(rec.key, entry[0], entry[1])

    def _remove(self, key: str | NominatedKey, pod: Pod, row: int) -> None:
        del self._pods[key]
        for sel, arr in self._selectors.items():
            if _key_matches(sel, pod):
                arr[row] -= 1
        terms = self._terms.pop(key, None)
        if terms is None:
            return
        for t in terms.required_affinity:
            self.required_affinity.remove(t, row)
        for t in terms.required_anti:
            self.required_anti.remove(t, row)
        for tw in terms.preferred:
            self.preferred.remove(tw, row)

    # ---- queries -----------------------------------------------------------------------------
    def matching(self, key: SelectorKey) -> CountArray:
        """Pods meeting every (namespaces, selector) condition of `key`, per row."""
        arr = self._selectors.get(key)
        if arr is not None:
            self._selectors.move_to_end(key)
            return arr
        arr = np.zeros(self._capacity, dtype=np.int32)
        for pod, row in self._pods.values():
            if _key_matches(key, pod):
                arr[row] += 1
        self._selectors[key] = arr
        while len(self._selectors) > self._max_selectors:
            self._selectors.popitem(last=False)
        return arr

    # ---- forks (framework/fork.py) -----------------------------------------------------------
    def fork(self, snap: Snapshot) -> ForkedAffinityIndex:
        """This index as seen by a fork of its snapshot: see ForkedAffinityIndex."""
        return ForkedAffinityIndex(self)


class ForkedTermGroups(TermGroups[_K]):
    """TermGroups of a fork: the origin's maps copied (one entry per distinct term), its
    arrays shared and copied the first time the fork changes one."""

    __slots__ = ("_shared",)

    def __init__(self, origin: TermGroups[_K]) -> None:
        super().__init__()
        self.counts = dict(origin.counts)
        self._totals = dict(origin._totals)
        self._shared = {id(a) for a in origin.counts.values()}

    def _own(self, key: _K) -> None:
        arr = self.counts.get(key)
        if arr is not None and id(arr) in self._shared:
            self._shared.discard(id(arr))
            self.counts[key] = arr.copy()

    def add(self, key: _K, row: int, capacity: int) -> None:
        self._own(key)
        TermGroups.add(self, key, row, capacity)

    def remove(self, key: _K, row: int) -> None:
        self._own(key)
        TermGroups.remove(self, key, row)

    def commit_into(self, origin: TermGroups[_K]) -> None:
        origin.counts, origin._totals = self.counts, self._totals


class ForkedAffinityIndex(AffinityIndex):
    """AffinityIndex of a fork: per-pod tables are overlays of the origin's, term groups
    and selector arrays copied on the fork's first write of each; the origin is never
    written (its LRU order included: `matching` moves the fork's own copy)."""

    def __init__(self, origin: AffinityIndex) -> None:
        super().__init__(origin._max_selectors)
        self.origin = origin
        self._capacity = origin._capacity
        self._pods = OverlayMap(origin._pods)
        self._terms = OverlayMap(origin._terms)
        self.required_anti = ForkedTermGroups(origin.required_anti)
        self.required_affinity = ForkedTermGroups(origin.required_affinity)
        self.preferred = ForkedTermGroups(origin.preferred)
        self._selectors = OrderedDict(origin._selectors)
        self._shared = {id(a) for a in origin._selectors.values()}

    def _own_selectors(self, pod: Pod) -> None:
        if not self._shared:
            return
        for k, arr in self._selectors.items():
            if id(arr) in self._shared and _key_matches(k, pod):
                self._shared.discard(id(arr))
                self._selectors[k] = arr.copy()

    def pod_added(self, rec: PodRecord, row: int) -> None:
        self._own_selectors(rec.pod)
        super().pod_added(rec, row)

    def _remove(self, key: str | NominatedKey, pod: Pod, row: int) -> None:
        self._own_selectors(pod)
        super()._remove(key, pod, row)

    def commit(self) -> None:
        """The origin (itself a fork's index) takes this one's tables."""
        o = self.origin
        assert isinstance(self._pods, OverlayMap) and isinstance(self._terms, OverlayMap)
        self._pods.merge_into(o._pods)
        self._terms.merge_into(o._terms)
        for mine, theirs in (
            (self.required_anti, o.required_anti), (self.required_affinity, o.required_affinity),
            (self.preferred, o.preferred),
        ):
            assert isinstance(mine, ForkedTermGroups)
            mine.commit_into(theirs)
        o._selectors, o._capacity = self._selectors, self._capacity
