"""Nodes, pods and requests as schedsvc.v1 messages, for the tests that go through gRPC or
the servicer (tests/builders/to_pb.py converts any domain object the other way)."""

from __future__ import annotations

from typing import Any

from schedsvc.v1 import schedule_pb2 as pb

__all__ = ["pb_node", "pb_pod", "replace_nodes"]


def pb_node(name: str, cpu: str = "1", memory: str = "4Gi", pods: str = "110") -> pb.Node:
    return pb.Node(
        name=name, labels={"kubernetes.io/hostname": name},
        allocatable={"cpu": cpu, "memory": memory, "pods": pods},
    )


def pb_pod(
    uid: str, cpu: str = "100m", memory: str = "64Mi", node_name: str = "", image: str = "img",
    **fields: Any,
) -> pb.Pod:
    return pb.Pod(
        uid=uid, name=uid, namespace="default", node_name=node_name,
        containers=[pb.Container(name="c", image=image, requests={"cpu": cpu, "memory": memory})],
        **fields,
    )


def replace_nodes(
    n: int, cluster: str = "", prefix: str = "n", **node: str
) -> pb.UpdateSnapshotRequest:
    """An UpdateSnapshot that replaces `cluster` with `n` nodes (pb_node keywords in `node`)."""
    return pb.UpdateSnapshotRequest(
        cluster=cluster, replace=True,
        upsert_nodes=[pb_node(f"{prefix}{i}", **node) for i in range(n)],
    )
