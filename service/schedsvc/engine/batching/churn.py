"""What UpdateSnapshots changed since a batch state was last made exact (see batch.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Churn"]


@dataclass(slots=True)
class Churn:
    """Rows whose pods changed, rows whose node itself was upserted, and whether the node set
    changed: cluster-wide inputs (ImageLocality's share of nodes holding an image) then moved
    for every node, so every cached row is rescored before the next hint."""

    _rows: set[int] = field(default_factory=set)
    _node_rows: set[int] = field(default_factory=set)
    _nodes_changed: bool = False

    def add(self, rows: set[int], node_rows: set[int] | None, nodes_changed: bool) -> None:
        self._rows |= rows
        self._node_rows |= node_rows or set()
        self._nodes_changed |= nodes_changed

    def reset(self) -> None:
        """The state was made exact again (stored, built or resumed)."""
        self._rows, self._node_rows, self._nodes_changed = set(), set(), False

    def empty(self) -> bool:
        """Nothing changed since the state was made exact."""
        return not self._rows and not self._node_rows and not self._nodes_changed

    def any_rows(self) -> bool:
        return bool(self._rows)

    def nodes_changed(self) -> bool:
        return self._nodes_changed

    def rows_only(self) -> bool:
        """Only pods changed: no node upserted, the node set the same."""
        return not self._node_rows and not self._nodes_changed

    def pending(self, row: int) -> set[int]:
        """The rows the next hint re-evaluates: the churned ones and the last pick `row`."""
        return self._rows | {row}

    def take(self, row: int) -> tuple[set[int], set[int]]:
        """pending(row) and the rows whose node was upserted, both forgotten (the node-set
        change is kept until every row is rescored: `rescored_all`)."""
        out = self._rows | {row}, self._node_rows
        self._rows, self._node_rows = set(), set()
        return out

    def take_rows(self, row: int) -> set[int] | None:
        """For a cache that keeps every node's verdict: None when a node was upserted or the
        node set changed (it cannot follow); else take(row)'s rows, or none at all (empty)
        when only the last pick's own pod moved since."""
        if self._node_rows or self._nodes_changed:
            return None
        if not self._rows:
            return set()
        return self.take(row)[0]

    def rescored_all(self) -> None:
        self._nodes_changed = False
