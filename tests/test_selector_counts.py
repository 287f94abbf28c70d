"""SelectorCounts follows every add and remove whichever way it finds a pod's selectors (all
of them for a pod with many labels, by the pod's own label pairs for many selectors): its
counts equal a fresh scan of the snapshot's pods, under LRU eviction too."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schedsvc.framework.selector_counts import SelectorCounts
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import LabelSelector, LabelSelectorRequirement, Node, Pod, frozen_map

KEYS = ["app", "tier", "team"]
VALUES = ["a", "b", "c"]
labels_st = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)
requirement = st.builds(
    LabelSelectorRequirement, st.sampled_from(KEYS),
    st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]),
    st.lists(st.sampled_from(VALUES), min_size=1, max_size=2).map(tuple),
)
selector = st.builds(
    LabelSelector,
    st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2).map(
        lambda d: tuple(d.items())
    ),
    st.lists(requirement, max_size=2).map(tuple),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(selector, min_size=1, max_size=8),
    st.lists(st.tuples(labels_st, st.sampled_from(["default", "other"]), st.integers(0, 2),
                       st.booleans()), max_size=30),
    st.sampled_from([3, 256]),
)
def test_counts_equal_a_fresh_scan(
    selectors: list[LabelSelector], ops: list[tuple[dict[str, str], str, int, bool]],
    max_entries: int,
) -> None:
    snap = Snapshot(capacity=4)
    for i in range(3):
        snap.upsert_node(Node(name=f"n{i}"))
    idx = SelectorCounts(snap, max_entries=max_entries)
    snap.add_listener(idx)
    sels = [s.canonical() for s in selectors]
    for s in sels:  # registered before the pods: every later change is incremental
        idx.counts_canonical("default", s)
    live: list[str] = []
    for uid, (labels, ns, node, remove) in enumerate(ops):
        if remove and live:
            snap.remove_pod(live.pop(0))
        else:
            snap.add_pod(Pod(uid=str(uid), namespace=ns, labels=frozen_map(labels)), f"n{node}")
            live.append(str(uid))
    for s in sels:
        got = idx.counts_canonical("default", s).copy()
        fresh = SelectorCounts(snap).counts_canonical("default", s)
        assert got.tolist() == fresh.tolist(), s
