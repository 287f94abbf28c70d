"""Sibling runs (engine/batching/siblings.py): in a drain's fork, a Deployment's run may start
from the parked cache of another Deployment whose pods differ only in labels no term selects,
or from a cache built at once. Every placement (node, outcome, score) must be the full
cycle's: the forked runs are compared with the same pods scheduled on the cluster itself with
batching off (and on, which never derives), on sampled zoned clusters, with existing pods
whose terms select some of the Deployments (then those are no siblings: their
InterPodAffinity runs). A fork that is no drain's keeps the plain batch states."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from schedsvc.config import parse_config
from schedsvc.engine.batching import SiblingBatch
from schedsvc.engine.batching.window_cache import WindowCache
from schedsvc.engine.schedule_one import schedule_one
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.engine.simulate.drain import TO_BE_DELETED_TAINT, drain
from schedsvc.engine.simulate.steps import Drain
from schedsvc.model import (
    Affinity,
    LabelSelector,
    Namespace,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodDisruption,
    Taint,
    WeightedPodAffinityTerm,
)
from tests.builders import node, pod

ZONE = "topology.kubernetes.io/zone"


def replica(uid: str, k: int, cpu: int = 100, **kw: Any) -> Pod:
    """Deployment k's replica: siblings of every other Deployment's at the same request."""
    sel = LabelSelector(match_labels=(("app", f"d{k}"),))
    return pod(uid, cpu=cpu, labels={"app": f"d{k}"}, default_selector=sel, **kw)


def _term(k: int) -> PodAffinityTerm:
    return PodAffinityTerm(ZONE, LabelSelector(match_labels=(("app", f"d{k}"),)))


def keeps_away_from(uid: str, k: int, on: str) -> Pod:
    """A bound pod whose required anti-affinity selects Deployment k zone-wide: k's
    InterPodAffinity filters (no Skip), so k has no sibling."""
    aff = Affinity(pod_anti_affinity=PodAffinity(required=(_term(k),)))
    return pod(uid, labels={"app": "other"}, affinity=aff, node_name=on)


def prefers(uid: str, k: int, on: str) -> Pod:
    """A bound pod whose preferred affinity selects Deployment k: k's InterPodAffinity scores
    (no PreScore Skip), so k has no sibling."""
    aff = Affinity(pod_affinity=PodAffinity(preferred=(WeightedPodAffinityTerm(40, _term(k)),)))
    return pod(uid, labels={"app": "other"}, affinity=aff, node_name=on)


def _engine(
    nodes: list[Node], bound: list[Pod], batching: bool, namespaces: tuple[Namespace, ...] = (),
) -> Engine:
    engine = Engine(parse_config({}), seed=5, batching_enabled=batching)
    engine.cluster("x").update(SnapshotUpdate(
        upsert_namespaces=namespaces, upsert_nodes=nodes, upsert_pods=bound,
    ))
    return engine


def in_fork(
    nodes: list[Node], bound: list[Pod], runs: list[list[Pod]],
    namespaces: tuple[Namespace, ...] = (),
) -> tuple[list[Any], tuple[int, int]]:
    """The runs' pods through schedule_one on a fork of the cluster (SiblingBatch states);
    (uid, node, outcome, score) per pod, and the runs (derived from a sibling, started from a
    cache built at once)."""
    engine = _engine(nodes, bound, True, namespaces)
    try:
        with engine.cluster("x").fork() as top:
            f = top.child(siblings=True)  # as a drain forks
            out = []
            for run in runs:
                for p in run:
                    r = schedule_one(f.env, f.cursor, p, False)
                    out.append((r.pod_uid, r.node_name, r.outcome, r.score))
            batches = list(f.batches.values())
            assert all(isinstance(b, SiblingBatch) for b in batches)
            sib = [b for b in batches if isinstance(b, SiblingBatch)]
            return out, (sum(b.derived_runs for b in sib), sum(b.started_runs for b in sib))
    finally:
        engine.close()


def on_cluster(
    nodes: list[Node], bound: list[Pod], runs: list[list[Pod]], batching: bool,
    namespaces: tuple[Namespace, ...] = (),
) -> list[Any]:
    """The same pods scheduled by the cluster itself, run by run."""
    engine = _engine(nodes, bound, batching, namespaces)
    try:
        out = []
        for run in runs:
            placed, _ = engine.cluster("x").schedule(run)
            out.extend((r.pod_uid, r.node_name, r.outcome, r.score) for r in placed)
        return out
    finally:
        engine.close()


def zoned(n: int) -> list[Node]:
    return [node(f"n{i}", cpu=4000, labels={ZONE: "abc"[i % 3]}) for i in range(n)]


def test_only_a_drains_fork_starts_runs_from_siblings() -> None:
    engine = _engine(zoned(3), [], True)
    try:
        with engine.cluster("x").fork() as f:
            plain = list(f.batches.values())
            drained = list(f.child(siblings=True).batches.values())
            other = list(f.child().batches.values())
    finally:
        engine.close()
    assert not any(isinstance(b, SiblingBatch) for b in plain + other)
    assert drained and all(isinstance(b, SiblingBatch) for b in drained)


def test_interleaved_deployments_start_their_runs_from_a_sibling() -> None:
    """Three Deployments in runs of five, twice round, on 150 nodes (sampled): d0 starts with a
    cache built at once, d1 and d2 from d0's (then d1's) parked cache; the second round
    resumes."""
    nodes = zoned(150)
    runs = [[replica(f"p{r}{k}{j}", k) for j in range(5)] for r in range(2) for k in range(3)]
    got, derived = in_fork(nodes, [], runs)
    assert got == on_cluster(nodes, [], runs, False)
    assert got == on_cluster(nodes, [], runs, True)
    assert derived == (2, 1)


def test_a_deployment_an_existing_term_selects_has_no_sibling() -> None:
    """d1 is kept away from by a bound pod's required anti-affinity: its run starts from a
    cache of its own; d2 (the newest parked is d1's, not a sibling) starts from d0's."""
    nodes = zoned(150)
    bound = [keeps_away_from("guard", 1, "n4")]
    runs = [[replica(f"p{k}{j}", k) for j in range(5)] for k in range(3)]
    got, derived = in_fork(nodes, bound, runs)
    assert got == on_cluster(nodes, bound, runs, False)
    assert derived == (1, 2)


def test_a_preferred_term_on_one_deployment_leaves_the_others_siblings() -> None:
    nodes = zoned(150)
    bound = [prefers("fan", 0, "n2")]
    runs = [[replica(f"p{k}{j}", k) for j in range(5)] for k in range(3)]
    got, derived = in_fork(nodes, bound, runs)
    assert got == on_cluster(nodes, bound, runs, False)
    assert derived == (1, 2)  # d2 from d1; d1 not from d0 (d0's InterPodAffinity scores)


def test_a_namespace_selector_parts_one_deployment_from_its_namesake() -> None:
    """A bound pod keeps d1 out of zone b (n1, n4, n7, n10), but only in namespaces labelled
    team=b (web). On 12 nodes (every cycle visits all): d0 in default starts at once; d1 in
    default, which the term does not select, is d0's sibling (derived); d1 in web is
    filtered by InterPodAffinity, so no sibling: it starts at once, and stays out of zone b."""
    nodes = zoned(12)
    term = replace(_term(1), namespace_selector=LabelSelector(match_labels=(("team", "b"),)))
    guard = pod("guard", labels={"app": "other"}, node_name="n4",
                affinity=Affinity(pod_anti_affinity=PodAffinity(required=(term,))))
    spaces = (Namespace("default", {"team": "a"}), Namespace("web", {"team": "b"}))
    runs = [[replica(f"{uid}{j}", k, namespace=ns) for j in range(4)]
            for uid, k, ns in (("a", 0, "default"), ("b", 1, "default"), ("c", 1, "web"))]
    got, counts = in_fork(nodes, [guard], runs, spaces)
    assert got == on_cluster(nodes, [guard], runs, False, spaces)
    assert counts == (1, 2)
    assert not {g[1] for g in got[8:]} & {"n1", "n4", "n7", "n10"}


def test_another_request_is_no_sibling() -> None:
    """NodeResourcesFit's part differs, and it filters: d1 starts a cache of its own."""
    nodes = zoned(150)
    runs = [[replica(f"a{j}", 0) for j in range(4)],
            [replica(f"b{j}", 1, cpu=300) for j in range(4)]]
    got, derived = in_fork(nodes, [], runs)
    assert got == on_cluster(nodes, [], runs, False)
    assert derived == (0, 2)


def test_a_drained_nodes_deployments_start_from_each_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """n0 holds 3 Deployments x 4 replicas, interleaved: the drain moves d0's in a run from a
    cache built at once, d1's and d2's each from the one before (2 derived), and every pod
    lands where the twin's real calls put it (ghost tainted, pods removed, Schedule in the
    drain order, batching off)."""
    derived: list[bytes] = []
    plain = SiblingBatch._derive

    def counted(self: SiblingBatch, *a: Any) -> WindowCache | None:
        out = plain(self, *a)
        if out is not None:
            derived.append(out.signature)
        return out

    monkeypatch.setattr(SiblingBatch, "_derive", counted)
    nodes = zoned(120)
    rs = PodDisruption(controller_kind="ReplicaSet")
    on_n0 = [replica(f"q{j}", j % 3, node_name="n0", disruption=rs) for j in range(12)]
    engine = _engine(nodes, on_n0, True)
    try:
        with engine.cluster("x").fork() as f:
            v = drain(f, Drain(("n0",)), lambda: True).nodes[0]
    finally:
        engine.close()
    order = [p for k in range(3) for p in on_n0 if p.labels["app"] == f"d{k}"]
    ghost = replace(nodes[0], taints=(Taint(TO_BE_DELETED_TAINT, "1", "NoSchedule"),))
    twin = _engine(nodes, on_n0, False)
    try:
        c = twin.cluster("x")
        c.update(SnapshotUpdate(upsert_nodes=[ghost], remove_pods=[p.uid for p in on_n0]))
        real, _ = c.schedule([replace(p, node_name="") for p in order])
    finally:
        twin.close()
    assert v.drainable
    assert [(m.pod_uid, m.node_name) for m in v.moved] == [(p.pod_uid, p.node_name) for p in real]
    assert len(derived) == 2


def test_after_a_pod_that_fit_nowhere_runs_start_with_a_full_cycle() -> None:
    """Three replicas too big for any node, then a run that fits: only the first big one
    starts a cache at once (its hint finds no node, then the full cycle gives kube's
    reasons); after a failure every start is a full cycle, as pods that keep failing would
    otherwise evaluate every node for nothing each."""
    nodes = zoned(120)
    runs = [[replica(f"big{j}", 0, cpu=8000) for j in range(3)],
            [replica(f"p{j}", 1) for j in range(4)]]
    got, counts = in_fork(nodes, [], runs)
    assert got == on_cluster(nodes, [], runs, False)
    assert [g[2].name for g in got] == ["UNSCHEDULABLE"] * 3 + ["SCHEDULED"] * 4
    assert counts == (0, 1)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[Node], list[Pod], list[list[Pod]]]:
    n = draw(st.integers(101, 200))
    block = draw(st.sampled_from([1, 9, 40]))
    nodes = [
        node(f"n{i}", cpu=draw(st.sampled_from([1000, 4000])),
             labels={ZONE: "abc"[(i // block) % 3]})
        for i in range(n)
    ]
    bound: list[Pod] = []
    for i in range(draw(st.integers(0, 6))):
        k, on = draw(st.integers(0, 3)), f"n{draw(st.integers(0, n - 1))}"
        kind = draw(st.sampled_from(["replica", "replica", "away", "prefers"]))
        if kind == "replica":
            bound.append(replica(f"b{i}", k, node_name=on))
        else:
            bound.append((keeps_away_from if kind == "away" else prefers)(f"g{i}", k, on))
    runs: list[list[Pod]] = []
    uid = 0
    for _ in range(draw(st.integers(2, 7))):
        k = draw(st.integers(0, 3))
        cpu = draw(st.sampled_from([100, 100, 100, 900]))
        size = draw(st.integers(1, 8))
        runs.append([replica(f"p{uid + j}", k, cpu=cpu) for j in range(size)])
        uid += size
    return nodes, bound, runs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_forked_runs_place_as_full_cycles(
    scenario: tuple[list[Node], list[Pod], list[list[Pod]]],
) -> None:
    nodes, bound, runs = scenario
    got, derived = in_fork(nodes, bound, runs)
    event(f"runs derived from a sibling: {min(derived[0], 2)}{'+' if derived[0] >= 2 else ''}")
    assert got == on_cluster(nodes, bound, runs, False)
