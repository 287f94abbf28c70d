"""A server harness shared by the gRPC-level tests: real servers, polling, and the books a
server's clusters must balance (builders: tests/builders)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import grpc
import numpy as np

from schedsvc.config import SchedulerConfig, default_config
from schedsvc.engine.scheduler import Engine
from schedsvc.server.app import Server, ServerOptions
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc
from tests.builders import replace_nodes

WAIT = 30.0  # generous: a loaded 2-core machine must never fail these on time


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
    resp = stub.UpdateSnapshot(replace_nodes(n, cluster, **kw))
    return int(resp.generation)


def check_books(server: Server) -> None:
    """Usage columns equal the pods held; pods we placed fit; the API's counts agree."""
    for name, cluster in server.engine.clusters().items():
        with cluster.lock:
            snap = cluster.snapshot
            assert not set(snap.pods) & set(snap.nominated), name
            expected = np.zeros_like(snap.requested)
            for uid, rec in snap.pods.items():
                assert rec.node_name in snap.index, (uid, rec.node_name)
                row = snap.index[rec.node_name]
                assert uid in snap.pods_on_row[row]
                for res, qty in rec.info.requests.items():
                    expected[row, snap.resource_index[res]] += qty
                expected[row, 3] += 1
            rows = snap.order
            assert np.array_equal(expected[rows], snap.requested[rows]), name
            assert sum(len(snap.pods_on_row[r]) for r in rows.tolist()) == len(snap.pods)
