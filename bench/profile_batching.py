"""Where the engine's time goes on the basic workload at pct 100, batching off vs on.

cProfile of the engine in this process (no gRPC: the server's handler threads are invisible to
`python -m cProfile`, which profiles only the main thread), 4000 default pods on 5000 nodes.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import time

from _common import PCT100

from schedsvc.config import load_config
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.server.convert import Converter
from schedsvc_client.workload import CreateNodes, CreatePods, load_workload

CONVERTER = Converter()  # one server's conversion and caches

PODS = 4000


def _profile(batching: bool) -> tuple[float, str]:
    engine = Engine(load_config(PCT100), seed=1, batching_enabled=batching)
    w = load_workload("default", "medium")
    nodes = [
        CONVERTER.node_from_pb(n, "")
        for op in w.ops if isinstance(op, CreateNodes) for n in op.nodes()
    ]
    cluster = engine.cluster("default")
    cluster.update(SnapshotUpdate(upsert_nodes=nodes))
    op = next(o for o in w.ops if isinstance(o, CreatePods))
    pods = [CONVERTER.pod_from_pb(p, "") for p, _ in zip(op.pods(1), range(PODS), strict=False)]
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    for i in range(0, PODS, 100):
        cluster.schedule(pods[i:i + 100])
    prof.disable()
    rate = PODS / (time.perf_counter() - t0)
    engine.close()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(6)
    lines = [ln for ln in out.getvalue().splitlines() if ln.strip()]
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls"))
    return rate, "\n".join(lines[start:])


def run() -> str:
    out = ["## Profile: basic workload at pct 100, engine only (no gRPC), batching off vs on", "",
           "cProfile of the engine in process: the server's gRPC handler threads are invisible "
           "to `python -m cProfile`, which profiles only the main thread. 4000 default pods on "
           "5000 nodes, batches of 100.", "",
           "`python bench/profile_batching.py`", ""]
    for batching in (False, True):
        rate, top = _profile(batching)
        out += [f"Batching {'on' if batching else 'off'}: {rate:.0f} pods/s under the profiler; "
                "top functions by own time:", "", "```", top, "```", ""]
    return "\n".join(out).rstrip()


if __name__ == "__main__":
    print(run())
