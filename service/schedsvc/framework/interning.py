"""Interned names of a snapshot, counted so that memory follows what the cluster holds.

A snapshot turns names into column numbers and value ids (resources, taints, label keys and
values) so that plugins work on numpy arrays. Every use of a name is counted: a node's
allocatable, taints and labels, a held pod's requests. A name whose count falls to zero is dead;
compaction drops dead names and renumbers the rest. Rows never move, so indexes by row
(selector counts, affinity terms) stay valid; anything that holds a column number or a value id
across cycles (batch state, a run's CycleState) must be dropped when a compaction happened,
which `Snapshot.compact` reports.

Compaction runs when dead names are both numerous (at least `COMPACT_MIN`) and at least as many
as live ones, so its cost, linear in the names and rows, is amortized over the removals that
made them dead.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

__all__ = ["LabelColumn", "COMPACT_MIN", "worth_compacting", "kept_columns"]

BoolArray = npt.NDArray[np.bool_]

COMPACT_MIN = 64


def worth_compacting(dead: int, live: int) -> bool:
    """Dead names are many and at least as many as live ones (amortized O(1) per removal)."""
    return dead >= COMPACT_MIN and dead >= live


def kept_columns(refs: list[int], fixed: int) -> list[int]:
    """Columns to keep: the first `fixed` always, then those still referenced."""
    return [c for c, n in enumerate(refs) if c < fixed or n > 0]


class LabelColumn:
    """Interned values of one label key: ids[row] is the value's id, -1 where absent."""

    __slots__ = ("ids", "vocab", "index", "counts", "total")

    def __init__(self, capacity: int) -> None:
        self.ids = np.full(capacity, -1, dtype=np.int32)
        self.vocab: list[str] = []
        self.index: dict[str, int] = {}
        self.counts: list[int] = []  # alive rows per value id
        self.total = 0  # alive rows carrying the key

    def intern(self, value: str) -> int:
        i = self.index.get(value)
        if i is None:
            i = len(self.vocab)
            self.index[value] = i
            self.vocab.append(value)
            self.counts.append(0)
        return i

    def set(self, row: int, value: str) -> None:
        vid = self.intern(value)
        self.ids[row] = vid
        self.counts[vid] += 1
        self.total += 1

    def clear(self, row: int) -> None:
        vid = int(self.ids[row])
        if vid >= 0:
            self.counts[vid] -= 1
            self.total -= 1
        self.ids[row] = -1

    @property
    def dead(self) -> int:
        """Values no row carries any more."""
        return len(self.vocab) - sum(1 for n in self.counts if n > 0)

    def compact(self) -> None:
        """Drop the values no row carries and renumber the rest (ids keep their rows)."""
        keep = [i for i, n in enumerate(self.counts) if n > 0]
        remap = np.full(len(self.vocab) + 1, -1, dtype=np.int32)  # id -1 reads the last entry
        remap[keep] = np.arange(len(keep), dtype=np.int32)
        self.ids = remap[self.ids]
        self.vocab = [self.vocab[i] for i in keep]
        self.counts = [self.counts[i] for i in keep]
        self.index = {v: i for i, v in enumerate(self.vocab)}

    def match(self, predicate: Callable[[str], bool], absent: bool) -> BoolArray:
        """Evaluate `predicate` once per distinct value, then gather it for every row."""
        table = np.fromiter(
            (predicate(v) for v in self.vocab), dtype=np.bool_, count=len(self.vocab)
        )
        table = np.append(table, absent)  # id -1 reads the last entry
        out: BoolArray = table[self.ids]
        return out
