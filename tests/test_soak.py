"""Soak (issue #13): a cluster's memory follows what it holds, and read-only requests cost the
same the ten-thousandth time as the first.

10,000 dry-run Schedules and Explains, each naming a fresh extended resource, fresh labels and
a fresh image, against a 1000-node cluster; then every node and pod is churned for new ones.
On the old code each new resource name widened the cluster's matrices for good (per-request
time grew with them) and interned names were never freed.
"""

from __future__ import annotations

import gc
import statistics
import time
from pathlib import Path

from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node, pb_pod
from tests.support import WAIT, Servers

NODES = 1000
REQUESTS = 10_000
EXPLAIN_EVERY = 20  # an Explain answers 1000 verdicts: every 20th request is one
WARMUP = 300
PAGE = 4096


def _rss() -> int:
    gc.collect()
    return int(Path("/proc/self/statm").read_text().split()[1]) * PAGE


def _node(i: int, gen: int) -> pb.Node:
    node = pb_node(f"n{i}-g{gen}", cpu="8", memory="32Gi")
    node.labels.update({"zone": f"z{i % 5}", f"gen{gen}.example.com/rack": f"r{i % 40}"})
    node.images.add(names=[f"registry.example.com/base-{gen}-{i % 50}:1"], size_bytes=1 << 28)
    return node


def _load(stub: object, gen: int) -> None:
    nodes = [_node(i, gen) for i in range(NODES)]
    pods = [pb_pod(f"b{gen}-{i}", cpu="100m", node_name=f"n{i}-g{gen}") for i in range(NODES)]
    for pod in pods:
        pod.labels.update({"app": f"a{gen}-{int(pod.uid.rsplit('-', 1)[1]) % 30}"})
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(  # type: ignore[attr-defined]
        cluster="soak", replace=True, upsert_nodes=nodes, upsert_pods=pods), timeout=WAIT)


def _fresh_pod(k: int) -> pb.Pod:
    pod = pb_pod(f"probe{k}", cpu="100m")
    pod.labels.update({f"fresh{k}.example.com/key": f"v{k}", "app": f"app-{k}"})
    pod.containers[0].image = f"registry.example.com/team-{k}/image-{k}:v{k}"
    if k % 2:  # half ask for a resource no node has (the old code added a column for it)
        pod.containers[0].requests[f"example.com/fresh-{k}"] = "1"
    return pod


def test_soak_read_only_requests_and_churn_keep_memory_and_latency_flat(
    servers: Servers,
) -> None:
    _, stub, _ = servers.start()
    _load(stub, 0)
    # The start is the loaded cluster in its steady state: every worker thread has run
    # requests (each has its malloc arena) and one churn has been through; what grows after
    # that is what the cluster keeps.
    for k in range(-WARMUP, 0):
        stub.Schedule(pb.ScheduleRequest(cluster="soak", dry_run=True,
                                         pods=[_fresh_pod(k)]), timeout=WAIT)
    stub.Explain(pb.ExplainRequest(cluster="soak", pod=_fresh_pod(-1)), timeout=WAIT)
    _load(stub, 1)
    start_rss = _rss()
    seconds: list[float] = []
    for k in range(REQUESTS):
        pod = _fresh_pod(k)
        t = time.perf_counter()
        if k % EXPLAIN_EVERY == 0:
            exp = stub.Explain(pb.ExplainRequest(cluster="soak", pod=pod), timeout=WAIT)
            assert len(exp.nodes) == NODES
        else:
            out = stub.Schedule(pb.ScheduleRequest(cluster="soak", dry_run=True, pods=[pod]),
                                timeout=WAIT)
            expected = pb.Placement.UNSCHEDULABLE if k % 2 else pb.Placement.SCHEDULED
            assert out.placements[0].outcome == expected
        if k % EXPLAIN_EVERY:
            seconds.append(time.perf_counter() - t)
    # churn: every node and pod replaced by new ones with new names, labels and images
    for gen in (2, 3):
        _load(stub, gen)
    end_rss = _rss()
    assert stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster="soak")).nodes == NODES
    assert end_rss <= start_rss * 1.2, (start_rss >> 20, end_rss >> 20)
    # per-request time is flat: the last thousand dry runs cost what the first thousand did
    first = statistics.median(seconds[:1000])
    last = statistics.median(seconds[-1000:])
    assert last <= 2 * first, (first, last)
