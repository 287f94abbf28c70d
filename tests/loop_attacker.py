"""One client sending the heaviest requests the default limits admit, for the loop-stall test
(tests/test_loop_stall.py). Run as `python -m tests.loop_attacker ADDRESS SECONDS`; it prints
"ready" once its requests are built and "done N" after sending N of them.

A process of its own: building and serializing these messages holds its own GIL for seconds,
which must not be mistaken for the server's stalls.
"""

from __future__ import annotations

import sys
import time

import grpc

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc

MIB = 1 << 20


def huge_pod(uid: str, bad: bool) -> pb.Pod:
    """A pod near the per-field item limits (about 1.5 MB), valid unless `bad`; it fits."""
    p = pb.Pod(uid=uid, name=uid, namespace="default")
    for i in range(4000):
        p.containers.add(name=f"c{i}", image=f"img{i}", requests={"cpu": "1m"})
        p.tolerations.add(key=f"example.com/k{i}", operator="Equal", value=f"v{i}",
                          effect="NoSchedule")
    if bad:
        p.preemption_policy = "Bogus"  # refused only once the whole pod is converted
    return p


def main() -> None:
    address, seconds = sys.argv[1], float(sys.argv[2])
    channel = grpc.insecure_channel(address, options=[
        ("grpc.max_send_message_length", 64 * MIB), ("grpc.max_receive_message_length", 64 * MIB),
    ])
    stub = pb_grpc.ScheduleServiceStub(channel)
    nodes = [pb.Node(name=f"n{i}", allocatable={"cpu": "64", "memory": "256Gi", "pods": "500"},
                     labels={"kubernetes.io/hostname": f"n{i}", "zone": f"z{i % 3}"})
             for i in range(2000)]
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster="a", replace=True, upsert_nodes=nodes))
    for i in range(5):  # the cluster becomes known-fast: its requests start on the loop
        stub.Schedule(pb.ScheduleRequest(cluster="a", pods=[pb.Pod(uid=f"w{i}", name=f"w{i}")]))
    labelled = [pb.Node(name=f"m{i}", labels={f"l{j}": "v" * 40 for j in range(20)},
                        allocatable={"cpu": "4"}) for i in range(40000)]
    big_bad = pb.UpdateSnapshotRequest(
        cluster="b", upsert_nodes=[pb.Node(name="BAD NAME"), *labelled])
    big_good = pb.UpdateSnapshotRequest(cluster="b", replace=True, upsert_nodes=labelled[:10000])
    print("ready", flush=True)
    end = time.monotonic() + seconds
    sent = k = 0
    while time.monotonic() < end:
        k += 1
        requests = [
            (stub.Schedule, pb.ScheduleRequest(cluster="a", pods=[huge_pod(f"h{k}", False)])),
            (stub.Schedule, pb.ScheduleRequest(cluster="a", pods=[huge_pod(f"x{k}", True)])),
            (stub.Schedule, pb.ScheduleRequest(cluster="a", pods=[pb.Pod(uid=f"s{k}")])),
            (stub.UpdateSnapshot, big_bad),
            (stub.Explain, pb.ExplainRequest(cluster="a", pod=pb.Pod(uid="e"))),
            (stub.UpdateSnapshot, big_good),
        ]
        for fn, req in requests:
            if time.monotonic() >= end:
                break
            try:
                fn(req, timeout=120)
            except grpc.RpcError:
                pass  # refusals are expected; what is measured is the server's health
            sent += 1
    print(f"done {sent}", flush=True)


if __name__ == "__main__":
    main()
