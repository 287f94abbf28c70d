"""Review of the batching hot path (shape tokens, run memo, tombstones, uniform sums, kept ties).

Each test compares batching on and off (percentageOfNodesToScore 100, fixed seed): placements,
outcomes and scores must be equal. The first group reproduces divergences and a crash a review
found (fixed with them); the second covers paths the other tests do not reach.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.model import (
    Affinity,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Taint,
)
from tests.batching_play import ANTI_WEB, PREFER_AWAY, WEB, Step, both, play
from tests.builders import make_pod, node, pod


def narrowing(*names: str) -> Affinity:
    """Required node affinity on metadata.name (a DaemonSet-like pod): PreFilter narrows it,
    and its filter stage visits fewer nodes, which moves the cluster's next start index."""
    return Affinity(node_affinity=NodeAffinity(required=tuple(
        NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", (n,)),))
        for n in names
    )))


def zones() -> list[Any]:
    """n0 and n2 share zone a; n1 and n3 are alone in their zones."""
    return [
        node("n0", labels={"zone": "a"}), node("n1", labels={"zone": "b"}),
        node("n2", labels={"zone": "a"}), node("n3", labels={"zone": "c"}),
    ]


def placed(steps: list[Step], seed: int) -> tuple[set[str], str]:
    """The nodes of p0 and p1, and q0's node, with batching on.

    Worked from kube for the two tests below: x's required anti-affinity keeps app=web out of
    zone a (n0, n2) while x lives, so p0 and p1 take n1 and n3, one each (LeastAllocated; the
    order goes by the seed). Once zone a is free, q0 takes n2, the one empty node left, which
    LeastAllocated and BalancedAllocation both prefer to the nodes holding a 100m pod."""
    out, _ = play([], steps, batching=True, rescore=True, seed=seed)
    node_of = {uid: name for uid, name, *_ in out}
    return {node_of["p0"], node_of["p1"]}, node_of["q0"]


# ---- regressions: divergences and a crash the review found ------------------------------------


def test_a_node_change_that_ends_a_preferred_term_does_not_crash_the_hint() -> None:
    """Regression (KeyError: 'InterPodAffinity', from the tombstone change).

    x's preferred anti-affinity makes InterPodAffinity score the first cycle. n2 (tainted, not
    cached) loses its taint and its zone: x's term has no topology value left, so the rescore
    of n2 skips InterPodAffinity, and _upsert inserting the new row indexes raw[name] for
    every cached plugin. The replace variant (n2 removed, a new node on its row) does the same.
    Since then an upsert of a node holding a pod with inter-pod terms flushes the batch state,
    so p1 is not hinted (min_batched=0): what is left to check is that it lands alike.
    """
    tainted = (Taint("dedicated", "gpu", "NoSchedule"),)
    cluster = [node("n0", labels={"zone": "a"}), node("n1", labels={"zone": "b"}),
               node("n2", labels={"zone": "a"}, taints=tainted)]
    holder = make_pod("x", {"cpu": 100, "affinity": PREFER_AWAY, "node_name": "n2"})
    both([
        Step("upsert_node", cluster),
        Step("bind", holder),
        Step("schedule", ([make_pod("p0", WEB)], False)),
        Step("upsert_node", node("n2")),
        Step("schedule", ([make_pod("p1", WEB)], False)),
    ], min_batched=0)


def test_removing_the_node_of_a_pod_with_required_anti_affinity_frees_its_zone() -> None:
    """Regression (placement). x on n0 keeps app=web pods out of zone a, so the cache holds n1 and
    n3 only. Removing n0 removes x with it: n2 fits now, empty, and a full cycle picks it;
    the hint never re-filters n2. The flush for pods with terms covers remove_pods and
    upsert_pods, not the pods a remove_nodes drops (scheduler.py, Cluster.update)."""
    for seed in range(3):
        steps = [
            Step("upsert_node", zones()),
            Step("bind", make_pod("x", {"cpu": 100, "affinity": ANTI_WEB, "node_name": "n0"})),
            Step("schedule", ([make_pod(f"p{i}", WEB) for i in range(2)], False)),
            Step("remove_node", "n0"),
            Step("schedule", ([make_pod("q0", WEB)], False)),
        ]
        both(steps, seed=seed)
        assert placed(steps, seed) == ({"n1", "n3"}, "n2")


def test_relabelling_the_node_of_a_pod_with_required_anti_affinity_frees_its_zone() -> None:
    """Regression (placement). As above, but n0 moves to zone d: x's term now reaches zone d, and
    n2 (zone a) fits; only n0's own row is re-evaluated."""
    for seed in range(3):
        steps = [
            Step("upsert_node", zones()),
            Step("bind", make_pod("x", {"cpu": 100, "affinity": ANTI_WEB, "node_name": "n0"})),
            Step("schedule", ([make_pod(f"p{i}", WEB) for i in range(2)], False)),
            Step("upsert_node", node("n0", labels={"zone": "d"})),
            Step("schedule", ([make_pod("q0", WEB)], False)),
        ]
        both(steps, seed=seed)
        assert placed(steps, seed) == ({"n1", "n3"}, "n2")


def test_a_dry_run_of_a_nominated_pod_is_not_hinted_from_a_cache_its_nomination_shaped() -> None:
    """Regression (placement; predates this change). N's nomination fills n1 (pods: 1) for a0, so
    the cache lacks n1. A dry run of N itself (same shape) ignores its own nomination, so a
    full cycle picks the big empty n1; only a real run of N flushes the batch state."""
    for seed in range(3):
        both([
            Step("upsert_node", [node("n0", cpu=1000), node("n1", cpu=4000, pods=1),
                                 node("n2", cpu=1000), node("n3", cpu=1000)]),
            Step("bind", pod("N", cpu=600, memory=None, nominated_node_name="n1")),
            Step("schedule", ([pod("a0", cpu=600, memory=None)], False)),
            Step("schedule", ([pod("N", cpu=600, memory=None)], True)),
        ], seed=seed, min_batched=0)  # nominations present: no hints


def test_a_higher_priority_pod_is_not_hinted_from_a_cache_a_nomination_shaped() -> None:
    """Regression (placement; predates this change). N (priority 10) nominated on n1 counts for a0
    (priority 0), so a0's cycle caches n0, n2, n3. b0 (priority 20, equal signature: priority
    is not signed) does not count N, so nothing suppresses its hint, yet n1 fits it and wins
    a full cycle. A cycle that ran the nominated two-pass should not be stored."""
    for seed in range(3):
        both([
            Step("upsert_node", [node("n0", cpu=1000), node("n1", cpu=4000),
                                 node("n2", cpu=1000), node("n3", cpu=1000)]),
            Step("bind", pod("N", cpu=3500, memory=None, priority=10, nominated_node_name="n1")),
            Step("schedule", ([pod("a0", cpu=600, memory=None)], False)),
            Step("schedule", ([pod("b0", cpu=600, memory=None, priority=20)], False)),
        ], seed=seed, min_batched=0)  # nominations present: no hints


def test_hinted_pods_keep_the_visiting_start_a_full_cycle_would() -> None:
    """Regression (placement; predates this change). The narrowed pod moves next_start_index to 5.
    With n5 removed a full cycle wraps it to 5 % 5 = 0; a hint leaves it at 5. Once n5 is back,
    hints rotate the cache to start at row 5, full cycles at row 0: equal scores are then
    drawn in another order."""
    for seed in range(4):
        both([
            Step("upsert_node", [node(f"n{i}") for i in range(6)]),
            Step("schedule", ([pod("z", cpu=10, memory=None,
                                   affinity=narrowing("n0", "n1", "n2", "n3", "n4"))], False)),
            Step("schedule", ([pod(f"p{i}", cpu=100, memory=None) for i in range(2)], False)),
            Step("remove_node", "n5"),
            Step("schedule", ([pod("q0", cpu=100, memory=None)], False)),
            Step("upsert_node", node("n5")),
            Step("schedule", ([pod(f"r{i}", cpu=100, memory=None) for i in range(4)], False)),
        ], seed=seed)


def test_rows_that_fit_again_on_both_sides_of_the_wrap_keep_the_visiting_order() -> None:
    """Regression (placement and score; predates this change). z moves the visiting start to row 3,
    so the cache holds rows 3 4 1 2 (0 and 5 are full). Freeing 0 and 5 inserts both at the
    same place, in row order (0 before 5) rather than visiting order (5 before 0): ties are
    drawn in another order, and the unsorted keys then make _recheck_last miss row 5 and
    insert it twice, the stale copy keeping its old score."""
    for seed in range(4):
        both([
            Step("upsert_node", [node(f"n{i}", cpu=1000) for i in range(6)]),
            Step("bind", pod("b0", cpu=1000, memory=None, node_name="n0")),
            Step("bind", pod("b5", cpu=1000, memory=None, node_name="n5")),
            Step("schedule", ([pod("z", cpu=10, memory=None,
                                   affinity=narrowing("n1", "n2", "n3"))], False)),
            Step("schedule", ([pod("p0", cpu=100, memory=None)], False)),
            Step("remove_pod", "b0"),
            Step("remove_pod", "b5"),
            Step("schedule", ([pod(f"p{i}", cpu=100, memory=None) for i in range(1, 6)], False)),
        ], seed=seed)


# ---- paths the other tests do not reach ---------------------------------------------------------


def test_renormalizing_picks_skip_the_tombstones_of_filled_nodes() -> None:
    """Pods with preferred anti-affinity bound before the run keep InterPodAffinity
    in the scores (st.dense): every pick renormalizes, over a cache whose filled nodes are
    tombstones (killed by _kill_one), compacted at the pick and by the threshold."""
    cluster = [node(f"n{i}", cpu=1000, labels={"zone": "abc"[i % 3]}) for i in range(9)]
    heavy = {**WEB, "cpu": 300}
    for seed in range(3):
        both([
            Step("compact_min", 2),
            Step("upsert_node", cluster),
            Step("bind", make_pod("x", {"cpu": 100, "affinity": PREFER_AWAY,
                                        "node_name": "n0"})),
            Step("bind", make_pod("y", {"cpu": 100, "affinity": PREFER_AWAY,
                                        "node_name": "n4"})),
            Step("schedule", ([make_pod(f"p{i}", heavy) for i in range(24)], False)),
            Step("remove_pod", "p3"),
            Step("schedule", ([make_pod(f"q{i}", heavy) for i in range(4)], False)),
        ], seed=seed)


def play_config(
    cfg: dict[str, Any], steps: list[Step], batching: bool, seed: int
) -> tuple[list[Any], int]:
    """The placements of `steps` under `cfg`, and how many pods were hinted."""
    engine = Engine(parse_config(cfg), seed=seed, batching_enabled=batching)
    c = engine.cluster("x")
    out: list[Any] = []
    try:
        for s in steps:
            if s.kind == "upsert_node":
                c.update(SnapshotUpdate(upsert_nodes=s.payload))
            elif s.kind == "remove_pod":
                c.update(SnapshotUpdate(remove_pods=[s.payload]))
            else:
                placements, _ = c.schedule(s.payload)
                out.extend((p.pod_uid, p.node_name, p.outcome, p.score) for p in placements)
        return out, sum(b.batched_pods for b in c.batches.values())
    finally:
        engine.close()


def test_a_profile_without_identity_scores_picks_by_the_uniform_constant_alone() -> None:
    """With NodeResourcesFit, BalancedAllocation and ImageLocality not scoring, no
    plugin feeds the `fixed` sums (the zeros path of _fixed): every live row ties until the
    PreferNoSchedule taints make TaintToleration (weight 3) non-uniform over the live rows."""
    cfg = {
        "percentageOfNodesToScore": 100,
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {"score": {
                "disabled": [{"name": "NodeResourcesFit"},
                             {"name": "NodeResourcesBalancedAllocation"},
                             {"name": "ImageLocality"}],
                "enabled": [{"name": "TaintToleration", "weight": 3}],
            }},
        }],
    }
    prefer = (Taint("dedicated", "gpu", "PreferNoSchedule"),)
    cluster = [node("n0", cpu=1000), node("n1", cpu=1000, taints=prefer), node("n2", cpu=1000),
               node("n3", cpu=1000, taints=prefer), node("n4", cpu=1000)]
    steps = [
        Step("upsert_node", cluster),
        Step("schedule", [pod(f"p{i}", cpu=400, memory=None) for i in range(12)]),
        Step("remove_pod", "p0"),
        Step("schedule", [pod(f"q{i}", cpu=400, memory=None) for i in range(4)]),
    ]
    for seed in range(3):
        off, _ = play_config(cfg, steps, batching=False, seed=seed)
        on, batched = play_config(cfg, steps, batching=True, seed=seed)
        assert on == off
        assert batched >= 8  # each node takes two pods: the second of each run is hinted


def test_one_shape_token_across_two_profiles() -> None:
    """Pods sharing a shape token but not a profile: the PodInfo is reused across the
    profiles (CycleCursor.last_info) while each profile's batch state signs the pod itself."""
    token = object()

    def equal(uid: str, profile: str) -> Any:
        return dataclasses.replace(
            pod(uid, cpu=300, memory=None, scheduler_name=profile), shape=token
        )

    for seed in range(3):
        both([
            Step("upsert_node", [node(f"n{i}", cpu=2000) for i in range(5)]),
            Step("schedule", ([equal(f"a{i}", "default-scheduler") for i in range(4)]
                              + [equal(f"b{i}", "packer") for i in range(4)]
                              + [equal(f"c{i}", "default-scheduler") for i in range(4)], False)),
        ], seed=seed)
