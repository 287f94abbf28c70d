"""A load-client workload through the request handler in process (no gRPC): pods/s and us per pod.
Storage objects and StatefulSet claims are sent as the load client sends them, untimed.

The requests are the ones `schedsvc-load` would send (same workload files, sizes, batch size),
decoded from bytes and answered by RequestHandler.schedule as the server does, minus the
transport; so this separates the engine's cost per pod from gRPC's and the client's.

    .venv/bin/python bench/servicer_inproc.py deployments --size medium [--config bench/pct100.yaml]
        [--batching off] [--profile tottime]
"""

from __future__ import annotations

import argparse
import time

import yaml
from _common import InProcessCaller

from schedsvc.config import default_config, parse_config
from schedsvc.engine.scheduler import Engine
from schedsvc.server.request_handler import RequestHandler
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.workload import (
    CreateNodes,
    CreatePods,
    CreateStatefulSets,
    CreateStorage,
    load_workload,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload")
    ap.add_argument("--size", default="medium")
    ap.add_argument("--config", default="")
    ap.add_argument("--batching", choices=["on", "off"], default="on")
    ap.add_argument("--batch-size", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", default="", help="a pstats sort key: cProfile the timed part")
    args = ap.parse_args()
    if args.config:
        with open(args.config, encoding="utf-8") as f:
            config = parse_config(yaml.safe_load(f))
    else:
        config = default_config()
    engine = Engine(config, seed=args.seed, batching_enabled=args.batching == "on")
    handler = RequestHandler(engine)
    caller = InProcessCaller()
    workload = load_workload(args.workload, args.size)
    measured: list[bytes] = []
    for index, op in enumerate(workload.ops):
        if isinstance(op, CreateNodes):
            handler.update_snapshot(pb.UpdateSnapshotRequest(upsert_nodes=list(op.nodes())))
        elif isinstance(op, CreateStorage):
            handler.update_snapshot(op.objects())
            handler.update_snapshot(pb.UpdateSnapshotRequest(upsert_csi_nodes=op.csi_nodes()))
        elif isinstance(op, CreatePods | CreateStatefulSets):
            if isinstance(op, CreateStatefulSets):
                handler.update_snapshot(
                    pb.UpdateSnapshotRequest(upsert_persistent_volume_claims=op.claims()))
            pods = list(op.pods(index))
            reqs = [
                pb.ScheduleRequest(pods=pods[i:i + args.batch_size]).SerializeToString()
                for i in range(0, len(pods), args.batch_size)
            ]
            if op.collect_metrics:
                measured += reqs
            else:
                for raw in reqs:
                    handler.schedule(pb.ScheduleRequest.FromString(raw), caller)
    prof = None
    if args.profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    started = time.perf_counter()
    cpu = time.process_time()
    pods = hinted = 0
    for raw in measured:
        resp = handler.schedule(pb.ScheduleRequest.FromString(raw), caller)
        resp.SerializeToString()
        pods += len(resp.placements)
        hinted += sum(1 for p in resp.placements if p.batched)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if prof is not None:
        import pstats

        prof.disable()
        pstats.Stats(prof).sort_stats(args.profile).print_stats(30)
    print(f"{args.workload}/{args.size} batching {args.batching}: {pods} pods, "
          f"{pods / wall:.0f} pods/s, {wall / pods * 1e6:.1f} us/pod wall, "
          f"{cpu / pods * 1e6:.1f} us/pod cpu, hint ratio {hinted / max(pods, 1):.3f}")
    engine.close()


if __name__ == "__main__":
    main()
