"""Builders and a server harness shared by the gRPC-level tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import grpc

from schedsvc.config import SchedulerConfig, default_config
from schedsvc.engine.scheduler import Engine
from schedsvc.server.app import Server, ServerOptions
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc

WAIT = 30.0  # generous: a loaded 2-core machine must never fail these on time


def pb_node(name: str, cpu: str = "1", memory: str = "4Gi", pods: str = "110") -> pb.Node:
    return pb.Node(
        name=name, labels={"kubernetes.io/hostname": name},
        allocatable={"cpu": cpu, "memory": memory, "pods": pods},
    )


def pb_pod(
    uid: str, cpu: str = "100m", memory: str = "64Mi", node_name: str = "", **fields: Any
) -> pb.Pod:
    return pb.Pod(
        uid=uid, name=uid, namespace="default", node_name=node_name,
        containers=[pb.Container(name="c", image="img", requests={"cpu": cpu, "memory": memory})],
        **fields,
    )


def wait_until(cond: Callable[[], bool], timeout: float = WAIT, what: str = "condition") -> None:
    """Poll `cond` until true; fail (not hang) after `timeout`."""
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


class Servers:
    """Start real servers on 127.0.0.1:0 with any ServerOptions; all stopped at teardown."""

    def __init__(self) -> None:
        self.started: list[tuple[Server, grpc.Channel]] = []

    def start(
        self, *, seed: int | None = 1, config: SchedulerConfig | None = None,
        engine_options: dict[str, Any] | None = None, **options: Any,
    ) -> tuple[Server, pb_grpc.ScheduleServiceStub, grpc.Channel]:
        engine = Engine(config or default_config(), seed=seed, **(engine_options or {}))
        opts = ServerOptions(address="127.0.0.1:0", grace_seconds=1, **options)
        server = Server(engine, opts).start()
        channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
        self.started.append((server, channel))
        return server, pb_grpc.ScheduleServiceStub(channel), channel

    def close(self) -> None:
        for server, channel in self.started:
            channel.close()
            server.stop(0)


def snapshot_pods(server: Server, cluster: str = "default") -> dict[str, str]:
    """uid -> node of every pod the server's cluster holds (bound or assumed)."""
    c = server.engine.cluster(cluster)
    with c.lock:
        return {uid: rec.node_name for uid, rec in c.snapshot.pods.items()}


def load(stub: pb_grpc.ScheduleServiceStub, n: int, cluster: str = "", **kw: str) -> int:
    resp = stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster=cluster, replace=True, upsert_nodes=[pb_node(f"n{i}", **kw) for i in range(n)],
    ))
    return int(resp.generation)
