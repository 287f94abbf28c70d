"""Engine-only throughput and per-hint cost at kube's default configuration (adaptive
percentageOfNodesToScore), batching off vs on: plain pods, Deployment pods (owned, system
default spreading through default_selector) and one-per-node pods, 5000 nodes in 3 zones,
batches of 100. No gRPC: what a hint costs in process.

    flock /tmp/bench.lock .venv/bin/python bench/hint_cost.py [pods] [pct]
"""

from __future__ import annotations

import dataclasses
import sys
import time

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.model import Container, LabelSelector, Node, Pod

NODES = 5000


def nodes() -> list[Node]:
    return [
        Node(name=f"n{i}", labels={"kubernetes.io/hostname": f"n{i}",
                                   "topology.kubernetes.io/zone": f"z{i % 3}"},
             allocatable={"cpu": 4000, "memory": 16 << 30, "pods": 110})
        for i in range(NODES)
    ]


def pods(kind: str, count: int) -> list[Pod]:
    out: list[Pod] = []
    per_run = 500 if kind == "deployment" else count
    for start in range(0, count, per_run):
        run = start // per_run
        token = object()  # one shape per run, as the server's conversion cache marks them
        cpu = 3000 if kind == "one-per-node" else 100
        base = Pod(uid="x", containers=(Container(name="c", requests={"cpu": cpu}),))
        if kind == "deployment":
            labels = {"app": f"d{run}", "pod-template-hash": "abc"}
            base = dataclasses.replace(
                base, labels=labels,
                default_selector=LabelSelector(match_labels=tuple(sorted(labels.items()))),
            )
        out += [dataclasses.replace(base, uid=f"p{i}", name=f"p{i}", shape=token)
                for i in range(start, min(start + per_run, count))]
    return out


def run(kind: str, batching: bool, count: int, pct: int | None) -> tuple[float, float, float]:
    cfg: dict[str, object] = {
        # softSpread spelled out, so that trees where it was off by default compare
        "profiles": [{"schedulerName": "default-scheduler", "batching": {"softSpread": True}}],
    }
    if pct is not None:
        cfg["percentageOfNodesToScore"] = pct
    engine = Engine(parse_config(cfg), seed=1, batching_enabled=batching)
    c = engine.cluster("x")
    c.update(SnapshotUpdate(upsert_nodes=nodes()))
    batch = c.batches["default-scheduler"]
    spent = [0.0]
    inner = batch.get_node_hint

    def timed(*a: object) -> object:
        t0 = time.perf_counter()
        try:
            return inner(*a)  # type: ignore[arg-type]
        finally:
            spent[0] += time.perf_counter() - t0

    batch.get_node_hint = timed  # type: ignore[method-assign]
    ps = pods(kind, count)
    started = time.perf_counter()
    for i in range(0, count, 100):
        c.schedule(ps[i:i + 100])
    elapsed = time.perf_counter() - started
    hinted = batch.batched_pods
    engine.close()
    per_hint = spent[0] / hinted * 1e6 if hinted else 0.0
    return count / elapsed, hinted / count, per_hint


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    pct = int(sys.argv[2]) if len(sys.argv) > 2 else None
    print(f"{NODES} nodes, {count} pods, percentageOfNodesToScore {pct or 'adaptive'}")
    print("workload        batching  pods/s   hint ratio  µs per get_node_hint (hinted pods)")
    for kind in ("plain", "deployment", "one-per-node"):
        for batching in (False, True):
            rate, ratio, us = run(kind, batching, count, pct)
            print(f"{kind:15} {'on' if batching else 'off':8} {rate:8.0f} {ratio:8.3f}     "
                  f"{us:8.1f}")
