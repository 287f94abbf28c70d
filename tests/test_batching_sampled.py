"""Batching on ≡ off where users are: percentageOfNodesToScore adaptive (kube's default) and a
fixed 10 %, on clusters big enough that a cycle scores only a window of the nodes, with
Deployment pods (system default spreading through default_selector), soft spreading of the
pods' own, churn between batches, node changes, mixed signatures and two profiles.

A hint must stand for the sampled cycle it replaces: the same window (the first N feasible
nodes in visiting order from the start index), the same normalization over it, the same seeded
pick, and the start index moved as that cycle moves it. Placements and scores are compared.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.config import parse_config
from schedsvc.engine.schedule_pod import num_feasible_nodes_to_find
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.model import LabelSelector, Node, Taint, TopologySpreadConstraint
from tests.batching_play import ZONE_KEY, Step, config, play
from tests.builders import make_pod, node
from tests.strategies import nodes, pod_shapes

WEB = LabelSelector(match_labels=(("app", "web"),))
SOFT_ZONE = TopologySpreadConstraint(
    max_skew=1, topology_key="topology.kubernetes.io/zone", when_unsatisfiable="ScheduleAnyway",
    label_selector=WEB,
)
SOFT_HOST = TopologySpreadConstraint(
    max_skew=2, topology_key="kubernetes.io/hostname", when_unsatisfiable="ScheduleAnyway",
    label_selector=WEB,
)


def zoned(kinds: list[Node], n: int, block: int, unzoned: int) -> list[Node]:
    """`n` nodes cycling through the drawn kinds, zones in blocks of `block` nodes (so a
    window covers some zones only), every `unzoned`-th node without a zone label."""
    out = []
    for i in range(n):
        k = kinds[i % len(kinds)]
        labels = {key: v for key, v in k.labels.items() if key != "kubernetes.io/hostname"}
        if unzoned and i % unzoned == 0:
            labels.pop("zone", None)
        else:
            labels[ZONE_KEY] = "abc"[(i // block) % 3]
        out.append(dataclasses.replace(
            node(f"n{i}", labels=labels), taints=k.taints, allocatable=k.allocatable,
            images=k.images, unschedulable=k.unschedulable,
        ))
    return out


@st.composite
def workload_shape(draw: st.DrawFn) -> dict[str, object]:
    """A pod shape: plain, a Deployment's (owned: system default spreading), or with soft
    constraints of its own."""
    shape = draw(pod_shapes())
    kind = draw(st.sampled_from(["plain", "deployment", "deployment", "soft"]))
    if kind == "deployment":
        shape = {**shape, "labels": {"app": "web"}, "default_selector": WEB}
    elif kind == "soft":
        own = draw(st.sampled_from([(SOFT_ZONE,), (SOFT_HOST,), (SOFT_ZONE, SOFT_HOST)]))
        shape = {**shape, "labels": {"app": "web"}, "topology_spread_constraints": own}
    return shape


@st.composite
def sampled_scenarios(draw: st.DrawFn) -> tuple[list[Node], list[Step]]:
    kinds = draw(nodes(min_size=2, max_size=6))
    # one kind takes any pod of the leading run
    kinds[0] = dataclasses.replace(kinds[0], unschedulable=False, taints=())
    cluster = zoned(
        kinds, draw(st.integers(101, 260)), draw(st.sampled_from([1, 5, 40])),
        draw(st.sampled_from([0, 0, 17])),
    )
    shapes = draw(st.lists(workload_shape(), min_size=1, max_size=3))
    tokens: dict[tuple[int, str], object] = {}

    def equal_pod(uid: str, k: int, profile: str) -> Any:
        token = tokens.setdefault((k, profile), object())
        return dataclasses.replace(make_pod(uid, shapes[k], profile), shape=token)

    # a run every cluster takes: the property is not vacuous (see the assertion)
    lead = {"cpu": 10, "memory": None, "labels": {"app": "web"}, "default_selector": WEB}
    steps = [Step("schedule", ([make_pod(f"lead{i}", lead) for i in range(6)], False))]
    uid = 0
    bound: list[Any] = []
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.integers(0, 2)) == 0:
            kind = draw(st.sampled_from(
                ["add_node", "remove_pod", "remove_node", "relabel", "bind", "move", "fill"]
            ))
            victim = cluster[draw(st.integers(0, len(cluster) - 1))]
            shape = shapes[draw(st.integers(0, len(shapes) - 1))]
            if kind == "add_node":
                steps.append(Step("upsert_node", node(f"extra{uid}", cpu=2000,
                                                      labels={ZONE_KEY: "b"})))
            elif kind == "remove_pod":
                steps.append(Step("remove_pod", f"p{draw(st.integers(0, max(uid - 1, 0)))}"))
            elif kind == "remove_node":
                steps.append(Step("remove_node", victim.name))
            elif kind == "relabel":
                steps.append(Step("upsert_node", dataclasses.replace(
                    victim, labels={**victim.labels, ZONE_KEY: "c", "disk": "ssd"})))
            elif kind in ("bind", "fill"):
                # a bound pod of a Deployment moves its domains' counts; "fill" takes the node
                cpu = 4000 if kind == "fill" else 100
                b = make_pod(f"b{uid}", {**shape, "cpu": cpu, "node_name": victim.name})
                uid += 1
                bound.append(b)
                steps.append(Step("bind", b))
            elif kind == "move" and bound:
                b = bound[draw(st.integers(0, len(bound) - 1))]
                steps.append(Step("bind", dataclasses.replace(b, node_name=victim.name)))
        run = []
        for _ in range(draw(st.integers(1, 30))):
            k = draw(st.integers(0, len(shapes) - 1))
            profile = "packer" if draw(st.integers(0, 7)) == 0 else "default-scheduler"
            run.append(equal_pod(f"p{uid}", k, profile))
            uid += 1
        steps.append(Step("schedule", (run, draw(st.integers(0, 8)) == 0)))
    return cluster, steps


def check(pct: int | None, scenario: tuple[list[Node], list[Step]]) -> None:
    cluster, steps = scenario
    # sampling cuts: the window is smaller than the cluster
    assert num_feasible_nodes_to_find(len(cluster), pct or 0) < len(cluster)
    off, batched_off = play(cluster, steps, batching=False, rescore=True, config=config(pct))
    assert batched_off == 0
    on, batched = play(cluster, steps, batching=True, rescore=True, config=config(pct))
    assert on == off
    assert batched >= 5  # at least the leading run of Deployment pods was hinted
    norescore, _ = play(cluster, steps, batching=True, rescore=False, config=config(pct))
    assert norescore == off


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sampled_scenarios())
def test_batching_on_and_off_agree_at_the_adaptive_default(
    scenario: tuple[list[Node], list[Step]],
) -> None:
    check(None, scenario)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sampled_scenarios())
def test_batching_on_and_off_agree_at_ten_percent(
    scenario: tuple[list[Node], list[Step]],
) -> None:
    check(10, scenario)


# ---- the window against the filter stage it stands for ----------------------------------------

@settings(max_examples=150, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=300), st.data())
def test_the_window_is_the_filter_stages_feasible_nodes_and_processed_count(
    feasible: list[bool], data: st.DataObject,
) -> None:
    """For any feasible pattern, start index and number to find (N equal to the feasible count
    included), the window and its `processed` are what find_nodes_that_pass_filters returns: the
    first window evaluated alone (pieces of 2N from the start), the rest at the next."""
    from schedsvc.engine.batching.window_cache import WindowCache
    from schedsvc.engine.filtering import find_nodes_that_pass_filters
    from schedsvc.framework.podinfo import pod_info

    n = len(feasible)
    cluster = [node(f"n{i}", labels={"disk": "ssd" if ok else "hdd"})
               for i, ok in enumerate(feasible)]
    engine = Engine(parse_config({}), seed=1)
    c = engine.cluster("w")
    c.update(SnapshotUpdate(upsert_nodes=cluster))
    fw = engine.frameworks["default-scheduler"]
    info = pod_info(make_pod("p", {"cpu": 100, "node_selector": {"disk": "ssd"}}))
    snap = c.snapshot
    cs = fw.run_pre_filter(info, snap)
    # the first window is evaluated alone, the rest of the nodes at the second
    cache = WindowCache.new(fw, info, snap, b"", 0.0)
    m = sum(feasible)
    for _ in range(5):
        start = data.draw(st.integers(0, n - 1))
        to_find = data.draw(st.sampled_from(sorted({1, max(m - 1, 1), max(m, 1), m + 1, n})))
        fo = find_nodes_that_pass_filters(fw, cs, info, snap, start, to_find, None, 1)
        win = cache.window(fw, info, snap, cs, start, to_find)
        assert win.rows.tolist() == fo.feasible.tolist()
        assert win.processed == fo.processed
    engine.close()


def test_a_node_revived_by_churn_brings_its_taint_penalty_into_the_window_scores() -> None:
    """TaintToleration's raw score is one value on every feasible node when the run starts, so
    the cache adds one constant; a tainted node freed later joins with another value, and
    from then on the plugin must be normalized per window."""
    prefer = (Taint("dedicated", "gpu", "PreferNoSchedule"),)
    cluster = [node(f"n{i}", cpu=1000, taints=prefer if i % 10 == 7 else ())
               for i in range(150)]
    fill = [make_pod(f"b{i}", {"cpu": 1000, "node_name": f"n{i}"})
            for i in range(150) if i % 10 == 7]
    small = {"cpu": 100, "memory": None}
    steps = [
        Step("bind", fill[0]), Step("bind", fill[1]), Step("bind", fill[2]),
        *(Step("bind", b) for b in fill[3:]),
        Step("schedule", ([make_pod(f"p{i}", small) for i in range(3)], False)),
        *(Step("remove_pod", b.uid) for b in fill),
        Step("schedule", ([make_pod(f"q{i}", small) for i in range(60)], False)),
    ]
    off, _ = play(cluster, steps, batching=False, rescore=True, config=config(None))
    on, batched = play(cluster, steps, batching=True, rescore=True, config=config(None))
    assert on == off
    assert batched >= 60
    # the freed tainted nodes are the emptiest, yet their penalty keeps every pod off them
    assert not any(int(name[1:]) % 10 == 7 for _, name, *_ in on)


def test_pods_bound_where_the_run_may_not_go_do_not_count_in_its_domains() -> None:
    """nodeAffinityPolicy Honor: a domain's total counts only nodes matching the pod's node
    selector. Pods of the Deployment bound by an UpdateSnapshot onto other nodes of a zone
    change their rows' counts, and the kept totals must leave them out, as PreScore does,
    while those bound where the run may go move their zone's total."""
    cluster = [node(f"n{i}", labels={"disk": "ssd" if i % 2 else "hdd",
                                     ZONE_KEY: "abc"[(i // 10) % 3]}) for i in range(150)]
    web = {"cpu": 100, "memory": None, "labels": {"app": "web"}, "default_selector": WEB,
           "node_selector": {"disk": "ssd"}}
    steps = [
        Step("schedule", ([make_pod(f"p{i}", web) for i in range(10)], False)),
        *(Step("bind", make_pod(f"b{i}", {**web, "node_selector": {},
                                          "node_name": f"n{2 * i}"})) for i in range(5)),
        *(Step("bind", make_pod(f"c{i}", {**web, "node_selector": {},
                                          "node_name": f"n{30 + 2 * i}"})) for i in range(5)),
        # and some where it may: their zone's total moves by them
        *(Step("bind", make_pod(f"d{i}", {**web, "node_name": f"n{2 * i + 1}"}))
          for i in range(5)),
        Step("schedule", ([make_pod(f"q{i}", web) for i in range(40)], False)),
    ]
    off, _ = play(cluster, steps, batching=False, rescore=True, config=config(None))
    on, batched = play(cluster, steps, batching=True, rescore=True, config=config(None))
    assert on == off
    assert batched >= 48


def test_churn_on_nodes_no_hint_has_evaluated_yet_is_seen_when_they_are() -> None:
    """The first hint of a run evaluates only what its window needs; an UpdateSnapshot then
    fills nodes outside it. Those rows are not re-checked (nothing was kept for them) but
    evaluated afresh by the next hint, which evaluates every node not known yet."""
    cluster = [node(f"n{i}", cpu=1000, labels={ZONE_KEY: "abc"[i % 3]}) for i in range(300)]
    web = {"cpu": 300, "memory": None, "labels": {"app": "web"}, "default_selector": WEB}
    steps = [
        Step("schedule", ([make_pod(f"p{i}", web) for i in range(2)], False)),
        *(Step("bind", make_pod(f"b{i}", {"cpu": 1000, "node_name": f"n{i}"}))
          for i in range(0, 100, 3)),
        # pods that leave their nodes feasible: their rows are dirty, not yet evaluated
        *(Step("bind", make_pod(f"s{i}", {"cpu": 100, "node_name": f"n{i}"}))
          for i in range(1, 100, 3)),
        Step("schedule", ([make_pod(f"q{i}", web) for i in range(120)], False)),
    ]
    off, _ = play(cluster, steps, batching=False, rescore=True, config=config(10))
    on, batched = play(cluster, steps, batching=True, rescore=True, config=config(10))
    assert on == off
    assert batched >= 120
    filled = {f"n{i}" for i in range(0, 100, 3)}
    assert not any(name in filled for _, name, *_ in on)


def test_soft_spread_false_turns_deployment_batching_off_and_leaves_plain_pods_hinted() -> None:
    cluster = [node(f"n{i}", labels={ZONE_KEY: "abc"[i % 3]}) for i in range(150)]
    web = {"cpu": 100, "memory": None, "labels": {"app": "web"}, "default_selector": WEB}
    cfg = {"profiles": [{"schedulerName": "default-scheduler",
                         "batching": {"softSpread": False}}]}
    deployment = [Step("schedule", ([make_pod(f"p{i}", web) for i in range(10)], False))]
    plain = [Step("schedule", ([make_pod(f"p{i}", {"cpu": 100}) for i in range(10)], False))]
    assert play(cluster, deployment, batching=True, rescore=True, config=cfg)[1] == 0
    assert play(cluster, deployment, batching=True, rescore=True, config=config(None))[1] == 9
    assert play(cluster, plain, batching=True, rescore=True, config=cfg)[1] == 9


def test_a_tie_kept_through_several_placements_breaks_when_one_node_scores_lower() -> None:
    """Big nodes: a 100m pod moves no score of its node until several share it, so a run
    starts with every window one tie and keeps it for a while (the cache then draws without
    building totals); the first node that scores lower must leave the tie, as in the cycle."""
    cluster = [node(f"n{i}", cpu=32000, memory=256 * 2**30, labels={ZONE_KEY: "abc"[i % 3]})
               for i in range(150)]
    small = {"cpu": 100, "memory": 100 * 2**20}
    steps = [Step("schedule", ([make_pod(f"p{i}", small) for i in range(700)], False))]
    off, _ = play(cluster, steps, batching=False, rescore=True, config=config(None))
    on, batched = play(cluster, steps, batching=True, rescore=True, config=config(None))
    assert on == off
    assert batched >= 690
    # the scores moved during the run: the tie did break
    assert len({score for _, _, _, score, _ in off}) > 1


def test_a_tie_of_the_summed_scores_is_no_tie_while_a_normalized_plugin_differs() -> None:
    """The summed raw scores are one value on every node, TaintToleration's are not (it is
    normalized per window): the draw is among the untainted nodes only."""
    prefer = (Taint("dedicated", "gpu", "PreferNoSchedule"),)
    cluster = [node(f"n{i}", cpu=32000, memory=256 * 2**30, taints=prefer if i % 10 == 7 else ())
               for i in range(150)]
    small = {"cpu": 100, "memory": 100 * 2**20}
    steps = [Step("schedule", ([make_pod(f"p{i}", small) for i in range(100)], False))]
    off, _ = play(cluster, steps, batching=False, rescore=True, config=config(None))
    on, batched = play(cluster, steps, batching=True, rescore=True, config=config(None))
    assert on == off
    assert batched >= 99
    assert not any(int(name[1:]) % 10 == 7 for _, name, *_ in on)
