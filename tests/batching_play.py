"""Batching scenarios played on fresh engines, shared by the batching test modules: steps
(`Step`) played with batching on and off (`play`, `both`), the runs resumed from a parked cache
counted (`resumed`), the profiles and pod shapes they use, and a metered cluster whose batch
clock the test moves (`setup`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Cluster, Engine, SnapshotUpdate
from schedsvc.errors import InvalidArgument
from schedsvc.model import (
    Affinity,
    LabelSelector,
    PodAffinity,
    PodAffinityTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from schedsvc.observability.metrics import PrometheusObserver
from tests.builders import node

ZONE_KEY = "topology.kubernetes.io/zone"


PROFILES = {
    "percentageOfNodesToScore": 100,
    "profiles": [
        {"schedulerName": "default-scheduler"},
        {
            "schedulerName": "packer",
            "pluginConfig": [
                {"name": "NodeResourcesFit",
                 "args": {"scoringStrategy": {"type": "MostAllocated"}}}
            ],
        },
    ],
}


WEB = {"cpu": 100, "memory": None, "labels": {"app": "web"}}


# an existing pod whose required anti-affinity selects the pods labelled app=web, zone-wide
ANTI_WEB = Affinity(pod_anti_affinity=PodAffinity(required=(PodAffinityTerm(
    "zone", LabelSelector(match_labels=(("app", "web"),))),)))


PREFER_AWAY = Affinity(pod_anti_affinity=PodAffinity(preferred=(WeightedPodAffinityTerm(
    100, PodAffinityTerm("zone", LabelSelector(match_labels=(("app", "web"),)))),)))


SOFT = TopologySpreadConstraint(
    max_skew=1, topology_key="zone", when_unsatisfiable="ScheduleAnyway",
    label_selector=LabelSelector(match_labels=(("app", "web"),)),
)


@dataclass(frozen=True)
class Step:
    kind: str  # schedule | update
    payload: Any


def config(pct: int | None) -> dict[str, Any]:
    """Two profiles, default batching; `pct` None: kube's adaptive default."""
    cfg: dict[str, Any] = {
        "profiles": [
            {"schedulerName": "default-scheduler"},
            {
                "schedulerName": "packer",
                "pluginConfig": [
                    {"name": "NodeResourcesFit",
                     "args": {"scoringStrategy": {"type": "MostAllocated"}}}
                ],
            },
        ],
    }
    if pct is not None:
        cfg["percentageOfNodesToScore"] = pct
    return cfg


def deployment(k: int) -> dict[str, Any]:
    """Deployment k's pod shape: its own labels, default_selector and request."""
    sel = LabelSelector(match_labels=(("app", f"d{k}"),))
    return {"labels": {"app": f"d{k}"}, "default_selector": sel, "cpu": 100 + 150 * k}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def setup(
    n_nodes: int = 4, cpu: int = 4000, batching: dict[str, Any] | None = None
) -> tuple[Cluster, CollectorRegistry, Clock]:
    reg = CollectorRegistry()
    profiles: list[dict[str, Any]] = [
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "other"},
    ]
    if batching is not None:
        profiles[0]["batching"] = batching
    cfg = parse_config({"percentageOfNodesToScore": 100, "profiles": profiles})
    engine = Engine(cfg, seed=3, observer=PrometheusObserver(reg))
    c = engine.cluster("t")
    c.update(SnapshotUpdate(upsert_nodes=[node(f"n{i}", cpu=cpu) for i in range(n_nodes)]))
    clock = Clock()
    for b in c.batches.values():
        b.clock = clock
    return c, reg, clock


def play(
    cluster: list[Any], steps: list[Step], batching: bool, rescore: bool, seed: int = 7,
    config: dict[str, Any] | None = None,
) -> list[Any]:
    """Run the steps on a fresh engine; (uid, node, outcome, score, dry) per pod attempted and
    the number of pods hinted. `config` replaces PROFILES (percentageOfNodesToScore 100)."""
    base: dict[str, Any] = PROFILES if config is None else config
    cfg = dict(base)
    if not rescore:
        cfg = {
            **base,
            "profiles": [
                {**p, "batching": {**p.get("batching", {}), "rescore": False}}
                for p in base["profiles"]
            ],
        }
    engine = Engine(parse_config(cfg), seed=seed, batching_enabled=batching)
    c = engine.cluster("x")
    c.update(SnapshotUpdate(upsert_nodes=cluster))
    out: list[Any] = []
    try:
        for s in steps:
            if s.kind == "compact_min":  # small clusters reach compaction too
                for b in c.batches.values():
                    b.compact_min = s.payload
            elif s.kind == "upsert_node":
                nodes_ = s.payload if isinstance(s.payload, list) else [s.payload]
                c.update(SnapshotUpdate(upsert_nodes=nodes_))
            elif s.kind == "bind":
                try:  # a node an earlier step removed: rejected alike in both runs
                    c.update(SnapshotUpdate(upsert_pods=[s.payload]))
                except InvalidArgument:
                    pass
            elif s.kind == "remove_node":
                c.update(SnapshotUpdate(remove_nodes=[s.payload]))
            elif s.kind == "remove_pod":
                c.update(SnapshotUpdate(remove_pods=[s.payload]))
            else:
                pods, dry = s.payload
                placements, _ = c.schedule(pods, dry_run=dry)
                out.extend((p.pod_uid, p.node_name, p.outcome, p.score, dry) for p in placements)
        batched = sum(b.batched_pods for b in c.batches.values())
        return [out, batched]
    finally:
        engine.close()


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



def play_soft(cluster: list[Any], pods: list[Any], batching: bool) -> tuple[list[Any], int]:
    cfg = {
        "percentageOfNodesToScore": 100,
        "profiles": [{"schedulerName": "default-scheduler", "batching": {"softSpread": True}}],
    }
    engine = Engine(parse_config(cfg), seed=7, batching_enabled=batching)
    c = engine.cluster("x")
    c.update(SnapshotUpdate(upsert_nodes=cluster))
    try:
        out, _ = c.schedule(pods)
        return [(p.pod_uid, p.node_name) for p in out], c.batches["default-scheduler"].batched_pods
    finally:
        engine.close()


def both(steps: list[Step], seed: int = 7, min_batched: int = 1) -> int:
    """Batching on and off place alike, and the run with batching used at least `min_batched`
    hints (an equivalence that holds because nothing was hinted checks nothing)."""
    cluster: list[Any] = []
    off, _ = play(cluster, steps, batching=False, rescore=True, seed=seed)
    on, batched = play(cluster, steps, batching=True, rescore=True, seed=seed)
    assert on == off
    assert batched >= min_batched, f"only {batched} pods were hinted"
    return int(batched)
