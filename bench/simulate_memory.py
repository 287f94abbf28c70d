"""A fork's memory against its cluster's (issue 27: a fork costs memory in proportion to what
it changes, not to the cluster), in process: no server, so tracemalloc sees every allocation.

For each size: an engine cluster of N nodes (3 zones, 4 CPU, 32Gi, 110 pods) holding 10 pods
per node (100m / 256Mi, labelled by one of 50 Deployments), built under tracemalloc (its
traced size: node columns, pod records, rows, indexes, the Pod objects it holds). Then one
simulation of a schedule step placing 10 pods, then another placing 1,000 (half of them with
kube's system default spreading), each on its own fork; the fork's traced memory is read before
the fork is dropped (what it holds) together with the peak while it ran. For scale, what a
plain copy of the cluster's pod table and rows would take (not done by the fork).
"""

from __future__ import annotations

import gc
import os
import time
import tracemalloc
from dataclasses import dataclass

from _common import table

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Cluster, Engine, SnapshotUpdate
from schedsvc.engine.simulate.run import run as run_steps
from schedsvc.engine.simulate.steps import ScheduleStep
from schedsvc.model import Container, LabelSelector, Node, Pod, frozen_map

MiB = 1 << 20
PODS_PER_NODE = 10
PLACED = 1000
FEW = 10
ZONE = "topology.kubernetes.io/zone"


@dataclass(frozen=True, slots=True)
class Fork:
    placed: int
    held: int  # traced bytes the fork holds after its step, before it is dropped
    peak: int  # the most traced while it ran, above the start
    seconds: float
    rows_copied: int


@dataclass(frozen=True, slots=True)
class ForkMemory:
    nodes: int
    pods: int
    build_s: float
    cluster_bytes: int
    small: Fork  # a fork placing FEW pods: its fixed part
    large: Fork  # a fork placing PLACED pods
    copy_bytes: int  # a plain copy of the pod table and every row's pod dict


def _pod(uid: str, d: int, node: str = "", spread: bool = False) -> Pod:
    labels = frozen_map({"app": f"d{d}"})
    return Pod(uid=uid, name=uid, labels=labels, node_name=node,
               containers=(Container(name="c", requests={"cpu": 100, "memory": 256 * MiB}),),
               default_selector=LabelSelector(match_labels=(("app", f"d{d}"),)) if spread
               else None)


def _build(nodes: int) -> Cluster:
    engine = Engine(parse_config({}), seed=1, batching_enabled=True)
    c = engine.cluster("mem")
    ns = [Node(name=f"n{i}", labels={"kubernetes.io/hostname": f"n{i}", ZONE: f"z{i % 3}"},
               allocatable={"cpu": 4000, "memory": 32 << 30, "pods": 110})
          for i in range(nodes)]
    pods = [_pod(f"b{i}-{k}", (i + k) % 50, f"n{i}")
            for i in range(nodes) for k in range(PODS_PER_NODE)]
    c.update(SnapshotUpdate(upsert_nodes=ns, upsert_pods=pods))
    c.schedule([_pod(f"warm{d}", d, spread=True) for d in range(50)], dry_run=True)
    return c


def _plain_copy_bytes(c: Cluster) -> int:
    start, _ = tracemalloc.get_traced_memory()
    snap = c.snapshot
    copied = (dict(snap.pods), [dict(snap.pods_on_row[r]) for r in range(snap.n_rows)])
    size = tracemalloc.get_traced_memory()[0] - start
    del copied
    return size


def _fork(c: Cluster, n: int) -> Fork:
    """A fork of `c` placing `n` pods; its traced memory read before it is dropped."""
    new = [_pod(f"s{j}", j % 50, spread=j % 2 == 0) for j in range(n)]
    gc.collect()
    start, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    with c.fork() as f:
        res = run_steps(f, [ScheduleStep(tuple(new))], lambda: True, c.snapshot.generation)
        seconds = time.perf_counter() - t0
        gc.collect()
        held, peak = tracemalloc.get_traced_memory()
        rows = len(f.snapshot.pods_on_row.owned)
    placed = sum(1 for p in res.results[0].placements if p.node_name)
    if placed != n:
        raise RuntimeError(f"the fork placed {placed} of {n} pods")
    return Fork(n, held - start, peak - start, seconds, rows)


def measure(nodes: int) -> ForkMemory:
    gc.collect()
    tracemalloc.start()
    try:
        t0 = time.perf_counter()
        c = _build(nodes)
        build_s = time.perf_counter() - t0
        gc.collect()
        cluster_bytes, _ = tracemalloc.get_traced_memory()
        small, large = _fork(c, FEW), _fork(c, PLACED)
        copy_bytes = _plain_copy_bytes(c)
    finally:
        tracemalloc.stop()
    return ForkMemory(nodes, nodes * PODS_PER_NODE, build_s, cluster_bytes, small, large,
                      copy_bytes)


def _row(m: ForkMemory) -> list[str]:
    f, g = m.small, m.large
    per_pod = (g.held - f.held) / (g.placed - f.placed)
    return [f"{m.nodes:,} nodes, {m.pods:,} pods", f"{m.cluster_bytes / MiB:.0f} MiB",
            f"{f.held / MiB:.2f} MiB", f"{g.held / MiB:.2f} MiB ({g.held / m.cluster_bytes:.2%})",
            f"{g.peak / MiB:.2f} MiB", f"{per_pod / 1024:.1f} KiB",
            f"{m.copy_bytes / MiB:.1f} MiB", f"{g.rows_copied:,}", f"{g.seconds:.2f} s",
            f"{m.build_s:.0f} s"]


def memory_section(sizes: tuple[int, ...]) -> str:
    load = os.getloadavg()
    rows = [_row(measure(n)) for n in sizes]
    return "\n".join([
        f"### A fork's memory (in process, tracemalloc): {PLACED:,} pods placed",
        "",
        f"Load average at the start of this table: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}. "
        f"Each cluster: N nodes in 3 zones holding {PODS_PER_NODE} pods each (100m / 256Mi), "
        "built under tracemalloc (which slows the build several-fold; the build time below "
        f"includes it). Each simulation: one schedule step of {FEW} or {PLACED:,} pods "
        "(100m / 256Mi, half with system default spreading) on its own fork, kube's default "
        "configuration, batching on. Held: traced memory the fork holds after the step, "
        "before it is dropped; peak: the most traced while it ran, above the start. A plain "
        "copy of the pod table and every row's pod dict is shown for scale (the fork does not "
        "make one).",
        "",
        table(["cluster", "cluster (traced)", f"fork placing {FEW}: held",
               f"fork placing {PLACED:,}: held (of the cluster)", "its peak",
               "per pod placed beyond the first 10", "plain copy of pod tables",
               "rows copied", f"{PLACED:,} placed in (traced)", "build (traced)"], rows),
    ])


def run(small: bool = False) -> str:
    """The `simulate_memory` section of bench/run_all.py: the fork at 50,000 nodes (5,000
    with --small), apart from `simulate` because its traced build alone takes minutes."""
    size = "small" if small else "full"
    command = "python bench/run_all.py simulate_memory" + (" --small" if small else "")
    return "\n".join([
        f"## Simulate (issue 27): a fork's memory at {'5,000' if small else '50,000'} nodes "
        f"({size})",
        "",
        f"Command: `{command}` (bench/simulate_memory.py).",
        "",
        memory_section((5000,) if small else (50_000,)),
    ])
