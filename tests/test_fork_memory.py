"""What a fork costs (docs/guarantees.md): memory in proportion to what it changes, not to
the cluster. At 5,000 nodes holding 50,000 pods, a fork that places 100 pods holds under
a MiB (the usage columns it wrote, its batch state, the rows it touched, its indexes' copied
arrays), less than a third of a copy of the pod tables alone."""

from __future__ import annotations

import gc
import tracemalloc
from dataclasses import replace

from schedsvc.engine.schedule_one import schedule_one
from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.model import LabelSelector, TopologySpreadConstraint
from tests.builders.clusters import cluster_of
from tests.builders.domain import MiB
from tests.builders.fork_world import node_of, pod_of

NODES = 5000
PODS_PER_NODE = 10


def test_a_fork_costs_what_it_changes_not_the_cluster() -> None:
    c = cluster_of([], batching=True)
    nodes = [node_of(i, 3, 4000) for i in range(NODES)]
    pods = [
        pod_of("plain", f"b{i}-{k}", "abc"[k % 3], 100, f"n{i}")
        for i in range(NODES) for k in range(PODS_PER_NODE)
    ]
    c.update(SnapshotUpdate(upsert_nodes=nodes, upsert_pods=pods))
    spread = (TopologySpreadConstraint(
        1, "topology.kubernetes.io/zone", "ScheduleAnyway",
        LabelSelector(match_labels=(("app", "a"),)),
    ),)
    c.schedule([pod_of("spread", "warm", "a", 100)])  # the cluster's indexes exist
    new = [pod_of("plain", f"s{j}", "a", 100) for j in range(100)]
    new = [p if j % 2 else replace(p, topology_spread_constraints=spread)
           for j, p in enumerate(new)]
    gc.collect()
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        with c.fork() as f:
            placed = [schedule_one(f.env, f.cursor, p, False) for p in new]
            gc.collect()
            held, _ = tracemalloc.get_traced_memory()
            rows_copied = len(f.snapshot.pods_on_row.owned)  # type: ignore[attr-defined]
        naive_start, _ = tracemalloc.get_traced_memory()
        snap = c.snapshot
        naive = (dict(snap.pods), [dict(snap.pods_on_row[r]) for r in range(snap.n_rows)])
        naive_bytes = tracemalloc.get_traced_memory()[0] - naive_start
        del naive
    finally:
        tracemalloc.stop()
    assert all(p.node_name for p in placed)
    assert rows_copied <= 100
    # a copy of the pod table and every row's pod dict is ~3.4 MiB here;
    # the fork holds its usage columns and batch state, 100 rows, 100 records
    fork_bytes = held - start
    assert fork_bytes < 3 * MiB, f"the fork holds {fork_bytes / MiB:.2f} MiB"
    assert fork_bytes < naive_bytes / 3, (fork_bytes, naive_bytes)
    assert len(c.snapshot.pods) == NODES * PODS_PER_NODE + 1  # the cluster placed nothing
