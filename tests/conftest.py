"""Shared fixtures: a real server on a loopback port, and a channel to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import grpc
import pytest

from schedsvc.config import SchedulerConfig, default_config
from schedsvc.engine.scheduler import Engine
from schedsvc.server.app import Server, ServerOptions
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc

ServerFactory = Callable[..., tuple[Server, pb_grpc.ScheduleServiceStub]]


@pytest.fixture
def make_server() -> Iterator[ServerFactory]:
    """Start real servers on 127.0.0.1:0; all are stopped at teardown."""
    started: list[tuple[Server, grpc.Channel]] = []

    def factory(
        config: SchedulerConfig | None = None, **engine_kw: object
    ) -> tuple[Server, pb_grpc.ScheduleServiceStub]:
        engine = Engine(config or default_config(), **engine_kw)  # type: ignore[arg-type]
        server = Server(engine, ServerOptions(address="127.0.0.1:0", grace_seconds=1)).start()
        channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
        started.append((server, channel))
        return server, pb_grpc.ScheduleServiceStub(channel)

    yield factory
    for server, channel in started:
        channel.close()
        server.stop(0)


@pytest.fixture
def stub(make_server: ServerFactory) -> pb_grpc.ScheduleServiceStub:
    return make_server(seed=1)[1]
