"""A/B of the server path: two source trees, fresh `schedsvc serve` per round, alternating.

Each round starts a server from one tree, loads 5000 nodes, then sends unary Schedule requests
of 100 equal pods (batching on, percentageOfNodesToScore 100, so nearly every pod is a hint and
the server path is a large share of a request) and reports pods/s over the timed requests.

    python bench/server_ab.py OLD_TREE NEW_TREE [--rounds 3] [--requests 200] [--mode unary|stream]
        [--one-per-node]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc

CONFIG = Path(__file__).with_name("pct100.yaml")
NODES = 5000
BATCH = 100


def _nodes(n: int, cpu: str) -> list[pb.Node]:
    return [
        pb.Node(
            name=f"n{i}",
            labels={"kubernetes.io/hostname": f"n{i}"},
            allocatable={"cpu": cpu, "memory": "4000Gi", "pods": "1100"},
        )
        for i in range(n)
    ]


def _request(k: int, cpu: str) -> pb.ScheduleRequest:
    pods = [
        pb.Pod(
            uid=f"p{k}-{j}", name=f"p{k}-{j}", namespace="default",
            containers=[pb.Container(name="c", requests={"cpu": cpu, "memory": "100Mi"})],
        )
        for j in range(BATCH)
    ]
    return pb.ScheduleRequest(pods=pods)


def _serve(tree: str, port: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=f"{tree}/service")
    code = "import sys; from schedsvc.cli import main; sys.exit(main())"
    return subprocess.Popen(
        [sys.executable, "-c", code, "serve", "--address", f"127.0.0.1:{port}",
         "--config", str(CONFIG), "--seed", "1"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def _cpu(pid: int) -> float:
    """utime + stime of a process, seconds (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _round(
    tree: str, port: int, requests: int, mode: str, one_per_node: bool
) -> tuple[float, float]:
    """(pods/s, server CPU µs per pod) over the timed requests."""
    proc = _serve(tree, port)
    try:
        ch = grpc.insecure_channel(
            f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 1 << 28)]
        )
        grpc.channel_ready_future(ch).result(timeout=30)
        stub = pb_grpc.ScheduleServiceStub(ch)
        # one-per-node: each pod fills its node (every hint tombstones one cached node);
        # otherwise small pods on roomy nodes (the rescore path)
        node_cpu, pod_cpu = ("4", "3") if one_per_node else ("1000", "100m")
        n = (requests + 10) * BATCH if one_per_node else NODES
        stub.UpdateSnapshot(
            pb.UpdateSnapshotRequest(upsert_nodes=_nodes(n, node_cpu), replace=True)
        )
        warm = [_request(-k - 1, pod_cpu) for k in range(10)]
        reqs = [_request(k, pod_cpu) for k in range(requests)]
        for r in warm:
            stub.Schedule(r)
        c0 = _cpu(proc.pid)
        t0 = time.perf_counter()
        if mode == "unary":
            for r in reqs:
                stub.Schedule(r)
        else:
            def it() -> Iterator[pb.ScheduleRequest]:
                yield from reqs

            for _ in stub.ScheduleStream(it()):
                pass
        dt = time.perf_counter() - t0
        cpu = _cpu(proc.pid) - c0
        ch.close()
        return requests * BATCH / dt, cpu * 1e6 / (requests * BATCH)
    finally:
        proc.terminate()
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--mode", choices=("unary", "stream"), default="unary")
    ap.add_argument("--one-per-node", action="store_true")
    a = ap.parse_args()
    got: dict[str, list[float]] = {"old": [], "new": []}
    cpu: dict[str, list[float]] = {"old": [], "new": []}
    for r in range(a.rounds):
        order = ("old", "new") if r % 2 == 0 else ("new", "old")
        for side in order:
            tree = a.old if side == "old" else a.new
            rate, us = _round(tree, 50900 + r * 2 + (side == "new"), a.requests, a.mode,
                              a.one_per_node)
            got[side].append(rate)
            cpu[side].append(us)
    for side in ("old", "new"):
        rounds = ", ".join(f"{x:.0f}" for x in got[side])
        us = ", ".join(f"{x:.1f}" for x in cpu[side])
        print(f"{side}: {rounds}  median {statistics.median(got[side]):.0f} pods/s;"
              f" server CPU µs/pod {us}  median {statistics.median(cpu[side]):.1f}")
    print(f"new/old: {statistics.median(got['new']) / statistics.median(got['old']):.3f}")


if __name__ == "__main__":
    main()
