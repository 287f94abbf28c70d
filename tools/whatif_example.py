"""The README's "What if" example, run for real: a small cluster on an embedded server (seed 1),
then one question each with schedsvc_client's fill, drain and scale_up. The README quotes the
part between the markers and this script's output; tests/test_readme_whatif.py holds both.

    .venv/bin/python tools/whatif_example.py
"""

from __future__ import annotations

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client import drain, fill, scale_up
from schedsvc_client.client import SchedClient
from schedsvc_client.embedded import EmbeddedServer, server_command

ZONE = "topology.kubernetes.io/zone"


def node(name: str, zone: str, cpu: str) -> pb.Node:
    return pb.Node(name=name, labels={"kubernetes.io/hostname": name, ZONE: zone},
                   allocatable={"cpu": cpu, "memory": "16Gi", "pods": "110"})


def pod(name: str, cpu: str, node_name: str = "", namespace: str = "default",
        app: str = "web") -> pb.Pod:
    return pb.Pod(uid=name, name=name, namespace=namespace, node_name=node_name,
                  labels={"app": app},
                  containers=[pb.Container(name="c", requests={"cpu": cpu, "memory": "1Gi"})],
                  disruption=pb.PodDisruption(controller_kind="ReplicaSet"))


def load(c: SchedClient) -> None:
    """node-0..3 (4 CPU; zones a, a, b, b); web pods (ReplicaSet, a budget allowing 2) on
    node-0 and node-1, coredns (kube-system, no budget) on node-3, node-2 empty."""
    nodes = [node(f"node-{i}", "ab"[i // 2], "4") for i in range(4)]
    web = [pod(f"web-{i}", "1", f"node-{i % 2}") for i in range(5)]
    dns = pod("coredns-5d7", "500m", "node-3", "kube-system", "coredns")
    pdb = pb.PodDisruptionBudget(name="web", namespace="default", disruptions_allowed=2,
                                 selector=pb.LabelSelector(match_labels={"app": "web"}))
    c.update_snapshot(replace=True, upsert_nodes=nodes, upsert_pods=[*web, dns],
                      upsert_pod_disruption_budgets=[pdb])


def ask(c: SchedClient) -> None:
    # --- README begin
    web_pod = pod("web", "1")  # 1 CPU, 1Gi, app=web
    a = fill(c, web_pod, max_pods=100)  # how many more replicas fit, and where?
    print(a.placed, a.per_node, a.stopped_by)

    for v in drain(c, ["node-1", "node-3"]):  # can these nodes go?
        print(v.node_name, v.drainable, v.reason, v.blocking_pod, v.blocking_reason, v.moved)

    pending = [pod(f"big-{i}", "3") for i in range(4)]  # 3 CPU each
    m4 = pb.Node(name="m4", labels={ZONE: "b"},
                 allocatable={"cpu": "4", "memory": "16Gi", "pods": "110"})
    m8 = pb.Node(name="m8", labels={ZONE: "b"},
                 allocatable={"cpu": "8", "memory": "32Gi", "pods": "110"})
    s = scale_up(c, pending, [m4, m8], max_new_nodes=10)  # how many new nodes, of which shape?
    print(s.scheduled_now, [(o.template, o.new_nodes, o.fits) for o in s.options])
    # --- README end


def main() -> None:
    with EmbeddedServer(server_command(seed=1)) as srv, SchedClient(srv.address) as c:
        load(c)
        ask(c)


if __name__ == "__main__":
    main()
