"""Assemble and run the gRPC server: service, health, reflection, graceful shutdown.

The server is grpc's asyncio server, running its event loop on a thread of its own so that
callers (the CLI, tests, embedding programs) keep a plain synchronous start/stop/wait. Engine
work runs on a pool of `max_workers` threads, except a short first slice of Schedule requests
whose cluster's pods are recently fast, which runs on the loop itself (inline.py; the rest of
such a batch has a pool of its own); the loop answers health, reflection and stream reads
whatever the pools are doing.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from ..engine.scheduler import Engine
from ..v1 import schedule_pb2 as pb
from ..v1 import schedule_pb2_grpc as pb_grpc
from .limits import Limits
from .malformed import MalformedRequestInterceptor
from .memory import MemoryBudget, memory_limits
from .pauses import HeapPolicy, ShortTurns
from .request_handler import RequestHandler
from .servicer import ScheduleServicer

__all__ = ["ServerOptions", "Server", "SERVICE_NAME"]

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["ScheduleService"].full_name
log = logging.getLogger("schedsvc.server")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ServerOptions:
    address: str = "127.0.0.1:50051"
    max_workers: int = 16
    # a Schedule request's first slice on the event loop (inline.py); 0: all on the workers
    loop_slice_seconds: float = 0.010
    max_message_bytes: int = 64 * 1024 * 1024
    grace_seconds: float = 10.0
    limits: Limits = field(default_factory=Limits)
    # the server-wide memory budget in MiB (memory.py): None derives it, 0 disables it
    max_memory_mib: float | None = None
    interceptors: tuple[grpc.aio.ServerInterceptor, ...] = ()
    credentials: grpc.ServerCredentials | None = None
    # the heap frozen after large updates, short GIL turns while a large request is worked
    # (pauses.py): the CLI's choice; a program embedding the server keeps its process as it is
    tune_process: bool = False


class Server:
    """A running server; `port` is the bound port (useful with address ...:0)."""

    def __init__(self, engine: Engine, options: ServerOptions) -> None:
        self.engine = engine
        self.options = options
        self.executor = ThreadPoolExecutor(
            max_workers=options.max_workers, thread_name_prefix="rpc"
        )
        queue = options.limits.max_queue_per_cluster
        if not 0 < queue < options.max_workers:
            # each request waiting for its cluster's lock holds a worker thread
            log.warning(
                "--max-queue-per-cluster %d is not below --max-workers %d: one cluster's "
                "waiting requests can hold every worker thread", queue, options.max_workers,
            )
        memory = MemoryBudget(memory_limits(options.max_memory_mib), options.max_message_bytes)
        self.handler = RequestHandler(engine, options.limits, memory)
        if options.tune_process:
            self.handler.heap = HeapPolicy()
        self.rest_executor = ThreadPoolExecutor(
            max_workers=options.max_workers, thread_name_prefix="rpc-rest"
        )
        self.servicer = ScheduleServicer(
            self.handler, self.executor, options.loop_slice_seconds, self.rest_executor
        )
        self.health = health.aio.HealthServicer()
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(
            target=self._loop.run_forever, name="grpc-aio", daemon=True
        )
        self._loop_thread.start()
        self._stopped = threading.Event()
        self._terminated = threading.Event()
        try:
            self._grpc, self.port = self._on_loop(self._build())
        except BaseException:
            self._close_loop()
            raise

    def _on_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    async def _build(self) -> tuple[grpc.aio.Server, int]:
        options = self.options
        server = grpc.aio.server(
            # the malformed-bytes guard wraps every handler, the ones other interceptors return;
            # it decodes large requests on the request pool, not on the loop
            interceptors=[*options.interceptors, MalformedRequestInterceptor(
                self.executor, turns=ShortTurns() if options.tune_process else None,
            )],
            options=[
                ("grpc.max_receive_message_length", options.max_message_bytes),
                ("grpc.max_send_message_length", options.max_message_bytes),
                ("grpc.so_reuseport", 0),
            ],
        )
        pb_grpc.add_ScheduleServiceServicer_to_server(  # type: ignore[no-untyped-call]
            self.servicer, server
        )
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
        )
        if options.credentials is not None:
            port = server.add_secure_port(options.address, options.credentials)
        else:
            port = server.add_insecure_port(options.address)
        if port == 0:
            raise OSError(f"cannot bind {options.address}")
        return server, port

    def start(self) -> Server:
        self._on_loop(self._start())
        log.info("serving", extra={"address": self.options.address, "port": self.port})
        return self

    async def _start(self) -> None:
        await self._grpc.start()
        for name in (SERVICE_NAME, ""):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    def stop(self, grace: float | None = None) -> None:
        """Stop taking RPCs, let in-flight ones finish within the grace period, then close."""
        if self._stopped.is_set():
            self._terminated.wait()
            return
        self._stopped.set()
        try:
            self._on_loop(self._stop(self.options.grace_seconds if grace is None else grace))
            # work that outlived the grace was told its caller is gone: it ends between pods
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.rest_executor.shutdown(wait=True, cancel_futures=True)
            self.engine.close()
        finally:
            self._close_loop()
            self._terminated.set()

    async def _stop(self, grace: float) -> None:
        await self.health.enter_graceful_shutdown()
        await self._grpc.stop(grace)

    def _close_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._loop_thread.join()
        self._loop.close()

    def wait(self) -> None:
        self._terminated.wait()

    def install_signal_handlers(self) -> None:
        def handler(signum: int, frame: FrameType | None) -> None:
            log.info("signal %s: draining", signum)
            threading.Thread(target=self.stop, daemon=True).start()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)
