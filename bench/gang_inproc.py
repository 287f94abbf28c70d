"""A 1000-pod gang (minCount 1000) on 5000 nodes of the default shape, in process: the request
handler over an Engine with GenericWorkload on (kube's default configuration otherwise), one
warm-up gang, then K timed gangs of fresh PodGroups; prints ms per gang, and a cProfile with
--profile. What bench/gang.py's (a) measures without the transport and the client.

    .venv/bin/python bench/gang_inproc.py K [--profile tottime|cumtime] [--nofit]

--nofit: members of 3 CPU on a cluster where only 990 nodes have room (the gang is taken
back after its 991st member).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from _common import InProcessCaller

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Engine
from schedsvc.framework.feature import EmulatedVersion, Features
from schedsvc.server.request_handler import RequestHandler
from schedsvc.v1 import schedule_pb2 as pb

NODES, GANG, ROOM = 5000, 1000, 990
FEATURES = Features(EmulatedVersion.V1_37, (("GenericWorkload", True),))


def _pod(uid: str, group: str, cpu: str, node: str = "") -> pb.Pod:
    p = pb.Pod(uid=uid, name=uid, namespace="default", node_name=node, containers=[
        pb.Container(name="c", requests={"cpu": cpu, "memory": "500Mi"})])
    if group:
        p.scheduling_group.pod_group_name = group
    return p


def _gang(name: str) -> pb.PodGroup:
    g = pb.PodGroup(name=name, namespace="default")
    g.spec.scheduling_policy.gang.min_count = GANG
    return g


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("requests", type=int)
    ap.add_argument("--profile", metavar="SORT")
    ap.add_argument("--nofit", action="store_true")
    a = ap.parse_args()
    engine = Engine(parse_config({}, features=FEATURES), seed=1)
    h = RequestHandler(engine)
    caller = InProcessCaller()
    nodes = [pb.Node(name=f"n{i}", labels={"kubernetes.io/hostname": f"n{i}"},
                     allocatable={"cpu": "4", "memory": "32Gi", "pods": "110"})
             for i in range(NODES)]
    cpu = "3" if a.nofit else "100m"
    fillers = [_pod(f"fill{i}", "", "2", f"n{i}") for i in range(NODES - ROOM)] if a.nofit else []
    h.update_snapshot(pb.UpdateSnapshotRequest(
        upsert_nodes=nodes, upsert_pods=fillers, replace=True,
        upsert_pod_groups=[_gang(f"g{k}") for k in range(a.requests + 1)]))
    raw = [pb.ScheduleRequest(cluster="default", pods=[
        _pod(f"g{k}-{j}", f"g{k}", cpu) for j in range(GANG)]).SerializeToString()
        for k in range(a.requests + 1)]
    h.schedule(pb.ScheduleRequest.FromString(raw[0]), caller)
    prof = cProfile.Profile() if a.profile else None
    times = []
    for b in raw[1:]:
        if prof is not None:
            prof.enable()
        t = time.perf_counter()
        resp = h.schedule(pb.ScheduleRequest.FromString(b), caller)
        resp.SerializeToString()
        times.append(time.perf_counter() - t)
        if prof is not None:
            prof.disable()
        print(f"{pb.PodGroupResult.Outcome.Name(resp.pod_groups[0].outcome)}, "
              f"evaluated {resp.pod_groups[0].evaluated}: {times[-1] * 1e3:.1f} ms")
    if prof is not None:
        pstats.Stats(prof).sort_stats(a.profile).print_stats(40)
    engine.close()


if __name__ == "__main__":
    main()
