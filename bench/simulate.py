"""Simulate (issue 27): fill, drain and scale_up end to end through gRPC, and a fork's memory.

A fresh `schedsvc serve` (the load client's EmbeddedServer, --seed 1) gets one UpdateSnapshot:
nodes in 3 zones (4 CPU, 32Gi, 110 pods each) holding Deployment-like pods (ReplicaSet-owned,
a default_selector each, so kube's system default spreading applies; a PodDisruptionBudget per
Deployment), and one node `n0` holding 30 pods to drain. One dry-run Schedule of one pod per
Deployment then indexes the Deployments' selectors, as on a cluster that placed those pods.
Each question is then asked several times with SchedClient.simulate, timed from the client
(serialization and transport included); the cluster is unchanged by each, so every run asks
the same question of the same cluster. The fork's memory is measured in process
(bench/simulate_memory.py) at 5,000 nodes here, at 50,000 in its own section `simulate_memory`
(its traced build takes minutes).
"""

from __future__ import annotations

import os
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from _common import table
from simulate_memory import memory_section

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.client import SchedClient
from schedsvc_client.embedded import EmbeddedServer, server_command

DEPLOYMENTS = 50
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
TIMEOUT = 300.0


@dataclass(frozen=True, slots=True)
class Sizes:
    nodes: int
    pods: int  # Deployment pods bound on n1.. (round robin)
    fill: int  # fill's max_pods
    pending: int  # scale_up's pending pods
    repeats: int


FULL = Sizes(nodes=5000, pods=30_000, fill=50_000, pending=1000, repeats=5)
SMALL = Sizes(nodes=500, pods=3000, fill=5000, pending=100, repeats=3)

# scale_up's templates: (name, CPU cores); each 8 GiB memory per core, 110 pods
TEMPLATES = (("m16", 16), ("m32", 32), ("m64", 64))
PENDING_CPU_M = 7500  # too big for the 4-CPU nodes: every pending pod needs a new node


def _node(i: int) -> pb.Node:
    return pb.Node(name=f"n{i}", labels={HOST: f"n{i}", ZONE: f"z{i % 3}"},
                   allocatable={"cpu": "4", "memory": "32Gi", "pods": "110"})


def _pod(uid: str, app: str, cpu: str, memory: str, node: str = "") -> pb.Pod:
    """A Deployment's pod: ReplicaSet-owned (movable by a drain), selected by its own
    Deployment's selector (kube's system default spreading)."""
    labels = {"app": app, "pod-template-hash": "h"}
    return pb.Pod(
        uid=uid, name=uid, namespace="default", labels=labels, node_name=node,
        containers=[pb.Container(name="c", requests={"cpu": cpu, "memory": memory})],
        default_selector=pb.LabelSelector(match_labels=labels),
        disruption=pb.PodDisruption(controller_kind="ReplicaSet"),
    )


def _load(client: SchedClient, s: Sizes) -> None:
    nodes = [_node(i) for i in range(s.nodes)]
    pods = [_pod(f"p{i}", f"d{i % DEPLOYMENTS}", "100m", "256Mi", f"n{1 + i % (s.nodes - 1)}")
            for i in range(s.pods)]
    # n0: 3 Deployments x 10 pods, interleaved (d0, d1, d2, d0, ...)
    pods += [_pod(f"q{j}", f"d{j % 3}", "100m", "256Mi", "n0") for j in range(30)]
    pdbs = [pb.PodDisruptionBudget(name=f"d{d}", namespace="default",
                                   selector=pb.LabelSelector(match_labels={"app": f"d{d}"}),
                                   disruptions_allowed=15) for d in range(DEPLOYMENTS)]
    client.update_snapshot(replace=True, upsert_nodes=nodes, upsert_pods=pods,
                           upsert_pod_disruption_budgets=pdbs, timeout=TIMEOUT)
    warm = [_pod(f"warm{d}", f"d{d}", "100m", "256Mi") for d in range(DEPLOYMENTS)]
    client.schedule(warm, dry_run=True, timeout=TIMEOUT)


def _times(
    ask: Callable[[], pb.SimulateResponse], n: int
) -> tuple[list[float], pb.SimulateResponse]:
    """`n` timed calls (seconds each) and the last answer; every answer must be complete."""
    out: list[float] = []
    resp = pb.SimulateResponse()
    for _ in range(n):
        t0 = time.perf_counter()
        resp = ask()
        out.append(time.perf_counter() - t0)
        if not resp.complete:
            raise RuntimeError("a simulation stopped before its end")
    return out, resp


def _stats(times: list[float], unit: str) -> list[str]:
    """runs, min, median, first call (cold: the first fork after the load)."""
    k = 1e3 if unit == "ms" else 1.0
    return [str(len(times)), f"{min(times) * k:.{1 if unit == 'ms' else 2}f} {unit}",
            f"{statistics.median(times) * k:.{1 if unit == 'ms' else 2}f} {unit}",
            f"{times[0] * k:.{1 if unit == 'ms' else 2}f} {unit}"]


def _met(ok: bool, target: str) -> str:
    return f"met ({target})" if ok else f"MISSED ({target})"


def _fill_row(client: SchedClient, s: Sizes) -> list[str]:
    tmpl = pb.Pod(name="fill", namespace="default",
                  containers=[pb.Container(name="c", requests={"cpu": "100m", "memory": "500Mi"})])
    step = pb.SimulationStep(fill=pb.FillStep(template=tmpl, max_pods=s.fill))
    times, resp = _times(lambda: client.simulate([step], timeout=TIMEOUT), s.repeats)
    placed = resp.results[0].fill.placed
    if placed != s.fill:
        raise RuntimeError(f"fill placed {placed} of {s.fill}")
    rate = placed / statistics.median(times)
    return [f"fill: 100m CPU / 500Mi template, max_pods {s.fill:,}",
            f"placed {placed:,} on {len(resp.results[0].fill.per_node)} nodes",
            *_stats(times, "s"), f"{rate:,.0f} pods/s",
            _met(rate >= 30_000, "≥ 30,000 pods/s")]


def _drain_row(client: SchedClient, s: Sizes) -> list[str]:
    step = pb.SimulationStep(drain=pb.DrainStep(node_names=["n0"]))
    times, resp = _times(lambda: client.simulate([step], timeout=TIMEOUT), s.repeats * 2)
    v = resp.results[0].drain.nodes[0]
    if not v.drainable or len(v.moved) != 30:
        raise RuntimeError(f"n0 not drained: {v}")
    med = statistics.median(times)
    return ["drain of n0 (30 pods: 3 Deployments x 10, 100m / 256Mi, interleaved; "
            "default spreading; a PDB each allowing 15)",
            f"drainable, 30 moved to {len({p.node_name for p in v.moved})} nodes",
            *_stats(times, "ms"), "", _met(med <= 0.020, "≤ 20 ms")]


def _scale_up_row(client: SchedClient, s: Sizes) -> list[str]:
    pending = [pb.Pod(uid=f"big{i}", name=f"big{i}", namespace="default",
                      containers=[pb.Container(name="c", requests={
                          "cpu": f"{PENDING_CPU_M}m", "memory": "1Gi"})])
               for i in range(s.pending)]
    templates = [pb.Node(name=n, labels={ZONE: "z0"}, allocatable={
        "cpu": str(c), "memory": f"{8 * c}Gi", "pods": "110"}) for n, c in TEMPLATES]
    step = pb.SimulationStep(scale_up=pb.ScaleUpStep(
        pods=pending, node_templates=templates, max_new_nodes=s.pending))
    times, resp = _times(lambda: client.simulate([step], timeout=TIMEOUT), s.repeats)
    got = {t.template: (t.new_nodes, t.fits) for t in resp.results[0].scale_up.templates}
    # by hand: floor(cores * 1000 / 7500) pods per new node, memory and pods not binding
    want = {n: (-(-s.pending // (c * 1000 // PENDING_CPU_M)), True) for n, c in TEMPLATES}
    if got != want:
        raise RuntimeError(f"scale_up answered {got}, worked by hand {want}")
    med = statistics.median(times)
    answer = ", ".join(f"{n}: {k}" for n, (k, _) in got.items())
    return [f"scale_up: {s.pending:,} pending pods of {PENDING_CPU_M}m / 1Gi over 3 templates "
            f"(16, 32, 64 CPU; 8Gi per CPU), max_new_nodes {s.pending}",
            f"new nodes {answer} (as worked by hand)", *_stats(times, "s"),
            f"{s.pending / med:,.0f} pending pods/s", _met(med <= 1.0, "≤ 1 s")]


def _grpc_section(s: Sizes) -> str:
    load = os.getloadavg()
    cmd = server_command(seed=1)
    with EmbeddedServer(cmd) as srv, SchedClient(
        srv.address, options=[("grpc.max_receive_message_length", 256 << 20)]
    ) as client:
        t0 = time.perf_counter()
        _load(client, s)
        loaded = time.perf_counter() - t0
        rows = [_fill_row(client, s), _drain_row(client, s), _scale_up_row(client, s)]
        cpu = srv.stats()
    serve = shlex.join(["schedsvc", *cmd[cmd.index("serve"):]])
    return "\n".join([
        f"Cluster: {s.nodes:,} nodes in 3 zones (4 CPU, 32Gi, 110 pods each), {s.pods:,} "
        f"Deployment pods (100m / 256Mi, {DEPLOYMENTS} Deployments, ReplicaSet-owned, system "
        "default spreading, a PodDisruptionBudget each) bound round robin on n1.., and n0 "
        f"holding 30 more; loaded in {loaded:.1f} s. Server: `{serve}` (batching on, kube's "
        f"default configuration). Load average at the start of this table: {load[0]:.2f} "
        f"{load[1]:.2f} {load[2]:.2f}. Each call is timed at the client, {s.repeats} runs "
        f"({s.repeats * 2} for drain); server CPU for the whole table "
        f"{cpu.cpu_seconds if cpu else float('nan'):.1f} s.",
        "",
        table(["question", "answer", "runs", "min", "median", "first", "rate at the median",
               "target (median)"], rows),
    ])


def run(small: bool = False) -> str:
    s = SMALL if small else FULL
    size = "small" if small else "full"
    command = "python bench/run_all.py simulate" + (" --small" if small else "")
    return "\n".join([
        f"## Simulate (issue 27): what-if on a fork ({size})",
        "",
        f"Command: `{command}` (bench/simulate.py). Every Simulate leaves the cluster "
        "unchanged, so each run asks the same question of the same cluster.",
        "",
        _grpc_section(s),
        "",
        memory_section((500,) if small else (5000,)),
    ])


if __name__ == "__main__":
    print(run(small="--small" in sys.argv))
