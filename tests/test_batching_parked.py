"""Parked batch states (engine/batching/parked): runs of a few Deployments interleaved, each resumed
from the cache its interrupted run left, must place and score every pod as the full cycles
of batching off do, whatever happens between the runs: pods of other signatures assumed on
the cache's nodes, churn, a pod with pod anti-affinity, another profile's pods, dry runs,
pods that fit nowhere, node changes. Sampled (adaptive and 10 %) clusters, zoned.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.errors import InvalidArgument
from schedsvc.model import (
    Affinity,
    ContainerImage,
    LabelSelector,
    Namespace,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinity,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from tests.batching_play import ZONE_KEY, Step, config, deployment, play
from tests.builders import node, pod


def avoid(k: int) -> Affinity:
    """Preferred zone-wide anti-affinity to Deployment k: moves its pods' scores domain-wide."""
    term = PodAffinityTerm(ZONE_KEY, LabelSelector(match_labels=(("app", f"d{k}"),)))
    return Affinity(pod_anti_affinity=PodAffinity(preferred=(WeightedPodAffinityTerm(50, term),)))


INTERLUDES = ["none", "none", "bind", "fill", "anti", "packer", "dry", "nowhere", "relabel"]


@st.composite
def interleaved(draw: st.DrawFn) -> tuple[list[Any], list[Step]]:
    n = draw(st.integers(101, 220))
    block = draw(st.sampled_from([1, 7, 40]))
    cluster = [
        node(f"n{i}", cpu=draw(st.sampled_from([2000, 4000])),
             labels={ZONE_KEY: "abc"[(i // block) % 3]})
        for i in range(n)
    ]
    kinds = draw(st.integers(2, 4))
    steps: list[Step] = []
    uid = 0
    for _ in range(draw(st.integers(4, 12))):
        what = draw(st.sampled_from(INTERLUDES))
        victim = cluster[draw(st.integers(0, n - 1))].name
        k = draw(st.integers(0, kinds - 1))
        if what in ("bind", "fill"):
            cpu = 100 if what == "bind" else 4000
            steps.append(Step("bind", pod(f"b{uid}", **{**deployment(k), "cpu": cpu},
                                          node_name=victim)))
        elif what in ("anti", "packer", "dry", "nowhere"):
            shape: dict[str, Any] = {"cpu": 100, "labels": {"app": "other"}}
            profile = "default-scheduler"
            if what == "anti":
                shape["affinity"] = avoid(k)
            elif what == "packer":
                profile, shape = "packer", deployment(k)
            elif what == "nowhere":
                shape["cpu"] = 64_000
            steps.append(Step("schedule", (
                [pod(f"x{uid}", scheduler_name=profile, **shape)], what == "dry"
            )))
        elif what == "relabel":
            steps.append(Step("upsert_node", node(victim, labels={ZONE_KEY: "c", "x": "y"})))
        uid += 1
        run = [pod(f"p{uid + j}", **deployment(k)) for j in range(draw(st.integers(1, 12)))]
        uid += len(run)
        steps.append(Step("schedule", (run, False)))
    return cluster, steps


def resumed(cluster: list[Any], steps: list[Step], pct: int | None) -> int:
    """Runs the batching-on engine resumed from a parked cache (the property is not vacuous)."""
    engine = Engine(parse_config(config(pct)), seed=7, batching_enabled=True)
    c = engine.cluster("x")
    c.update(SnapshotUpdate(upsert_nodes=cluster))
    try:
        for s in steps:
            if s.kind == "schedule":
                c.schedule(s.payload[0], dry_run=s.payload[1])
            elif s.kind == "bind":
                c.update(SnapshotUpdate(upsert_pods=[s.payload]))
            else:
                c.update(SnapshotUpdate(upsert_nodes=[s.payload]))
        return sum(b.resumed_runs for b in c.batches.values())
    finally:
        engine.close()


def check(pct: int | None, scenario: tuple[list[Any], list[Step]]) -> None:
    cluster, steps = scenario
    off, _ = play(cluster, steps, batching=False, rescore=True, config=config(pct))
    on, batched = play(cluster, steps, batching=True, rescore=True, config=config(pct))
    assert on == off
    norescore, _ = play(cluster, steps, batching=True, rescore=False, config=config(pct))
    assert norescore == off


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(interleaved())
def test_resumed_runs_place_as_full_cycles_at_the_adaptive_default(
    scenario: tuple[list[Any], list[Step]],
) -> None:
    check(None, scenario)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(interleaved())
def test_resumed_runs_place_as_full_cycles_at_ten_percent(
    scenario: tuple[list[Any], list[Step]],
) -> None:
    check(10, scenario)


def test_a_returning_deployment_resumes_its_parked_cache() -> None:
    """Three Deployments in runs, twice round, with another pod assumed and churn between:
    the second round resumes all three, and every placement is the full cycle's."""
    cluster = [node(f"n{i}", labels={ZONE_KEY: "abc"[i % 3]}) for i in range(150)]
    steps: list[Step] = []
    for r in range(2):
        for k in range(3):
            steps.append(Step("bind", pod(f"b{r}{k}", **deployment(k), node_name=f"n{7 * k}")))
            run = [pod(f"p{r}{k}{j}", **deployment(k)) for j in range(6)]
            steps.append(Step("schedule", (run, False)))
    off, _ = play(cluster, steps, batching=False, rescore=True, config=config(None))
    on, batched = play(cluster, steps, batching=True, rescore=True, config=config(None))
    assert on == off
    assert resumed(cluster, steps, None) == 3
    # each run's first pod: a full cycle in the first round, a resumed hint in the second
    assert batched == 2 * 3 * 6 - 3


def test_an_anti_affinity_pod_between_runs_drops_the_parked_caches() -> None:
    """Its terms move the parked Deployments' scores zone-wide: no row list says where."""
    cluster = [node(f"n{i}", labels={ZONE_KEY: "abc"[i % 3]}) for i in range(150)]
    a = [pod(f"a{j}", **deployment(0)) for j in range(4)]
    b = [pod(f"b{j}", **deployment(1)) for j in range(4)]
    anti = pod("anti", cpu=100, labels={"app": "other"}, affinity=avoid(0))
    again = [pod(f"a2{j}", **deployment(0)) for j in range(4)]
    steps = [Step("schedule", (p, False)) for p in (a, b, [anti], again)]
    off, _ = play(cluster, steps, batching=False, rescore=True, config=config(None))
    on, _ = play(cluster, steps, batching=True, rescore=True, config=config(None))
    assert on == off
    assert resumed(cluster, steps, None) == 0


def test_rows_are_journaled_only_while_a_cache_is_parked() -> None:
    from schedsvc.engine.batching.parked import MAX_JOURNAL, ParkedStates
    from schedsvc.engine.batching.window_cache import WindowCache

    p = ParkedStates()
    alive = np.ones(10, dtype=np.bool_)
    alive[4] = False
    p.changed([1, 2])  # nothing parked: nothing kept
    cache = dataclasses.replace(WindowCache.pending_for(b"s", 0.0), pending=False)
    p.park(cache, {5})
    p.changed([3, 4, 3])
    got = p.resume(b"s", alive)
    assert got is not None and got[1].tolist() == [3, 5]  # once each, ascending, live only
    assert p.resume(b"s", alive) is None  # taken
    # a cache that missed more rows than the journal keeps is dropped
    p.park(cache, set())
    p.changed(range(MAX_JOURNAL + 1))
    assert b"s" not in p


def test_a_resume_is_as_fresh_as_a_new_cache() -> None:
    """maxBatchAge counts from a cache's last full re-validation: a resume re-evaluates every
    row that changed, so it restarts the age; a cache parked longer than the age is dropped."""
    cluster = [node(f"n{i}", labels={ZONE_KEY: "abc"[i % 3]}) for i in range(150)]
    engine = Engine(parse_config(config(None)), seed=7, batching_enabled=True)
    c = engine.cluster("x")
    c.update(SnapshotUpdate(upsert_nodes=cluster))
    now = [0.0]
    for b in c.batches.values():
        b.clock = lambda: now[0]
    b = c.batches["default-scheduler"]
    try:
        for r in range(6):  # A and B alternate, 0.2 s apart: each returns within 0.5 s
            for k in range(2):
                c.schedule([pod(f"p{r}{k}{j}", **deployment(k)) for j in range(3)])
                now[0] += 0.2
        assert b.resumed_runs == 10  # every return after the first round
        now[0] += 0.6  # parked longer than maxBatchAge
        c.schedule([pod(f"late{j}", **deployment(0)) for j in range(3)])
        assert b.resumed_runs == 10
    finally:
        engine.close()


# ---- found by review (issue 16): each failed before its fix -------------------------------------


def test_a_return_when_every_parked_slot_is_taken_resumes_the_oldest() -> None:
    """MAX_PARKED + 1 Deployments round-robin: when the first comes back, parking the
    interrupted run pushes the oldest parked cache out, which is the returning one. It must
    be taken before (this raised an AssertionError out of Schedule)."""
    from schedsvc.engine.batching.parked import MAX_PARKED

    cluster = [node(f"n{i}", cpu=64_000, labels={ZONE_KEY: "abc"[i % 3]}) for i in range(120)]
    steps = [
        Step("schedule", ([pod(f"p{r}{k}{j}", **deployment(k)) for j in range(2)], False))
        for r in range(2) for k in range(MAX_PARKED + 1)
    ]
    off, _ = play(cluster, steps, batching=False, rescore=True, config=config(None))
    on, _ = play(cluster, steps, batching=True, rescore=True, config=config(None))
    assert on == off
    assert resumed(cluster, steps, None) == MAX_PARKED + 1  # every return of the second round


TIER = LabelSelector(match_labels=(("tier", "web"),))
HOST_KEY = "kubernetes.io/hostname"


def varied(k: int, ns: str = "default") -> dict[str, Any]:
    """Deployment k's shape, varied by k: own soft constraints (one selecting every
    Deployment's pods), a node selector, an image some nodes hold."""
    shape = {**deployment(k), "labels": {"app": f"d{k}", "tier": "web"}, "namespace": ns}
    if k % 3 == 1:
        own = LabelSelector(match_labels=(("app", f"d{k}"),))
        shape["topology_spread_constraints"] = (
            TopologySpreadConstraint(1 + k % 2, ZONE_KEY, "ScheduleAnyway", TIER),
            TopologySpreadConstraint(2, HOST_KEY, "ScheduleAnyway", own),
        )
    if k % 4 == 2:
        shape["node_selector"] = {"disk": "ssd"}
    if k % 5 == 3:
        shape["image"] = "img/db:2"
    return shape


ROUGH = ["bind", "fill", "move", "relabel_pod", "remove", "hard", "required_anti", "preempt",
         "namespace", "other_namespace", "dry", "nowhere", "nominate", "unnominate", "age"]


@st.composite
def rough(draw: st.DrawFn) -> tuple[list[Any], list[tuple[str, Any]], dict[str, Any]]:
    """Interleaved runs of both profiles with what kube's cycles see between them: preemption
    (a nomination), pods moved, relabelled or removed, namespaces, hard spreading, required
    anti-affinity, other namespaces' pods, age; and small bounds (parked slots, journal,
    SelectorCounts entries) so every eviction path is taken."""
    n = draw(st.integers(101, 200))
    block = draw(st.sampled_from([1, 7, 40]))
    db = (ContainerImage(("img/db:2",), 300 * 2**20),)
    cluster = [node(f"n{i}", cpu=draw(st.sampled_from([2000, 4000])),
                    labels={ZONE_KEY: "abc"[(i // block) % 3], "disk": "hdd" if i % 3 else "ssd"},
                    images=db if i % 4 == 0 else ()) for i in range(n)]
    knobs = {"pct": draw(st.sampled_from([None, 10])), "parked": draw(st.sampled_from([16, 2])),
             "journal": draw(st.sampled_from([8192, 8, 30])),
             "lru": draw(st.sampled_from([256, 1]))}
    kinds = draw(st.integers(2, 6))
    steps: list[tuple[str, Any]] = []
    uid = 0
    bound: list[Any] = []
    placed: list[str] = []
    noms: list[str] = []
    for _ in range(draw(st.integers(4, 12))):
        what = draw(st.sampled_from(ROUGH))
        victim = cluster[draw(st.integers(0, n - 1))].name
        k = draw(st.integers(0, kinds - 1))
        mine = LabelSelector(match_labels=(("app", f"d{k}"),))
        if what in ("bind", "fill", "other_namespace"):
            ns = "other" if what == "other_namespace" else "default"
            cpu = 4000 if what == "fill" else 100
            b = pod(f"b{uid}", **{**varied(k, ns), "cpu": cpu}, node_name=victim)
            bound.append(b)
            steps.append(("bind", b))
        elif what == "move" and bound:
            b = bound[draw(st.integers(0, len(bound) - 1))]
            steps.append(("bind", dataclasses.replace(b, node_name=victim)))
        elif what == "relabel_pod" and bound:
            b = bound[draw(st.integers(0, len(bound) - 1))]
            steps.append(("bind", dataclasses.replace(b, labels={"app": f"d{k}"})))
        elif what == "remove" and placed:
            steps.append(("remove_pod", placed[draw(st.integers(0, len(placed) - 1))]))
        elif what == "hard":
            hard = TopologySpreadConstraint(1, ZONE_KEY, "DoNotSchedule", mine)
            steps.append(("schedule", ([pod(f"h{uid}", labels={"app": f"d{k}"},
                                            topology_spread_constraints=(hard,))], False)))
        elif what == "required_anti":
            term = PodAffinityTerm(ZONE_KEY, mine)
            anti = Affinity(pod_anti_affinity=PodAffinity(required=(term,)))
            steps.append(("schedule", ([pod(f"x{uid}", labels={"app": "o"}, affinity=anti)],
                                       False)))
        elif what == "preempt":  # takes a whole node from lower-priority pods: a nomination
            steps.append(("schedule", ([pod(f"P{uid}", cpu=2000, priority=100,
                                            node_selector={HOST_KEY: victim})], False)))
        elif what == "namespace":
            steps.append(("namespace", Namespace(f"ns{k}", labels={"t": str(uid)})))
        elif what in ("dry", "nowhere"):
            shape = {**varied(k), "cpu": 64_000} if what == "nowhere" else varied(k)
            steps.append(("schedule", ([pod(f"y{uid}{j}", **shape) for j in range(2)],
                                       what == "dry")))
        elif what == "nominate":
            steps.append(("bind", pod(f"N{uid}", cpu=500, nominated_node_name=victim)))
            noms.append(f"N{uid}")
        elif what == "unnominate" and noms:
            steps.append(("remove_pod", noms.pop()))
        elif what == "age":
            steps.append(("clock", 0.6))
        uid += 1
        profile = draw(st.sampled_from(["default-scheduler"] * 3 + ["packer"]))
        run = [pod(f"p{uid + j}", scheduler_name=profile, **varied(k))
               for j in range(draw(st.integers(1, 10)))]
        placed += [p.uid for p in run]
        uid += len(run)
        steps += [("schedule", (run, False)), ("clock", draw(st.sampled_from([0.0, 0.2])))]
    return cluster, steps, knobs


def play_rough(
    cluster: list[Any], steps: list[tuple[str, Any]], knobs: dict[str, Any], batching: bool,
    rescore: bool = True,
) -> tuple[list[Any], int]:
    """(uid, node, outcome, score, nomination) per pod attempted, and the runs resumed."""
    from schedsvc.engine.batching import parked
    from schedsvc.framework.selector_counts import SelectorCounts

    cfg = config(knobs["pct"])
    if not rescore:
        cfg["profiles"] = [{**p, "batching": {"rescore": False}} for p in cfg["profiles"]]
    saved = parked.MAX_PARKED, parked.MAX_JOURNAL, SelectorCounts.__init__.__defaults__
    parked.MAX_PARKED, parked.MAX_JOURNAL = knobs["parked"], knobs["journal"]
    SelectorCounts.__init__.__defaults__ = (knobs["lru"],)
    engine = Engine(parse_config(cfg), seed=7, batching_enabled=batching)
    now = [0.0]
    c = engine.cluster("x")
    for b in c.batches.values():
        b.clock = lambda: now[0]
    c.update(SnapshotUpdate(upsert_nodes=cluster))
    out: list[Any] = []
    try:
        for kind, payload in steps:
            if kind == "schedule":
                placements, _ = c.schedule(payload[0], dry_run=payload[1])
                out += [(p.pod_uid, p.node_name, p.outcome, p.score, p.nominated_node_name)
                        for p in placements]
            elif kind == "clock":
                now[0] += payload
            else:
                upd = {"bind": "upsert_pods", "remove_pod": "remove_pods",
                       "namespace": "upsert_namespaces"}[kind]
                try:
                    c.update(SnapshotUpdate(**{upd: [payload]}))
                except InvalidArgument:  # a pod moved to a node it does not fit: alike in both
                    out.append(("invalid", kind))
        return out, sum(b.resumed_runs for b in c.batches.values())
    finally:
        engine.close()
        parked.MAX_PARKED, parked.MAX_JOURNAL, SelectorCounts.__init__.__defaults__ = saved


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rough())
def test_resumed_runs_hold_through_preemption_namespaces_hard_spreading_and_small_bounds(
    scenario: tuple[list[Any], list[tuple[str, Any]], dict[str, Any]],
) -> None:
    cluster, steps, knobs = scenario
    off, _ = play_rough(cluster, steps, knobs, batching=False)
    on, _ = play_rough(cluster, steps, knobs, batching=True)
    assert on == off
    norescore, _ = play_rough(cluster, steps, knobs, batching=True, rescore=False)
    assert norescore == off


def test_a_resume_filters_with_the_returning_pods_own_prefilter() -> None:
    """An existing pod's required anti-affinity keeps Deployment 0 out of zone a (PreFilter
    counts it for d0's labels, not d1's), while d0 prefers zone a: a row of zone a that
    changed while d0 was parked must be re-filtered with d0's PreFilter, not with the
    interrupting run's (the kept CycleState), or it reads as feasible and wins."""
    cluster = [node(f"n{i}", labels={ZONE_KEY: "abc"[i % 3]}) for i in range(150)]
    term = PodAffinityTerm(ZONE_KEY, LabelSelector(match_labels=(("app", "d0"),)))
    guard = Affinity(pod_anti_affinity=PodAffinity(required=(term,)))
    prefer_a = Affinity(node_affinity=NodeAffinity(preferred=(PreferredSchedulingTerm(
        100, NodeSelectorTerm(match_expressions=(
            NodeSelectorRequirement(ZONE_KEY, "In", ("a",)),))),)))
    a = {**deployment(0), "affinity": prefer_a}
    steps = [
        Step("bind", pod("guard", labels={"app": "g"}, affinity=guard, node_name="n3")),
        Step("schedule", ([pod(f"a{j}", **a) for j in range(3)], False)),
        Step("schedule", ([pod(f"b{j}", **deployment(1)) for j in range(3)], False)),
        Step("bind", pod("y", cpu=10, labels={"app": "y"}, node_name="n0")),
        Step("schedule", ([pod(f"a2{j}", **a) for j in range(3)], False)),
    ]
    off, _ = play(cluster, steps, batching=False, rescore=True, config=config(None))
    on, _ = play(cluster, steps, batching=True, rescore=True, config=config(None))
    assert on == off
    assert all(int(name[1:]) % 3 != 0 for uid, name, *_ in off if uid[0] == "a")  # never a
    assert resumed(cluster, steps, None) == 1


def test_parked_caches_are_bounded_in_bytes(monkeypatch: Any) -> None:
    """A big cluster's caches are big: the oldest go once the parked bytes pass the budget,
    and a cache counts its plugins' window-state arrays too."""
    from schedsvc.engine.batching import parked
    from schedsvc.engine.batching.window_cache import WindowCache
    from schedsvc.plugins.pod_topology_spread.window import WindowState

    monkeypatch.setattr(parked, "MAX_PARKED_BYTES", 20_000)

    def cache(sig: bytes, extra: int = 0) -> WindowCache:
        base = WindowCache.pending_for(sig, 0.0)
        c = dataclasses.replace(base, pending=False, position=np.zeros(1000, dtype=np.intp))
        if extra:
            state = WindowState(
                "ns", (), np.zeros(extra, dtype=np.bool_), False, [], [], None  # type: ignore[arg-type]
            )
            c.windowed.append((None, state, 1))  # type: ignore[arg-type]
        return c

    p = parked.ParkedStates()
    p.park(cache(b"a"), set())
    p.park(cache(b"b"), set())
    assert b"a" in p and b"b" in p  # 16,000 bytes
    p.park(cache(b"c"), set())
    assert b"a" not in p and b"b" in p and b"c" in p
    p.park(cache(b"d", extra=12_000), set())  # 20,000 bytes alone: the budget, kept
    assert [s for s in (b"a", b"b", b"c", b"d") if s in p] == [b"d"]
    p.park(cache(b"e", extra=30_000), set())  # over the budget alone: the newest stays
    assert len(p) == 1 and b"e" in p
