"""kube's node tree: the order the filter stage visits nodes in (backend/cache/node_tree.go).

kube lists its snapshot's nodes zone by zone in turn: the first node of each zone, then the
second of each, ..., zones in the order they first appeared (a zone that empties leaves the list
and comes back at its end), nodes in the order they joined their zone; an exhausted zone is
skipped. A sampled filter stage (percentageOfNodesToScore) therefore covers every zone early.

Per node this keeps two numbers, so a change costs a few dict operations and the order is
rebuilt with numpy only when asked for after the node set changed:
`zone_seq[row]`, when the node's zone (re)joined the zone list, and `node_seq[row]`, when the
node joined its zone. The list is the rows sorted by (rank within zone, zone_seq).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

__all__ = ["NodeTree", "zone_key"]

# k8s.io/api/core/v1 well-known labels: the deprecated beta labels win when present
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"

Rows = npt.NDArray[np.intp]


def zone_key(labels: Mapping[str, str]) -> str:
    """k8s.io/component-helpers/node/topology GetZoneKey: "" without region and zone, else
    region + ":\\x00:" + zone, each from its beta label when present, else the GA one."""
    zone = labels[BETA_ZONE] if BETA_ZONE in labels else labels.get(ZONE, "")
    region = labels[BETA_REGION] if BETA_REGION in labels else labels.get(REGION, "")
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


class NodeTree:
    """Zones and their nodes in kube's order, by row."""

    def __init__(self) -> None:
        # per row, Python lists (a list store costs a fraction of a numpy scalar store)
        self.zone_seq: list[int] = []
        self.node_seq: list[int] = []
        self.zone_of: dict[int, str] = {}  # row -> zone key
        # zone key -> [zone_seq, nodes in it]; a zone with no node is dropped (removeZone)
        self.zones: dict[str, list[int]] = {}
        self._next_zone = 0
        self._next_node = 0

    def add(self, row: int, zone: str) -> None:
        """addNode: the node joins the end of its zone; a new zone joins the end of the list."""
        z = self.zones.get(zone)
        if z is None:
            z = self.zones[zone] = [self._next_zone, 0]
            self._next_zone += 1
        z[1] += 1
        self.zone_of[row] = zone
        seq = self._next_node
        self._next_node = seq + 1
        if row < len(self.zone_seq):
            self.zone_seq[row] = z[0]
            self.node_seq[row] = seq
            return
        while len(self.zone_seq) < row:  # rows are handed out in turn: at most once
            self.zone_seq.append(0)
            self.node_seq.append(0)
        self.zone_seq.append(z[0])
        self.node_seq.append(seq)

    def remove(self, row: int) -> None:
        """removeNode: a zone left empty leaves the list; the others keep their order."""
        zone = self.zone_of.pop(row)
        z = self.zones[zone]
        z[1] -= 1
        if z[1] == 0:
            del self.zones[zone]

    def update(self, row: int, zone: str) -> bool:
        """updateNode: a node whose zone changed is removed and added again (to the end of
        its new zone). Returns whether it moved."""
        if self.zone_of.get(row) == zone:
            return False
        self.remove(row)
        self.add(row, zone)
        return True

    def order(self, rows: Rows) -> Rows:
        """`rows` (the nodes in the tree) in kube's list() order."""
        if len(rows) == 0:
            return rows
        zs = np.array(self.zone_seq, dtype=np.int64)[rows]
        ns = np.array(self.node_seq, dtype=np.int64)[rows]
        by_zone = np.lexsort((ns, zs))  # zone by zone, each in joining order
        zsorted = zs[by_zone]
        starts = np.flatnonzero(np.r_[True, zsorted[1:] != zsorted[:-1]])
        counts = np.diff(np.r_[starts, len(rows)])
        rank = np.empty(len(rows), dtype=np.int64)
        rank[by_zone] = np.arange(len(rows)) - np.repeat(starts, counts)
        out: Rows = rows[np.lexsort((zs, rank))]
        return out
