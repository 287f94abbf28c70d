"""Assemble and run the gRPC server: service, health, reflection, graceful shutdown."""

from __future__ import annotations

import logging
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import FrameType

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from ..engine.scheduler import Engine
from ..v1 import schedule_pb2 as pb
from ..v1 import schedule_pb2_grpc as pb_grpc
from .admission import MalformedRequestInterceptor
from .servicer import Limits, ScheduleServicer

__all__ = ["ServerOptions", "Server", "SERVICE_NAME"]

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["ScheduleService"].full_name
log = logging.getLogger("schedsvc.server")


@dataclass(frozen=True, slots=True)
class ServerOptions:
    address: str = "127.0.0.1:50051"
    max_workers: int = 16
    max_message_bytes: int = 64 * 1024 * 1024
    grace_seconds: float = 10.0
    limits: Limits = field(default_factory=Limits)
    interceptors: tuple[grpc.ServerInterceptor, ...] = ()
    credentials: grpc.ServerCredentials | None = None


class Server:
    """A running server; `port` is the bound port (useful with address ...:0)."""

    def __init__(self, engine: Engine, options: ServerOptions) -> None:
        self.engine = engine
        self.options = options
        self._grpc = grpc.server(
            ThreadPoolExecutor(max_workers=options.max_workers, thread_name_prefix="rpc"),
            # the malformed-bytes guard wraps every handler, the ones other interceptors return too
            interceptors=[*options.interceptors, MalformedRequestInterceptor()],
            options=[
                ("grpc.max_receive_message_length", options.max_message_bytes),
                ("grpc.max_send_message_length", options.max_message_bytes),
                ("grpc.so_reuseport", 0),
            ],
            maximum_concurrent_rpcs=options.max_workers * 8,
        )
        self.servicer = ScheduleServicer(engine, options.limits)
        pb_grpc.add_ScheduleServiceServicer_to_server(  # type: ignore[no-untyped-call]
            self.servicer, self._grpc
        )
        self.health = health.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self._grpc)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), self._grpc
        )
        if options.credentials is not None:
            self.port = self._grpc.add_secure_port(options.address, options.credentials)
        else:
            self.port = self._grpc.add_insecure_port(options.address)
        if self.port == 0:
            raise OSError(f"cannot bind {options.address}")
        self._stopped = threading.Event()

    def start(self) -> Server:
        self._grpc.start()
        for name in (SERVICE_NAME, ""):
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("serving", extra={"address": self.options.address, "port": self.port})
        return self

    def stop(self, grace: float | None = None) -> None:
        """Stop taking RPCs, let in-flight ones finish within the grace period, then close."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self.health.enter_graceful_shutdown()
        done = self._grpc.stop(self.options.grace_seconds if grace is None else grace)
        done.wait()
        self.engine.close()

    def wait(self) -> None:
        self._grpc.wait_for_termination()

    def install_signal_handlers(self) -> None:
        def handler(signum: int, frame: FrameType | None) -> None:
            log.info("signal %s: draining", signum)
            threading.Thread(target=self.stop, daemon=True).start()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)
