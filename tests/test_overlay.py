"""OverlayMap, OwnedValues and RowDicts (framework/overlay.py): a fork's maps read as a dict
given the same writes reads, order included, and never write their base."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedsvc.framework.overlay import OverlayMap, OwnedValues, RowDicts

BASE = {"a": 1, "b": 2, "c": 3}

# (ops, expected items in order): worked out as a dict given the same ops would hold them
CASES = [
    ("no writes read the base in its order", [], [("a", 1), ("b", 2), ("c", 3)]),
    ("an overwritten base key keeps its place", [("set", "b", 20)],
     [("a", 1), ("b", 20), ("c", 3)]),
    ("a new key goes last", [("set", "d", 4)], [("a", 1), ("b", 2), ("c", 3), ("d", 4)]),
    ("a deleted base key is gone", [("del", "a")], [("b", 2), ("c", 3)]),
    ("a base key deleted then set again moves to the end", [("del", "a"), ("set", "a", 9)],
     [("b", 2), ("c", 3), ("a", 9)]),
    ("an overwritten key deleted is gone", [("set", "b", 20), ("del", "b")],
     [("a", 1), ("c", 3)]),
    ("new keys keep their insertion order; one re-inserted goes last",
     [("set", "x", 1), ("set", "y", 2), ("del", "x"), ("set", "x", 3)],
     [("a", 1), ("b", 2), ("c", 3), ("y", 2), ("x", 3)]),
    ("an overwrite after a new key still keeps the base place",
     [("set", "d", 4), ("set", "a", 10)], [("a", 10), ("b", 2), ("c", 3), ("d", 4)]),
    ("pop of a base key removes it", [("pop", "c")], [("a", 1), ("b", 2)]),
]


def _apply(m: Any, ops: list[tuple[Any, ...]]) -> None:
    for op in ops:
        if op[0] == "set":
            m[op[1]] = op[2]
        elif op[0] == "del":
            del m[op[1]]
        else:
            m.pop(op[1])


@pytest.mark.parametrize(("ops", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_overlay_reads_as_a_dict_would(ops: list[tuple[Any, ...]], expected: list[Any]) -> None:
    base = dict(BASE)
    m = OverlayMap(base)
    _apply(m, ops)
    assert list(m.items()) == expected
    assert list(m) == [k for k, _ in expected]
    assert list(m.values()) == [v for _, v in expected]
    assert len(m) == len(expected)
    assert base == BASE and list(base) == list(BASE)  # the base was never written


def test_missing_keys_read_as_a_dict_reads_them() -> None:
    m = OverlayMap(dict(BASE))
    del m["a"]
    assert "a" not in m and m.get("a") is None and m.get("a", 7) == 7
    assert m.pop("a", None) is None
    with pytest.raises(KeyError):
        m["a"]
    with pytest.raises(KeyError):
        del m["a"]
    with pytest.raises(KeyError):
        m.pop("zz")
    assert len(m) == 2


def test_a_nested_overlay_reads_through_both_and_merges_into_its_parent() -> None:
    base = dict(BASE)
    parent = OverlayMap(base)
    parent["d"] = 4
    del parent["a"]
    child = OverlayMap(parent)
    child["b"] = 22
    del child["d"]
    child["e"] = 5
    assert list(child.items()) == [("b", 22), ("c", 3), ("e", 5)]
    assert list(parent.items()) == [("b", 2), ("c", 3), ("d", 4)]  # untouched by the child
    child.merge_into(parent)
    assert list(parent.items()) == [("b", 22), ("c", 3), ("e", 5)]
    assert base == BASE


def test_owned_values_hand_out_a_copy_the_overlay_owns() -> None:
    base = {1: {"x": 1, "y": 2}}
    m: OwnedValues[int, str, int] = OwnedValues(base)
    row = m.setdefault(1, {})
    row["z"] = 3
    del row["x"]
    assert m[1] == {"y": 2, "z": 3} and list(m[1]) == ["y", "z"]
    assert base == {1: {"x": 1, "y": 2}}
    assert m.setdefault(1, {}) is row  # owned once
    new = m.setdefault(2, {})
    new["a"] = 1
    assert m[2] == {"a": 1} and 2 not in base


def test_row_dicts_copy_a_row_on_its_first_write_and_keep_its_order() -> None:
    base = [{"p1": 1, "p2": 2}, {"p3": 3}]
    rows: RowDicts[str, int] = RowDicts(base)
    assert rows[0] is base[0] and len(rows) == 2
    own = rows.own(0)
    own["p0"] = 0
    del own["p1"]
    assert list(rows[0]) == ["p2", "p0"] and base[0] == {"p1": 1, "p2": 2}
    assert rows.own(0) is own
    rows[1] = {"p4": 4}
    rows.append({"p5": 5})
    assert len(rows) == 3 and rows[2] == {"p5": 5} and len(base) == 2
    with pytest.raises(IndexError):
        rows[5] = {}
    parent: RowDicts[str, int] = RowDicts(base)
    child: RowDicts[str, int] = RowDicts(parent)
    child.own(1)["p6"] = 6
    child.append({"p7": 7})
    child.merge_into(parent)
    assert [dict(parent[r]) for r in range(len(parent))] == [
        {"p1": 1, "p2": 2}, {"p3": 3, "p6": 6}, {"p7": 7}]
    assert base == [{"p1": 1, "p2": 2}, {"p3": 3}]


_keys = st.sampled_from("abcdefgh")
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("set"), _keys, st.integers(0, 99)),
        st.tuples(st.just("del"), _keys),
    ),
    max_size=30,
)


def _apply_tolerant(m: Any, ops: list[tuple[Any, ...]]) -> None:
    for op in ops:
        if op[0] == "set":
            m[op[1]] = op[2]
        elif op[1] in m:
            del m[op[1]]


@settings(max_examples=300, deadline=None)
@given(base_items=st.dictionaries(_keys, st.integers(0, 9)), ops=_ops, child_ops=_ops)
def test_overlays_equal_a_dict_given_the_same_writes(
    base_items: dict[str, int], ops: list[tuple[Any, ...]], child_ops: list[tuple[Any, ...]]
) -> None:
    """Property: an overlay (and an overlay of an overlay, and a child merged into its
    parent) iterates, reads and counts exactly as a dict given the same writes."""
    base = dict(base_items)
    twin = dict(base_items)
    m = OverlayMap(base)
    _apply_tolerant(m, ops)
    _apply_tolerant(twin, ops)
    assert list(m.items()) == list(twin.items()) and len(m) == len(twin)
    child = OverlayMap(m)
    _apply_tolerant(child, child_ops)
    twin_child = dict(twin)
    _apply_tolerant(twin_child, child_ops)
    assert list(child.items()) == list(twin_child.items()) and len(child) == len(twin_child)
    assert list(m.items()) == list(twin.items())  # the child never wrote its parent
    child.merge_into(m)
    assert list(m.items()) == list(twin_child.items()) and len(m) == len(twin_child)
    assert base == base_items and list(base) == list(base_items)
