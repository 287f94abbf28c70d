"""Steady-state stream (or unary) rounds against one server, with the server's CPU per round.

    flock /tmp/bench.lock python bench/stream_probe.py --tree /tmp/old --tree /work/wt13s \
        [--rounds 4] [--mode stream] [--inflight 4] [--alternate 3]

For each tree: a fresh `schedsvc serve` (bench/pct100.yaml, --seed 1), 5000 one-per-node nodes,
then `rounds` rounds of 5000 pods (50 requests of 100; each round's pods removed afterwards).
The first round is warm-up. Prints pods/s and the server's CPU seconds (user+sys, all threads)
and context switches per round, so that a loss can be told apart: more CPU per pod, or waiting;
--threads adds each server thread's CPU per request and its context switches.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import grpc

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc
from schedsvc_client.workload import CreateNodes, CreatePods, load_workload, resolve_workload_path

HERE = os.path.dirname(os.path.abspath(__file__))
TICK = os.sysconf("SC_CLK_TCK")


def thread_stats(pid: int) -> dict[str, tuple[float, int, int]]:
    """Per thread (name/tid): CPU seconds, voluntary and involuntary context switches."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                head, rest = f.read().rsplit(")", 1)
            name = head.split("(", 1)[1]
            v = i = 0
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        v = int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches"):
                        i = int(line.split()[1])
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            out[f"{name}/{tid}"] = (ns / 1e9, v, i)
        except FileNotFoundError:
            pass
    return out


def proc_stats(pid: int) -> tuple[float, int, int]:
    """CPU seconds and (voluntary, involuntary) context switches over all threads."""
    cpu, vol, invol = 0.0, 0, 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / TICK
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        vol += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches"):
                        invol += int(line.split()[1])
        except FileNotFoundError:
            pass
    return cpu, vol, invol


def stream(stub: pb_grpc.ScheduleServiceStub, reqs: list[pb.ScheduleRequest], inflight: int
           ) -> list[str]:
    slots = threading.Semaphore(inflight)
    placed: list[str] = []

    def gen() -> Iterator[pb.ScheduleRequest]:
        for r in reqs:
            slots.acquire()
            yield r

    for resp in stub.ScheduleStream(gen()):
        placed.extend(p.pod_uid for p in resp.placements if p.outcome == pb.Placement.SCHEDULED)
        slots.release()
    return placed


def unary(stub: pb_grpc.ScheduleServiceStub, reqs: list[pb.ScheduleRequest]) -> list[str]:
    placed: list[str] = []
    for r in reqs:
        resp = stub.Schedule(r)
        placed.extend(p.pod_uid for p in resp.placements if p.outcome == pb.Placement.SCHEDULED)
    return placed


def run_tree(tree: str, port: int, args: argparse.Namespace) -> list[float]:
    env = dict(os.environ, PYTHONPATH=f"{tree}/service")
    env.update(dict(kv.split("=", 1) for kv in args.env))
    # PROBE_SCRIPT: a script that runs schedsvc.cli.main itself (e.g. with a profiler around it);
    # PROBE_PREFIX: a command line before the server's (e.g. valgrind --tool=callgrind ...)
    script = os.environ.get("PROBE_SCRIPT")
    main_ = "import sys; from schedsvc.cli import main; sys.exit(main())"
    launcher = [script] if script else ["-c", main_]
    srv = subprocess.Popen(
        [*os.environ.get("PROBE_PREFIX", "").split(), sys.executable, *launcher, "serve",
         "--address", f"127.0.0.1:{port}", "--config", f"{HERE}/pct100.yaml", "--seed", "1",
         *args.serve_flag],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rates: list[float] = []
    try:
        ch = grpc.insecure_channel(f"127.0.0.1:{port}", options=[
            ("grpc.max_receive_message_length", 256 << 20),
            ("grpc.max_send_message_length", 256 << 20)])
        slow = bool(os.environ.get("PROBE_PREFIX"))
        grpc.channel_ready_future(ch).result(timeout=600 if slow else 60)
        stub = pb_grpc.ScheduleServiceStub(ch)
        wl = load_workload(resolve_workload_path("one-per-node"), size=args.size)
        nodes_op = next(op for op in wl.ops if isinstance(op, CreateNodes))
        pods_op = next(op for op in wl.ops if isinstance(op, CreatePods))
        stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster="c", replace=True))
        stub.UpdateSnapshot(
            pb.UpdateSnapshotRequest(cluster="c", upsert_nodes=list(nodes_op.nodes())))
        for rnd in range(args.rounds):
            pods = list(pods_op.pods(rnd))
            reqs = [pb.ScheduleRequest(cluster="c", pods=pods[i:i + args.batch])
                    for i in range(0, len(pods), args.batch)]
            c0, v0, i0 = proc_stats(srv.pid)
            t_before = thread_stats(srv.pid)
            t0 = time.perf_counter()
            if args.mode == "stream":
                placed = stream(stub, reqs, args.inflight)
            else:
                placed = unary(stub, reqs)
            dt = time.perf_counter() - t0
            c1, v1, i1 = proc_stats(srv.pid)
            if args.threads:
                for k, (c, v, i) in thread_stats(srv.pid).items():
                    b = t_before.get(k, (0.0, 0, 0))
                    if v - b[1] or c - b[0]:
                        print(f"     {k:24s} cpu/req {1e3 * (c - b[0]) / len(reqs):6.3f}ms"
                              f" vol {v - b[1]:6d} invol {i - b[2]:5d}")
            n = len(pods)
            rate = n / dt
            if rnd:
                rates.append(rate)
            print(f"  {os.path.basename(tree)} r{rnd}: {rate:8.0f} pods/s  placed {len(placed)}"
                  f"  server cpu {1e6 * (c1 - c0) / n:6.1f} us/pod ({(c1 - c0) / dt:4.2f} cores)"
                  f"  csw/req vol {(v1 - v0) / len(reqs):5.1f} invol {(i1 - i0) / len(reqs):5.1f}",
                  flush=True)
            stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster="c", remove_pods=placed))
        ch.close()
    finally:
        srv.terminate()
        srv.wait()
    return rates


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tree", action="append", required=True)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--alternate", type=int, default=1)
    p.add_argument("--mode", default="stream")
    p.add_argument("--inflight", type=int, default=4)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--size", default="medium")
    p.add_argument("--env", action="append", default=[], help="K=V for the server")
    p.add_argument("--threads", action="store_true", help="per-thread stats, every round")
    p.add_argument("--port", type=int, default=50700, help="first port (servers use a few)")
    p.add_argument("--serve-flag", action="append", default=[])
    args = p.parse_args()
    summary: dict[str, list[float]] = {t: [] for t in args.tree}
    for a in range(args.alternate):
        trees = args.tree if a % 2 == 0 else args.tree[::-1]
        for k, tree in enumerate(trees):
            summary[tree] += run_tree(tree, args.port + 10 * a + k, args)
    for tree, rates in summary.items():
        rates.sort()
        print(f"{tree}: median {rates[len(rates) // 2]:.0f} pods/s over {len(rates)} rounds "
              f"{[round(r) for r in rates]}")


if __name__ == "__main__":
    main()
