"""Batching on vs off over rich clusters and steps (a hostile review of issue 16): every
Placement field and the start index after each pod, at 95-320 nodes under sampling and at
100 %. The suite runs a tenth of the review's budget (about 15 s);
SCHEDSVC_FUZZ_SCALE=10 runs the review's whole budget (about 2.5 minutes)."""
from __future__ import annotations

import dataclasses
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.model import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from tests.builders import make_pod, node
from tests.on_off_harness import both

SCALE = float(os.environ.get("SCHEDSVC_FUZZ_SCALE", "1"))


def _examples(review_budget: int) -> int:
    return max(5, int(review_budget * SCALE / 10))


Z = "topology.kubernetes.io/zone"
H = "kubernetes.io/hostname"
IMGS = ("img/web:1", "img/db:2")
SEL = [LabelSelector(match_labels=(("app", "web"),)),
       LabelSelector(match_labels=(("tier", "fe"),))]


@st.composite
def cluster(draw: st.DrawFn, modes: tuple[str, ...] = ("blocks", "mod", "none", "some"),
            lo: int = 95, hi: int = 320) -> list[Any]:
    n = draw(st.integers(lo, hi))
    zone_mode = draw(st.sampled_from(modes))
    block = draw(st.sampled_from([1, 7, 50]))
    out = []
    for i in range(n):
        labels: dict[str, str] = {}
        if zone_mode == "blocks":
            labels[Z] = "abcd"[(i // block) % 4]
        elif zone_mode == "mod":
            labels[Z] = "abc"[i % 3]
        elif zone_mode == "some" and i % 5:
            labels[Z] = "ab"[i % 2] if i % 11 else ""
        if i % 4 == 0:
            labels["rack"] = f"r{i % 3}"
        if i % 9 == 0:
            labels["disk"] = "ssd"
        taints: tuple[Taint, ...] = ()
        t = draw(st.integers(0, 12))
        if t == 0:
            taints = (Taint("dedicated", "gpu", "NoSchedule"),)
        elif t == 1:
            taints = (Taint("dedicated", "gpu", "PreferNoSchedule"),)
        imgs = tuple(ContainerImage((im,), 300 * 2**20) for j, im in enumerate(IMGS)
                     if (i + j) % draw(st.sampled_from([2, 3, 50])) == 0)
        nd = node(f"n{i}", cpu=draw(st.sampled_from([300, 1000, 4000])),
                  pods=draw(st.sampled_from([2, 110])), labels=labels, taints=taints,
                  images=imgs, unschedulable=draw(st.integers(0, 30)) == 0)
        if draw(st.integers(0, 20)) == 0:  # no hostname label
            nd = dataclasses.replace(nd, labels={k: v for k, v in nd.labels.items() if k != H})
        out.append(nd)
    return out


@st.composite
def shape(draw: st.DrawFn) -> dict[str, Any]:
    s: dict[str, Any] = {"cpu": draw(st.sampled_from([None, 50, 100, 250])), "memory": None,
                         "image": draw(st.sampled_from(IMGS))}
    labels = {"app": "web"} if draw(st.booleans()) else {"app": "web", "tier": "fe"}
    if draw(st.booleans()):
        labels["hash"] = draw(st.sampled_from(["h1", "h2"]))
    s["labels"] = labels
    kind = draw(st.sampled_from(["plain", "dep", "dep", "soft", "soft"]))
    if kind == "dep":
        s["default_selector"] = draw(st.sampled_from(SEL))
    elif kind == "soft":
        cons = []
        for _ in range(draw(st.integers(1, 2))):
            cons.append(TopologySpreadConstraint(
                max_skew=draw(st.integers(1, 3)),
                topology_key=draw(st.sampled_from([Z, H, "rack"])),
                when_unsatisfiable="ScheduleAnyway",
                label_selector=draw(st.sampled_from(SEL + [None, LabelSelector()])),
                node_affinity_policy=draw(st.sampled_from(["Honor", "Ignore"])),
                node_taints_policy=draw(st.sampled_from(["Honor", "Ignore"])),
                match_label_keys=draw(st.sampled_from([(), ("hash",)])),
            ))
        s["topology_spread_constraints"] = tuple(cons)
    if draw(st.integers(0, 3)) == 0:
        s["tolerations"] = (Toleration(key="dedicated", operator="Exists"),)
    if draw(st.integers(0, 3)) == 0:
        term = NodeSelectorTerm(match_expressions=(NodeSelectorRequirement(Z, "In", ("a",)),))
        s["affinity"] = Affinity(node_affinity=NodeAffinity(
            preferred=(PreferredSchedulingTerm(draw(st.integers(1, 100)), term),)))
    if draw(st.integers(0, 4)) == 0:
        s["node_selector"] = {"disk": "ssd"}
    if draw(st.integers(0, 5)) == 0:
        s["ports"] = (ContainerPort(container_port=80, host_port=8080),)
    if draw(st.integers(0, 5)) == 0:
        s["requests"] = {"cpu": 200}
    if draw(st.integers(0, 5)) == 0:
        s["init_containers"] = (Container("side", image="img/side:1", requests={"cpu": 100},
                                          restart_policy="Always"),)
    return s


@st.composite
def scenario(draw: st.DrawFn) -> tuple[list[Any], list[tuple[str, Any]], dict[str, Any], int]:
    cl = draw(cluster())
    shapes = draw(st.lists(shape(), min_size=1, max_size=3))
    tokens: dict[tuple[int, str], object] = {}
    steps: list[tuple[str, Any]] = []
    uid = 0
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.integers(0, 2)) == 0:
            kind = draw(st.sampled_from(["add", "remove", "zone", "taint", "bind", "unbind",
                                         "cordon", "fill"]))
            v = cl[draw(st.integers(0, len(cl) - 1))]
            if kind == "add":
                steps.append(("update", SnapshotUpdate(upsert_nodes=[node(
                    f"x{uid}", labels={Z: draw(st.sampled_from(["a", "e"]))})])))
            elif kind == "remove":
                steps.append(("update", SnapshotUpdate(remove_nodes=[v.name])))
            elif kind == "zone":
                steps.append(("update", SnapshotUpdate(upsert_nodes=[dataclasses.replace(
                    v, labels={**v.labels, Z: "c"})])))
            elif kind == "taint":
                steps.append(("update", SnapshotUpdate(upsert_nodes=[dataclasses.replace(
                    v, taints=(Taint("k", "v", "PreferNoSchedule"),))])))
            elif kind == "cordon":
                steps.append(("update", SnapshotUpdate(upsert_nodes=[dataclasses.replace(
                    v, unschedulable=not v.unschedulable)])))
            elif kind in ("bind", "fill"):
                sh = shapes[draw(st.integers(0, len(shapes) - 1))]
                b = make_pod(f"b{uid}", {**sh, "cpu": 5000 if kind == "fill" else 10,
                                         "ports": (), "node_name": v.name})
                steps.append(("update", SnapshotUpdate(upsert_pods=[b])))
            elif kind == "unbind":
                steps.append(("update", SnapshotUpdate(
                    remove_pods=[f"p{draw(st.integers(0, max(uid - 1, 0)))}"])))
            uid += 1
        run = []
        for _ in range(draw(st.integers(1, 40))):
            k = draw(st.integers(0, len(shapes) - 1))
            prof = "packer" if draw(st.integers(0, 9)) == 0 else "default-scheduler"
            tok = tokens.setdefault((k, prof), object())
            run.append(dataclasses.replace(make_pod(f"p{uid}", shapes[k], prof), shape=tok))
            uid += 1
        steps.append(("dry" if draw(st.integers(0, 8)) == 0 else "pods", run))
    pct = draw(st.sampled_from([None, None, 1, 5, 10, 50, 99, 100]))
    cfg: dict[str, Any] = {"profiles": [
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "packer", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
            "scoringStrategy": {"type": "MostAllocated"}}}]},
    ]}
    if pct is not None:
        cfg["percentageOfNodesToScore"] = pct
    return cl, steps, cfg, draw(st.integers(0, 3))


@settings(max_examples=_examples(300), deadline=None, suppress_health_check=list(HealthCheck))
@given(scenario())
def test_fuzz(sc: Any) -> None:
    cl, steps, cfg, seed = sc
    d, _ = both(cl, steps, cfg, seed)
    assert not d, d[:5]


@st.composite
def scenario2(draw: st.DrawFn, modes: tuple[str, ...] = ("blocks", "mod", "none", "some"),
              lo: int = 95, hi: int = 320,
              pcts: tuple[Any, ...] = (None, None, 1, 5, 10, 50, 99, 100),
              ) -> tuple[list[Any], list[tuple[str, Any]], dict[str, Any], int]:
    """Updates, dry runs, explains, preemptors and unsignable pods interleaved pod by pod."""
    cl = draw(cluster(modes, lo, hi))
    shapes = draw(st.lists(shape(), min_size=1, max_size=2))
    tokens: dict[tuple[int, str, bool], object] = {}
    steps: list[tuple[str, Any]] = []
    uid = 0
    for _ in range(draw(st.integers(20, 90))):
        r = draw(st.integers(0, 40))
        v = cl[draw(st.integers(0, len(cl) - 1))]
        if r == 0:
            steps.append(("update", SnapshotUpdate(upsert_nodes=[node(
                f"x{uid}", labels={Z: draw(st.sampled_from(["a", "e"]))})])))
        elif r == 1:
            steps.append(("update", SnapshotUpdate(remove_nodes=[v.name])))
        elif r == 2:
            steps.append(("update", SnapshotUpdate(upsert_nodes=[dataclasses.replace(
                v, labels={**v.labels, Z: "c"})])))
        elif r in (3, 4):
            sh = shapes[draw(st.integers(0, len(shapes) - 1))]
            b = make_pod(f"b{uid}", {**sh, "cpu": draw(st.sampled_from([10, 5000])),
                                     "ports": (), "node_name": v.name})
            steps.append(("update", SnapshotUpdate(upsert_pods=[b])))
        elif r in (5, 6):
            steps.append(("update", SnapshotUpdate(
                remove_pods=[f"p{draw(st.integers(0, max(uid - 1, 0)))}"])))
        elif r == 7:
            big = make_pod(f"hi{uid}", {"cpu": 3900, "memory": None, "priority": 100})
            steps.append(("pods", [big]))
        elif r == 8:
            explained = make_pod(f"e{uid}", shapes[0])
            steps.append(("call", lambda c, p=explained: c.explain(p)))
        elif r == 9:
            from schedsvc.model import Affinity, PodAffinity, PodAffinityTerm
            aff = Affinity(pod_anti_affinity=PodAffinity(required=(PodAffinityTerm(
                H, LabelSelector(match_labels=(("app", "web"),))),)))
            steps.append(("pods", [make_pod(f"u{uid}", {"cpu": 10, "affinity": aff})]))
        else:
            k = draw(st.integers(0, len(shapes) - 1))
            prof = "packer" if draw(st.integers(0, 12)) == 0 else "default-scheduler"
            dry = draw(st.integers(0, 8)) == 0
            tok = tokens.setdefault((k, prof, False), object())
            p = dataclasses.replace(make_pod(f"p{uid}", shapes[k], prof), shape=tok)
            steps.append(("dry" if dry else "pods", [p]))
        uid += 1
    pct = draw(st.sampled_from(pcts))
    cfg: dict[str, Any] = {"profiles": [
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "packer", "percentageOfNodesToScore": draw(st.sampled_from([5, 30, 100])),
         "pluginConfig": [{"name": "NodeResourcesFit", "args": {
            "scoringStrategy": {"type": "MostAllocated"}}}]},
    ]}
    if pct is not None:
        cfg["percentageOfNodesToScore"] = pct
    return cl, steps, cfg, draw(st.integers(0, 3))


@settings(max_examples=_examples(300), deadline=None, suppress_health_check=list(HealthCheck))
@given(scenario2())
def test_fuzz2(sc: Any) -> None:
    cl, steps, cfg, seed = sc
    d, _ = both(cl, steps, cfg, seed)
    assert not d, d[:5]


@settings(max_examples=_examples(300), deadline=None, suppress_health_check=list(HealthCheck))
@given(scenario2(("none", "mod"), 3, 40, (100,)))
def test_fuzz_small_full(sc: Any) -> None:
    cl, steps, cfg, seed = sc
    d, _ = both(cl, steps, cfg, seed)
    assert not d, d[:5]


def _confirm(c: Any, uid: str, mode: int) -> None:
    rec = c.snapshot.pods.get(uid)
    if rec is None or not rec.node_name:
        return
    if mode == 0:  # the client binds it where we put it (an assumed record keeps the pod
        # as sent: the node is the record's)
        c.update(SnapshotUpdate(upsert_pods=[dataclasses.replace(
            rec.pod, node_name=rec.node_name, shape=None)]))
    elif mode == 1:  # binding failed: forget it
        c.update(SnapshotUpdate(remove_pods=[uid]))
    else:  # bound elsewhere (another scheduler raced)
        names = sorted(c.snapshot.index)
        c.update(SnapshotUpdate(upsert_pods=[dataclasses.replace(
            rec.pod, node_name=names[len(uid) % len(names)], shape=None)]))


@st.composite
def scenario3(draw: st.DrawFn) -> tuple[list[Any], list[tuple[str, Any]], dict[str, Any], int]:
    cl = draw(cluster())
    shapes = draw(st.lists(shape(), min_size=1, max_size=2))
    tokens: dict[int, object] = {}
    steps: list[tuple[str, Any]] = []
    for uid in range(draw(st.integers(10, 80))):
        k = draw(st.integers(0, len(shapes) - 1))
        tok = tokens.setdefault(k, object())
        steps.append(("pods", [dataclasses.replace(make_pod(f"p{uid}", shapes[k]), shape=tok)]))
        if draw(st.integers(0, 2)) == 0:
            back = draw(st.integers(0, uid))
            mode = draw(st.sampled_from([0, 0, 0, 1, 2]))
            steps.append(("call", lambda c, u=f"p{back}", m=mode: _confirm(c, u, m)))
    pct = draw(st.sampled_from([None, None, 1, 5, 10, 50, 99, 100]))
    cfg: dict[str, Any] = {"profiles": [{"schedulerName": "default-scheduler"}]}
    if pct is not None:
        cfg["percentageOfNodesToScore"] = pct
    return cl, steps, cfg, draw(st.integers(0, 3))


@settings(max_examples=_examples(300), deadline=None, suppress_health_check=list(HealthCheck))
@given(scenario3())
def test_fuzz3(sc: Any) -> None:
    cl, steps, cfg, seed = sc
    d, _ = both(cl, steps, cfg, seed)
    assert not d, d[:5]


@settings(max_examples=_examples(200), deadline=None, suppress_health_check=list(HealthCheck))
@given(scenario2(), st.booleans(), st.sampled_from(["1us", "1ms", "500ms"]))
def test_fuzz2_norescore(sc: Any, soft: bool, age: str) -> None:
    cl, steps, cfg, seed = sc
    cfg = {**cfg, "profiles": [{**p, "batching": {"rescore": False, "softSpread": soft,
                                                  "maxBatchAge": age}}
                               for p in cfg["profiles"]]}
    d, _ = both(cl, steps, cfg, seed)
    assert not d, d[:5]
