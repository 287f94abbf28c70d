"""Parked batch states (engine/batching/parked): runs of a few Deployments interleaved, each resumed
from the cache its interrupted run left, must place and score every pod as the full cycles
of batching off do, whatever happens between the runs: pods of other signatures assumed on
the cache's nodes, churn, a pod with pod anti-affinity, another profile's pods, dry runs,
pods that fit nowhere, node changes. Sampled (adaptive and 10 %) clusters, zoned. What review
found (issue 16) is in test_batching_parked_review.py.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.model import (
    Affinity,
    LabelSelector,
    PodAffinity,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)
from tests.batching_play import ZONE_KEY, Step, config, deployment, play, resumed
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
