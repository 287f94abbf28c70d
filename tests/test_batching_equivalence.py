"""The invariant we promise and kube does not: with percentageOfNodesToScore 100 and a fixed
tie seed, batching on and off give the same placements (with and without rescoring), through
dry runs, mixed signatures, other profiles in between, and interleaved snapshot updates."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.model import (
    Affinity,
    LabelSelector,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Taint,
    TopologySpreadConstraint,
)
from tests.batching_play import ANTI_WEB, PREFER_AWAY, SOFT, WEB, Step, both, play, play_soft
from tests.builders import make_pod, node, pod
from tests.strategies import nodes, pod_shapes


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[Any], list[Step]]:
    cluster = draw(nodes(min_size=2, max_size=10))
    shapes = draw(st.lists(pod_shapes(), min_size=1, max_size=3))
    # pods of one shape and profile share a shape token, as the server's conversion gives them
    tokens: dict[tuple[int, str], object] = {}

    def equal_pod(uid: str, k: int, profile: str) -> Any:
        token = tokens.setdefault((k, profile), object())
        return dataclasses.replace(make_pod(uid, shapes[k], profile), shape=token)

    steps: list[Step] = [Step("compact_min", draw(st.sampled_from([0, 2, 64])))]
    uid = 0
    bound: list[Any] = []
    nominated: list[Any] = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.integers(0, 3)) == 0:
            # a snapshot change between batches, or pods the cache must not be fooled by
            kind = draw(st.sampled_from([
                "add_node", "remove_pod", "remove_node", "relabel", "bind", "move",
                "nominate", "unnominate", "schedule_nominated", "narrowed", "bind_anti",
            ]))
            victim = cluster[draw(st.integers(0, len(cluster) - 1))]
            shape = shapes[draw(st.integers(0, len(shapes) - 1))]
            if kind == "add_node":
                steps.append(Step("upsert_node", node(f"extra{uid}", cpu=2000)))
            elif kind == "remove_pod":
                steps.append(Step("remove_pod", f"p{draw(st.integers(0, max(uid - 1, 0)))}"))
            elif kind == "remove_node":
                steps.append(Step("remove_node", victim.name))
            elif kind == "relabel":
                disk = "hdd" if victim.labels.get("disk") == "ssd" else "ssd"
                steps.append(Step("upsert_node", node(victim.name, labels={"disk": disk})))
            elif kind == "bind":
                b = make_pod(f"b{uid}", {**shape, "node_name": victim.name})
                uid += 1
                bound.append(b)
                steps.append(Step("bind", b))
            elif kind == "bind_anti":  # invalidates the CycleState a run of app=web pods keeps
                b = make_pod(f"b{uid}", {"cpu": 100, "affinity": ANTI_WEB,
                                         "node_name": victim.name})
                uid += 1
                bound.append(b)
                steps.append(Step("bind", b))
            elif kind == "move" and bound:
                b = bound[draw(st.integers(0, len(bound) - 1))]
                steps.append(Step("bind", dataclasses.replace(b, node_name=victim.name)))
            elif kind == "nominate":
                nm = make_pod(f"N{uid}", {**shape, "nominated_node_name": victim.name,
                                          "priority": draw(st.sampled_from([0, 10]))})
                uid += 1
                nominated.append(nm)
                steps.append(Step("bind", nm))
            elif kind == "unnominate" and nominated:
                steps.append(Step("remove_pod", nominated.pop().uid))
            elif kind == "schedule_nominated" and nominated:
                nm = nominated.pop()
                steps.append(Step("schedule", ([dataclasses.replace(nm, nominated_node_name="")],
                                               False)))
            elif kind == "narrowed":
                names = draw(st.lists(st.sampled_from([n.name for n in cluster]),
                                      min_size=1, max_size=4, unique=True))
                terms = tuple(
                    NodeSelectorTerm(match_fields=(NodeSelectorRequirement(
                        "metadata.name", "In", (name,)),))
                    for name in names
                )
                affinity = Affinity(node_affinity=NodeAffinity(required=terms))
                narrowed = {**shape, "affinity": affinity}
                run = [make_pod(f"p{uid + i}", narrowed) for i in range(draw(st.integers(1, 3)))]
                uid += len(run)
                steps.append(Step("schedule", (run, False)))
        run = []
        for _ in range(draw(st.integers(1, 12))):
            k = draw(st.integers(0, len(shapes) - 1))
            profile = "packer" if draw(st.integers(0, 5)) == 0 else "default-scheduler"
            run.append(equal_pod(f"p{uid}", k, profile))
            uid += 1
        steps.append(Step("schedule", (run, draw(st.integers(0, 6)) == 0)))
    return cluster, steps


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_batching_on_and_off_place_every_pod_alike(scenario: tuple[list[Any], list[Step]]) -> None:
    cluster, steps = scenario
    off, batched_off = play(cluster, steps, batching=False, rescore=True)
    assert batched_off == 0
    for rescore in (True, False):
        on, _ = play(cluster, steps, batching=True, rescore=rescore)
        assert on == off, f"rescore={rescore}"


def test_batching_survives_churn_between_batches() -> None:
    """Pods removed between batches dirty their rows; the next hint re-evaluates them."""
    cluster = [node(f"n{i}", cpu=1000) for i in range(6)]
    first = [make_pod(f"p{i}", {"cpu": 600, "memory": 2**30}) for i in range(6)]
    second = [make_pod(f"q{i}", {"cpu": 600, "memory": 2**30}) for i in range(3)]
    steps = [
        Step("schedule", (first, False)),
        Step("remove_pod", "p0"),
        Step("remove_pod", "p3"),
        Step("schedule", (second, False)),
    ]
    off, _ = play(cluster, steps, batching=False, rescore=True)
    on, batched = play(cluster, steps, batching=True, rescore=True)
    assert on == off
    assert batched >= 5 + 1  # the second batch is hinted onto the freed nodes


def test_batching_engages_on_a_run_of_equal_pods() -> None:
    """The property above would pass vacuously if hints were never given."""
    cluster = [node(f"n{i}") for i in range(20)]
    pods = [make_pod(f"p{i}", {"cpu": 500, "memory": 2**30}) for i in range(40)]
    steps = [Step("schedule", (pods, False))]
    off, _ = play(cluster, steps, batching=False, rescore=True)
    on, batched = play(cluster, steps, batching=True, rescore=True)
    assert on == off
    assert batched == 39  # every pod after the first full cycle


SOFT_HOST = TopologySpreadConstraint(
    max_skew=2, topology_key="kubernetes.io/hostname", when_unsatisfiable="ScheduleAnyway",
    label_selector=LabelSelector(match_labels=(("app", "web"),)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes(min_size=2, max_size=9), pod_shapes(), st.integers(1, 25),
       st.sampled_from([(SOFT,), (SOFT_HOST,), (SOFT, SOFT_HOST)]))
def test_soft_spread_batching_places_every_pod_as_a_full_cycle_would(
    cluster: list[Any], shape: dict[str, object], n: int, constraints: tuple[Any, ...]
) -> None:
    shape = {**shape, "labels": {"app": "web"}, "topology_spread_constraints": constraints}
    pods = [make_pod(f"p{i}", shape) for i in range(n)]
    off, _ = play_soft(cluster, pods, batching=False)
    on, _ = play_soft(cluster, pods, batching=True)
    assert on == off  # that hints are given: the next test


def test_soft_spread_batching_engages_and_spreads_across_zones() -> None:
    cluster = [node(f"n{i}", labels={"zone": "abc"[i % 3]}) for i in range(9)]
    pods = [
        make_pod(f"p{i}", {"cpu": 100, "labels": {"app": "web"},
                           "topology_spread_constraints": (SOFT,)})
        for i in range(12)
    ]
    off, _ = play_soft(cluster, pods, batching=False)
    on, batched = play_soft(cluster, pods, batching=True)
    assert on == off and batched == 11
    zones = [int(name[1:]) % 3 for _, name in on]
    assert sorted(zones.count(z) for z in range(3)) == [4, 4, 4]


# ---- scenarios the random property does not generate (found by review) -----------------------

NARROWING = Affinity(node_affinity=NodeAffinity(required=tuple(
    NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", (n,)),))
    for n in ("n1", "n3", "n5", "n7")
)))


def test_pods_narrowed_by_prefilter_do_not_disturb_the_rotation() -> None:
    both([
        Step("upsert_node", [node(f"n{i}") for i in range(10)]),
        Step("schedule", ([pod(f"a{i}", cpu=10, memory=None, affinity=NARROWING)
                           for i in range(6)], False)),
        Step("schedule", ([pod(f"b{i}", cpu=10, memory=None, image="img/db:2")
                           for i in range(8)], False)),
    ])


def test_a_node_change_that_moves_the_visiting_start_reorders_the_cache() -> None:
    for seed in range(4):
        both([
            Step("upsert_node", [node(f"n{i}") for i in range(10)]),
            Step("schedule", ([pod("z", cpu=10, memory=None, affinity=NARROWING)], False)),
            Step("schedule", ([pod(f"p{i}", cpu=10, memory=None) for i in range(2)], False)),
            Step("remove_node", "n0"),
            Step("schedule", ([pod(f"q{i}", cpu=10, memory=None) for i in range(6)], False)),
        ], seed=seed)


def test_a_bound_pod_moved_by_update_frees_its_old_node_for_hints() -> None:
    both([
        Step("upsert_node", [node(f"n{i}") for i in range(4)]),
        Step("bind", pod("b", cpu=3000, memory=None, node_name="n0")),
        Step("schedule", ([pod("a0", cpu=100, memory=None)], False)),
        Step("bind", pod("b", cpu=3000, memory=None, node_name="n3")),
        Step("schedule", ([pod(f"a{i}", cpu=100, memory=None) for i in range(1, 4)], False)),
    ])


def test_a_nomination_turned_binding_and_nominated_pods_present_are_honoured() -> None:
    both([
        Step("upsert_node", [node(f"n{i}") for i in range(4)]),
        Step("bind", pod("N", cpu=3500, memory=None, priority=10, nominated_node_name="n1")),
        Step("schedule", ([pod("a0", cpu=600, memory=None)], False)),
        Step("bind", pod("N", cpu=3500, memory=None, priority=10, node_name="n3")),
        Step("schedule", ([pod(f"a{i}", cpu=600, memory=None) for i in range(1, 4)], False)),
    ], min_batched=2)  # a1 is stored (the nomination bound), a2 and a3 hinted
    both([
        Step("upsert_node", [node(f"n{i}") for i in range(4)]),
        Step("bind", pod("s", cpu=500, memory=None, node_name="n1")),
        Step("bind", pod("N", cpu=2000, memory=None, priority=10, nominated_node_name="n1")),
        Step("schedule", ([pod(f"a{i}", cpu=1000, memory=None, scheduler_name="packer")
                           for i in range(4)], False)),
    ], min_batched=0)  # a nominated pod counts for every cycle: none is hinted


def test_scheduling_a_nominated_pod_ends_its_nomination_for_the_batch_state() -> None:
    """N holds n1 while nominated, so the cycles before it cache n1 as infeasible; when the
    client schedules N itself (same shape as the cached pods), n1 is free for it again."""
    for seed in range(4):
        both([
            Step("upsert_node", [node(f"n{i}", cpu=1000) for i in range(4)]),
            Step("bind", pod("N", cpu=600, memory=None, nominated_node_name="n1")),
            Step("schedule", ([pod("a0", cpu=600, memory=None)], False)),
            Step("schedule", ([pod("N", cpu=600, memory=None)], False)),
            Step("schedule", ([pod(f"b{i}", cpu=600, memory=None) for i in range(3)], False)),
        ], seed=seed)


def test_a_bound_pod_with_anti_affinity_changes_every_node_of_its_zone() -> None:
    """An existing pod's terms reach beyond its own node: binding one mid-run must not leave
    the cached verdicts of the other nodes in its zone standing (nor the kept CycleState)."""
    zoned = [node(f"n{i}", labels={"zone": "abc"[i % 3]}) for i in range(9)]
    zone_a = {"n0", "n3", "n6"}
    for affinity in (ANTI_WEB, PREFER_AWAY):
        for seed in range(3):
            steps = [
                Step("upsert_node", zoned),
                Step("schedule", ([make_pod(f"p{i}", WEB) for i in range(3)], False)),
                Step("bind", make_pod("x", {"cpu": 100, "affinity": affinity,
                                            "node_name": "n0"})),
                Step("schedule", ([make_pod(f"q{i}", WEB) for i in range(6)], False)),
                Step("remove_pod", "x"),
                Step("schedule", ([make_pod(f"r{i}", WEB) for i in range(6)], False)),
            ]
            both(steps, seed=seed)
            # While x lives, every q avoids all of zone a, not only x's node n0: required
            # anti-affinity filters n0, n3 and n6; the preferred term (weight 100) scores them
            # 0 against 100 elsewhere (InterPodAffinity, weight 2), where a 100m pod moves
            # LeastAllocated by 2.5 points a pod on these 4-CPU nodes.
            out, _ = play([], steps, batching=True, rescore=True, seed=seed)
            qs = [name for uid, name, *_ in out if uid.startswith("q")]
            assert len(qs) == 6 and all(qs) and not set(qs) & zone_a, (affinity, seed, qs)


def test_a_node_that_stopped_fitting_by_its_labels_stays_out_after_a_usage_change() -> None:
    """A cached node relabelled out of a pod's selector is dropped; a later pod removal on it
    dirties it by usage only, which must not bring it back on the dynamic filters alone."""
    ssd = {"cpu": 100, "memory": None, "node_selector": {"disk": "ssd"}}
    both([
        Step("upsert_node", [node(f"n{i}", labels={"disk": "ssd"}) for i in range(4)]),
        Step("bind", make_pod("b", {"cpu": 100, "node_name": "n2"})),
        Step("schedule", ([make_pod(f"p{i}", ssd) for i in range(2)], False)),
        Step("upsert_node", node("n2", labels={"disk": "hdd"})),
        Step("schedule", ([make_pod(f"q{i}", ssd) for i in range(2)], False)),
        Step("remove_pod", "b"),
        Step("schedule", ([make_pod(f"r{i}", ssd) for i in range(8)], False)),
    ])


def test_a_revived_node_brings_its_taint_penalty_back_into_the_scores() -> None:
    """A cached node that stopped fitting and fits again after a removal must count again in
    the normalization of TaintToleration: its PreferNoSchedule taint sets it apart."""
    prefer = (Taint("dedicated", "gpu", "PreferNoSchedule"),)
    small = {"cpu": 600, "memory": None}
    both([
        Step("upsert_node", [node("n0"), node("n1", cpu=1000, taints=prefer), node("n2")]),
        Step("schedule", ([make_pod(f"p{i}", small) for i in range(2)], False)),
        Step("bind", make_pod("b", {**small, "node_name": "n1"})),
        Step("schedule", ([make_pod("q0", small)], False)),
        Step("remove_pod", "b"),
        Step("schedule", ([make_pod(f"r{i}", small) for i in range(6)], False)),
    ])


def test_a_packing_profile_keeps_filling_the_node_it_chose() -> None:
    """MostAllocated raises the chosen node's score with every pod: the hint must follow it
    up (the kept best of the cached scores moves), as a full cycle does."""
    small = {"cpu": 300, "memory": None}
    both([
        Step("upsert_node", [node(f"n{i}", cpu=2000) for i in range(6)]),
        Step("schedule", ([make_pod(f"p{i}", small, "packer") for i in range(14)], False)),
    ])
