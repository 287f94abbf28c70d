"""Shared fixtures: real servers on loopback ports (tests/support.py has the harness)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from schedsvc.config import SchedulerConfig
from schedsvc.server.app import Server
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc
from tests.support import Servers

ServerFactory = Callable[..., tuple[Server, pb_grpc.ScheduleServiceStub]]


@pytest.fixture
def servers() -> Iterator[Servers]:
    """Start real servers on 127.0.0.1:0 with any ServerOptions; all stopped at teardown."""
    s = Servers()
    yield s
    s.close()


@pytest.fixture
def make_server(servers: Servers) -> ServerFactory:
    """A server with a given configuration and engine options (seed, batching_enabled)."""

    def factory(
        config: SchedulerConfig | None = None, **engine_kw: Any
    ) -> tuple[Server, pb_grpc.ScheduleServiceStub]:
        seed = engine_kw.pop("seed", None)
        server, stub, _ = servers.start(seed=seed, config=config, engine_options=engine_kw)
        return server, stub

    return factory


@pytest.fixture
def stub(make_server: ServerFactory) -> pb_grpc.ScheduleServiceStub:
    return make_server(seed=1)[1]
