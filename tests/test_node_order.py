"""The filter stage visits nodes in kube's node-tree order (backend/cache/node_tree.go list()):
zones interleaved, zones in order of first appearance, nodes in joining order within a zone.

The tables are kube's node_tree_test.go (TestNodeTree_List, TestNodeTreeMultiOperations, the
trees of TestNodeTree_AddNode/RemoveNode/UpdateNode read back as lists), run through Snapshot.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.config import parse_config
from schedsvc.engine.schedule_pod import num_feasible_nodes_to_find
from schedsvc.engine.scheduler import Cluster, Engine, SnapshotUpdate
from schedsvc.framework.node_tree import zone_key
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Node
from tests.batching_play import SOFT, Step, play, play_soft
from tests.builders import GiB, make_pod, node, pod

BETA_REGION = "failure-domain.beta.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"

# kube's allNodes of node_tree_test.go
_LABELS: list[dict[str, str]] = [
    {},
    {BETA_REGION: "region-1"},
    {BETA_ZONE: "zone-2"},
    {BETA_REGION: "region-1", BETA_ZONE: "zone-2"},
    {BETA_REGION: "region-1", BETA_ZONE: "zone-2"},
    {BETA_REGION: "region-1", BETA_ZONE: "zone-3"},
    {BETA_REGION: "region-2", BETA_ZONE: "zone-2"},
    {BETA_REGION: "region-2", BETA_ZONE: "zone-2"},
    {BETA_REGION: "region-2", BETA_ZONE: "zone-2"},
    {REGION: "region-2", ZONE: "zone-2", BETA_REGION: "region-2", BETA_ZONE: "zone-2"},
    {BETA_REGION: "region-2", BETA_ZONE: "zone-3"},
]
ALL = [node(f"node-{i}", labels=lb) for i, lb in enumerate(_LABELS)]


def listed(snap: Snapshot) -> list[str]:
    return snap.names(snap.order)


def snapshot(nodes: list[Node]) -> Snapshot:
    snap = Snapshot()
    for n in nodes:
        snap.upsert_node(n)
    return snap


@pytest.mark.parametrize(
    ("labels", "key"),
    [
        ({}, ""),
        ({BETA_REGION: "region-1"}, "region-1:\x00:"),
        ({BETA_ZONE: "zone-2"}, ":\x00:zone-2"),
        ({REGION: "r", ZONE: "z"}, "r:\x00:z"),
        # the deprecated beta labels win over the GA ones when both are present
        ({REGION: "r", ZONE: "z", BETA_REGION: "old-r", BETA_ZONE: "old-z"}, "old-r:\x00:old-z"),
        ({ZONE: "z", BETA_REGION: "old-r"}, "old-r:\x00:z"),
        # present but empty: the beta label is still the one read
        ({ZONE: "z", BETA_ZONE: ""}, ""),
    ],
)
def test_zone_key_is_kubes_get_zone_key(labels: dict[str, str], key: str) -> None:
    assert zone_key(labels) == key


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (0, []),
        (1, ["node-0"]),
        (4, ["node-0", "node-1", "node-2", "node-3"]),
        (9, ["node-0", "node-1", "node-2", "node-3", "node-5", "node-6", "node-4", "node-7",
             "node-8"]),
    ],
    ids=["empty tree", "one node", "four nodes", "all nodes"],
)
def test_list_interleaves_zones_as_kube(count: int, expected: list[str]) -> None:
    assert listed(snapshot(ALL[:count])) == expected


def _ops(add: list[Node], remove: list[Node], ops: str) -> Snapshot:
    snap = Snapshot()
    ia = ir = 0
    for op in ops:
        if op == "a":
            snap.upsert_node(add[ia])
            ia += 1
        else:
            snap.remove_node(remove[ir].name)
            ir += 1
    return snap


@pytest.mark.parametrize(
    ("add", "remove", "ops", "expected"),
    [
        (ALL[2:9], ALL[2:9], "aaarrr", []),
        (ALL[2:9], ALL[2:9], "aaar", ["node-3", "node-4"]),
        (ALL[2:9], ALL[2:9], "aaarrra", ["node-5"]),
        (ALL[4:9] + [ALL[3]], [], "aaaaaa",
         ["node-4", "node-5", "node-6", "node-3", "node-7", "node-8"]),
        (ALL[3:5] + ALL[6:8], ALL[3:5], "aaraar", ["node-6", "node-7"]),
    ],
    ids=["add and remove all nodes", "add and remove some nodes", "remove three nodes",
         "add more nodes to an exhausted zone", "remove zone and add new"],
)
def test_multi_operations_as_kube(
    add: list[Node], remove: list[Node], ops: str, expected: list[str]
) -> None:
    assert listed(_ops(add, remove, ops)) == expected


def test_removing_nodes_keeps_the_order_of_the_rest_as_kube_remove_node() -> None:
    # TestNodeTree_RemoveNode "remove a few nodes including one from a zone with multiple
    # nodes": zones "", r1:z2 [node-4], r1:z3 [node-5], r2:z2 [node-6], in that order
    snap = snapshot(ALL[:7])
    for n in ALL[1:4]:
        snap.remove_node(n.name)
    assert listed(snap) == ["node-0", "node-4", "node-5", "node-6"]


def test_a_zone_emptied_and_refilled_goes_to_the_end_of_the_zone_list() -> None:
    a = [node(f"a{i}", labels={ZONE: "a"}) for i in range(2)]
    b = [node(f"b{i}", labels={ZONE: "b"}) for i in range(2)]
    snap = snapshot([a[0], b[0], a[1], b[1]])
    assert listed(snap) == ["a0", "b0", "a1", "b1"]
    snap.remove_node("a0")
    snap.remove_node("a1")
    snap.upsert_node(a[0])  # zone a is new again: after b
    assert listed(snap) == ["b0", "a0", "b1"]


def test_a_removed_node_added_again_joins_the_end_of_its_zone_in_a_reused_row() -> None:
    nodes = [node(f"n{i}", labels={ZONE: "z"}) for i in range(4)]
    snap = snapshot(nodes)
    row = snap.index["n1"]
    snap.remove_node("n1")
    snap.upsert_node(nodes[1])
    assert snap.index["n1"] == row  # the free row is reused; the place in the list is not
    assert listed(snap) == ["n0", "n2", "n3", "n1"]
    assert snap.position[snap.index["n1"]] == 3


def test_a_zone_change_moves_the_node_when_kube_rebuilds_its_list() -> None:
    # TestNodeTree_UpdateNode "update a node without label": node-0 joins the end of r1:z2.
    # kube's UpdateSnapshot rebuilds the node list only when a node was added or removed, so
    # the move shows at the next such change.
    snap = snapshot(ALL[:7])
    before = listed(snap)
    moved = node("node-0", labels={BETA_REGION: "region-1", BETA_ZONE: "zone-2"})
    snap.upsert_node(moved)
    assert listed(snap) == before
    snap.upsert_node(ALL[7])  # region-2:zone-2, its second node
    # zones now: region-1: [node-1], :zone-2 [node-2], region-1:zone-2 [3, 4, 0],
    # region-1:zone-3 [5], region-2:zone-2 [6, 7]
    assert listed(snap) == [
        "node-1", "node-2", "node-3", "node-5", "node-6", "node-4", "node-7", "node-0",
    ]


def test_a_relabel_in_the_same_zone_keeps_the_place() -> None:
    nodes = [node(f"n{i}", labels={ZONE: "abc"[i % 3]}) for i in range(6)]
    snap = snapshot(nodes)
    before = listed(snap)
    snap.upsert_node(node("n0", labels={ZONE: "a", "extra": "x"}))
    snap.upsert_node(node("n9", labels={ZONE: "a"}))  # forces the rebuild
    assert listed(snap)[: len(before)] == before


def test_position_inverts_order() -> None:
    nodes = [node(f"n{i}", labels={ZONE: "z" + "ab"[i // 3]}) for i in range(6)]
    snap = snapshot(nodes)
    snap.remove_node("n1")
    order = snap.order
    assert listed(snap) == ["n0", "n3", "n2", "n4", "n5"]
    assert (snap.position[order] == np.arange(len(order))).all()
    assert snap.position[snap.index.get("n1", 1)] == -1  # the free row


# ---- the filter stage over the order --------------------------------------------------------
def _zoned_cluster(per_zone: int, pct: int) -> Cluster:
    """Three zones inserted zone by zone; zone c's nodes are twice as large, so a cycle that
    sees any of them places its pod there (least allocated)."""
    engine = Engine(parse_config({"percentageOfNodesToScore": pct}), seed=3,
                    batching_enabled=False)
    c = engine.cluster("t")
    nodes = [
        node(f"{z}{i:03d}", labels={ZONE: z}, cpu=8000 if z == "c" else 4000,
             memory=16 * GiB if z == "c" else 8 * GiB)
        for z in "abc" for i in range(per_zone)
    ]
    c.update(SnapshotUpdate(upsert_nodes=nodes))
    return c


def test_a_sampled_cycle_visits_the_zones_interleaved() -> None:
    c = _zoned_cluster(200, pct=10)
    window = num_feasible_nodes_to_find(600, 10)
    assert window == 100
    first = listed(c.snapshot)[:window]
    assert [n[0] for n in first[:6]] == ["a", "b", "c", "a", "b", "c"]
    assert {z: sum(n[0] == z for n in first) for z in "abc"} == {"a": 34, "b": 33, "c": 33}
    # window 1 holds positions 0..99: zone c's nodes c000..c032; window 2 holds c033..c065.
    # Inserted zone by zone and visited in row order, both windows would hold only zone a.
    out, _ = c.schedule([pod("p0", cpu=100), pod("p1", cpu=100)])
    assert [p.nodes_evaluated for p in out] == [100, 100]
    assert out[0].node_name[0] == "c" and 0 <= int(out[0].node_name[1:]) <= 32
    assert out[1].node_name[0] == "c" and 33 <= int(out[1].node_name[1:]) <= 65


# ---- batching under that order --------------------------------------------------------------
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 5), st.integers(2, 30), st.integers(0, 100), st.booleans(), st.booleans())
def test_batching_places_alike_when_the_visiting_order_is_not_the_rows(
    per_zone: int, npods: int, seed: int, zone_by_zone: bool, churn: bool
) -> None:
    """Nodes added zone by zone are visited out of row order (and so is a node added again
    in a reused row): batching on must still place every pod as batching off."""
    zones = [(z, i) for z in "abc" for i in range(per_zone)]
    if not zone_by_zone:
        zones.sort(key=lambda zi: zi[1])
    cluster = [node(f"{z}{i}", cpu=1000 + 300 * i, labels={ZONE: z}) for z, i in zones]
    steps = [Step("schedule", ([pod(f"p{i}", cpu=100, memory=None) for i in range(npods)],
                               False))]
    if churn:
        steps += [
            Step("remove_node", "a0"),
            Step("upsert_node", [node("a0", labels={ZONE: "a"}), node("d0", labels={ZONE: "d"})]),
            Step("schedule", ([pod(f"q{i}", cpu=100, memory=None) for i in range(npods)],
                              False)),
        ]
    off, _ = play(cluster, steps, batching=False, rescore=True, seed=seed)
    on, batched = play(cluster, steps, batching=True, rescore=True, seed=seed)
    assert on == off
    if not churn and per_zone > 1:
        # in row order (zones added in turn) the ScoreCache serves, else the WindowCache
        assert batched == npods - 1


def test_soft_spread_batching_over_zones_added_zone_by_zone() -> None:
    """Zones inserted in turn (a0..a3, then b, then c), so the node order interleaves them.
    kube's soft spread (scoring.go): raw = round(count in the node's zone * log(3 zones + 2)),
    normalized 100 * (max + min - raw) / max, weight 2. A zone one pod ahead loses at least
    2 * 100 / 8 = 25 points (max raw is round(5 * 1.61) = 8), while a 100m/256Mi pod moves
    LeastAllocated and BalancedAllocation by about 3 points a pod on these 4-CPU/8-GiB nodes:
    every pod goes to a zone with the fewest, so after each pod the zones differ by at most
    one, and 15 pods end 5/5/5. Batching must hint and keep exactly that."""
    cluster = [node(f"{z}{i}", labels={ZONE: z, "zone": z}) for z in "abc" for i in range(4)]
    pods = [make_pod(f"p{i}", {"cpu": 100, "labels": {"app": "web"},
                               "topology_spread_constraints": (SOFT,)}) for i in range(15)]
    on, batched = play_soft(cluster, pods, batching=True)
    assert on == play_soft(cluster, pods, batching=False)[0]
    assert batched > 0
    counts = {z: 0 for z in "abc"}
    for _, name in on:
        counts[name[0]] += 1
        assert max(counts.values()) - min(counts.values()) <= 1, on
    assert counts == {"a": 5, "b": 5, "c": 5}
