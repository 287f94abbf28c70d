"""Engine-only one-per-node throughput (best of 3), for an A/B of two trees via PYTHONPATH:

    PYTHONPATH=<tree>/service .venv/bin/python bench/engine_ab.py
"""

from __future__ import annotations

import dataclasses
import time

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.model import Container, Node, Pod

NODES = 5000


def run() -> float:
    engine = Engine(parse_config({"percentageOfNodesToScore": 100}), seed=1)
    c = engine.cluster("x")
    c.update(SnapshotUpdate(upsert_nodes=[
        Node(name=f"n{i}", labels={"kubernetes.io/hostname": f"n{i}"},
             allocatable={"cpu": 4000, "memory": 16 << 30, "pods": 110})
        for i in range(NODES)
    ]))
    token = object()  # one shape, as the server's conversion cache marks equal pods
    base = Pod(uid="x", containers=(Container(name="c", requests={"cpu": 3000}),))
    pods = [dataclasses.replace(base, uid=f"p{i}", name=f"p{i}", shape=token)
            for i in range(NODES)]
    started = time.perf_counter()
    for i in range(0, NODES, 100):
        c.schedule(pods[i:i + 100])
    engine.close()
    return NODES / (time.perf_counter() - started)


if __name__ == "__main__":
    print(round(max(run() for _ in range(3))))
