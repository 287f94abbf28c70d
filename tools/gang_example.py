"""The README's "Gang scheduling" example, run for real: two 4-CPU nodes on an embedded server
with --feature-gates GenericWorkload=true (seed 1), then a gang that fits and one that cannot.
The README quotes the part between the markers and this script's output;
tests/test_readme_gang.py holds both.

    .venv/bin/python tools/gang_example.py
"""

from __future__ import annotations

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.client import SchedClient
from schedsvc_client.embedded import EmbeddedServer, server_command


def node(name: str) -> pb.Node:
    return pb.Node(name=name, labels={"kubernetes.io/hostname": name},
                   allocatable={"cpu": "4", "memory": "16Gi", "pods": "110"})


def gang(name: str, min_count: int) -> pb.PodGroup:
    policy = pb.PodGroupSchedulingPolicy(gang=pb.GangSchedulingPolicy(min_count=min_count))
    return pb.PodGroup(name=name, namespace="default",
                       spec=pb.PodGroupSpec(scheduling_policy=policy))


def worker(group: str, i: int, cpu: str) -> pb.Pod:
    return pb.Pod(uid=f"{group}-{i}", name=f"{group}-{i}", namespace="default",
                  containers=[pb.Container(name="c", requests={"cpu": cpu, "memory": "1Gi"})],
                  scheduling_group=pb.PodSchedulingGroup(pod_group_name=group))


def ask(c: SchedClient) -> None:
    # --- README begin
    c.update_snapshot(upsert_nodes=[node("node-0"), node("node-1")],
                      upsert_pod_groups=[gang("train", 4), gang("big", 3)])

    train: list[pb.PodGroupResult] = []  # filled with the answer's group results
    placed = c.schedule([worker("train", i, "2") for i in range(4)], pod_groups=train)
    print([p.node_name for p in placed], pb.PodGroupResult.Outcome.Name(train[0].outcome))

    big: list[pb.PodGroupResult] = []  # 3 workers of 3 CPU, on what train left: nothing
    placed = c.schedule([worker("big", i, "3") for i in range(3)], pod_groups=big)
    print([p.node_name for p in placed], pb.PodGroupResult.Outcome.Name(big[0].outcome))
    print(big[0].condition.reason, "|", big[0].message)
    print(placed[0].message)  # the member tried
    print(placed[2].message)  # a member never tried: the cycle stopped at minCount
    # --- README end


def main() -> None:
    cmd = server_command(seed=1, feature_gates="GenericWorkload=true")
    with EmbeddedServer(cmd) as srv, SchedClient(srv.address) as c:
        ask(c)


if __name__ == "__main__":
    main()
