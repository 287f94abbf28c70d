"""Issue 16's per-hint cost in process: the request handler over an Engine at kube's default
configuration (adaptive percentageOfNodesToScore: 10 % of 5000 nodes), 5000 nodes in 3 zones,
K requests of 100 pods after one warm-up request; prints us per pod.

    .venv/bin/python bench/hint_inproc.py opn|plain|dep K [--profile tottime] [--callgrind]

opn: one-per-node (3-CPU pods on 4-CPU nodes); plain: 100m pods; dep: Deployment pods (ten
ReplicaSets in runs of 50, system default spreading through default_selector). Instructions
per pod, deterministic: run under `valgrind --tool=callgrind` with `--callgrind` for K=0 and
K=30 and divide the difference by 3000. `--callgrind` sets parallelism 1 and maxBatchAge 1h:
under valgrind a run is ~50x slower and would otherwise expire after 500ms at random points.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from _common import InProcessCaller

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Engine
from schedsvc.server.request_handler import RequestHandler
from schedsvc.v1 import schedule_pb2 as pb

NODES = 5000
ZONES = ("za", "zb", "zc")



def _pod(kind: str, k: int, j: int) -> pb.Pod:
    uid = f"p{k}-{j}"
    cpu, mem = ("3", "4Gi") if kind == "opn" else ("100m", "100Mi")
    c = pb.Container(name="c", image="registry.k8s.io/pause:3.10",
                     requests={"cpu": cpu, "memory": mem})
    if kind == "dep":
        app = f"d{(k * 100 + j) // 50 % 10}"
        return pb.Pod(uid=uid, name=uid, namespace="default", labels={"app": app},
                      containers=[c], default_selector=pb.LabelSelector(match_labels={"app": app}))
    app = "big" if kind == "opn" else "x"
    return pb.Pod(uid=uid, name=uid, namespace="default", labels={"app": app}, containers=[c])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["opn", "plain", "dep"])
    ap.add_argument("requests", type=int)
    ap.add_argument("--profile", metavar="SORT")
    ap.add_argument("--callgrind", action="store_true")
    a = ap.parse_args()
    profile: dict[str, object] = {"schedulerName": "default-scheduler"}
    cfg: dict[str, object] = {"profiles": [profile]}
    if a.callgrind:
        cfg["parallelism"] = 1
        profile["batching"] = {"maxBatchAge": "3600s"}
    engine = Engine(parse_config(cfg), seed=1)
    s = RequestHandler(engine)
    caller = InProcessCaller()
    nodes = [
        pb.Node(name=f"n{i}", allocatable={"cpu": "4", "memory": "32Gi", "pods": "110"},
                labels={"kubernetes.io/hostname": f"n{i}",
                        "topology.kubernetes.io/zone": ZONES[i % 3]})
        for i in range(NODES)
    ]
    s.update_snapshot(pb.UpdateSnapshotRequest(upsert_nodes=nodes, replace=True))
    raw = [
        pb.ScheduleRequest(cluster="default", pods=[_pod(a.kind, k, j) for j in range(100)])
        .SerializeToString()
        for k in range(a.requests + 1)
    ]
    s.schedule(pb.ScheduleRequest.FromString(raw[0]), caller)
    prof = cProfile.Profile() if a.profile else None
    if prof is not None:
        prof.enable()
    t = time.perf_counter()
    for b in raw[1:]:
        s.schedule(pb.ScheduleRequest.FromString(b), caller).SerializeToString()
    dt = time.perf_counter() - t
    if prof is not None:
        prof.disable()
        pstats.Stats(prof).sort_stats(a.profile).print_stats(45)
    if a.requests:
        n = a.requests * 100
        print(f"{a.kind}: {n / dt:.0f} pods/s in process, {dt / n * 1e6:.1f} us/pod")
    engine.close()


if __name__ == "__main__":
    main()
