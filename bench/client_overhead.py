"""(d) The load client's own cost beside the server's, on the issue-target workload.

Three measurements of the same 5000-node, 10000-pod workload:
1. in this process: build every ScheduleRequest (batches of 100) and serialize it, no network;
2. the load tool against a no-op ScheduleService subprocess (`--noop`): all gRPC client work,
   nearly no server work, so its pods/s is the client's ceiling;
3. the load tool against the real server (pct 100, batching off), for the server's share.
"""

from __future__ import annotations

import time

from _common import OFF, PCT100, command, load, metrics, table, tput

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.workload import CreateNodes, CreatePods, load_workload


def _build_and_serialize() -> tuple[float, float, int]:
    """(seconds to build nodes + requests, seconds to serialize them, bytes)."""
    w = load_workload("default", "medium")
    t0 = time.process_time()
    nodes = [n for op in w.ops if isinstance(op, CreateNodes) for n in op.nodes()]
    requests = []
    for i, op in enumerate(w.ops):
        if isinstance(op, CreatePods):
            pods = list(op.pods(i))
            requests += [pb.ScheduleRequest(pods=pods[k:k + 100]) for k in range(0, len(pods), 100)]
    t1 = time.process_time()
    size = len(pb.UpdateSnapshotRequest(upsert_nodes=nodes).SerializeToString())
    size += sum(len(r.SerializeToString()) for r in requests)
    t2 = time.process_time()
    return t1 - t0, t2 - t1, size


def run() -> str:
    build, ser, size = _build_and_serialize()
    noop_args = ["default", "--size", "medium", "--noop"]
    real_args = ["default", "--size", "medium", "--config", PCT100, *OFF.split()]
    noop = metrics(load(noop_args)[0])
    real = metrics(load(real_args)[0])
    rows = [
        ["build 5000 nodes + 100 requests of 100 pods (in process)", "-", f"{build:.2f}", "-",
         "-"],
        [f"serialize them ({size / 2**20:.1f} MiB, in process)", "-", f"{ser:.2f}", "-", "-"],
        [f"`{command(noop_args)}`", tput(noop), f"{noop['client_cpu']['Total']:.2f}",
         f"{noop['server_cpu']['Total']:.2f}", f"{noop['server_cpu']['Measured']:.2f}"],
        [f"`{command(real_args)}`", tput(real), f"{real['client_cpu']['Total']:.2f}",
         f"{real['server_cpu']['Total']:.2f}", f"{real['server_cpu']['Measured']:.2f}"],
    ]
    share = real["client_cpu"]["Total"] / (
        real["client_cpu"]["Total"] + real["server_cpu"]["Total"])
    return "\n".join([
        "## (d) Load client overhead vs server work (5000 nodes, 10000 pods)",
        "",
        "Client CPU is the load tool's whole process (building requests, gRPC, collecting, "
        "reporting); server CPU is the server subprocess's utime+stime from /proc. The no-op "
        "server returns one empty SCHEDULED placement per pod.",
        "",
        table(["what", "pods/s", "client CPU s", "server CPU s (whole run)",
               "server CPU s (measured)"], rows),
        "",
        f"Against the real server the client is {share:.0%} of the CPU spent by both processes; "
        f"the client alone can drive {tput(noop)} pods/s, "
        f"{noop['SchedulingThroughput']['Average'] / real['SchedulingThroughput']['Average']:.1f}x"
        " what the server sustains here.",
    ])


if __name__ == "__main__":
    print(run())
