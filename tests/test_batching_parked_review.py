"""Parked batch states, what review found (issue 16), each test failing before its fix: a return
when every parked slot is taken, resumed runs through preemption, namespaces, hard spreading
and small bounds, a resume filtering with the returning pods' own PreFilter, and parked caches
bounded in bytes.
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
)
from tests.batching_play import ZONE_KEY, Step, config, deployment, play, resumed
from tests.builders import node, pod

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
