"""array_bytes (engine/batching/array_bytes.py): what a parked cache's window states cost the
parked budget, walked through dataclasses, lists and tuples four levels deep; worked by hand."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedsvc.engine.batching.array_bytes import array_bytes


@dataclass
class Inner:
    a: np.ndarray
    note: str = "x"


@dataclass
class Outer:
    inner: Inner
    parts: list[np.ndarray]
    nothing: object = None


@dataclass
class Empty:
    pass


def test_arrays_are_counted_through_dataclasses_lists_and_tuples() -> None:
    o = Outer(Inner(np.zeros(10, dtype=np.int64)), [np.zeros(3, dtype=np.int32)] * 2)
    assert array_bytes(o) == 80 + 2 * 12
    assert array_bytes(o) == 104  # asked again: the kept field names give the same walk
    assert array_bytes((o, Empty(), Outer, "s")) == 104  # a class is no instance: nothing


def test_the_walk_stops_four_levels_down() -> None:
    a = np.zeros(4, dtype=np.int8)
    assert array_bytes([[[[a]]]]) == 4  # the array at depth 4 is read
    assert array_bytes([[[[[a]]]]]) == 0  # its list at depth 4 is not walked
