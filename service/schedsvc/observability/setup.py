"""Observability as `schedsvc serve` assembles it from its flags: which observers the engine
gets, which interceptors the server gets, and what to flush on the way out.

Importing this module imports neither prometheus nor OpenTelemetry; each is imported only
when switched on, so a server with both off pays nothing for them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import grpc

from ..engine.observer import Observer
from .fanout import combine

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from ..engine.scheduler import Engine
    from ..server.simulation_stats import SimulationCounts

# the server's counters by name, read at scrape time
ServerCounts = Callable[[], Mapping[str, int]]
# the simulations' counts (server/simulation_stats.py), read at scrape time
SimulationReader = Callable[[], "SimulationCounts"]

__all__ = ["Observability", "setup_observability", "tracing_requested"]


def tracing_requested(flag: bool, env: Mapping[str, str] = os.environ) -> bool:
    """--tracing or OTEL_TRACES_EXPORTER=otlp|console, unless OTEL_SDK_DISABLED=true or
    OTEL_TRACES_EXPORTER=none."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return flag or exporter in ("otlp", "console")


@dataclass(slots=True)
class Observability:
    observer: Observer
    interceptors: tuple[grpc.aio.ServerInterceptor, ...] = ()
    metrics_port: int | None = None
    _on_engine: list[Callable[[Engine], None]] = field(default_factory=list)
    _on_shutdown: list[Callable[[], None]] = field(default_factory=list)
    _on_server: list[Callable[[ServerCounts, SimulationReader | None], None]] = field(
        default_factory=list)

    def attach(self, engine: Engine) -> None:
        """Scrape-time collectors that read the engine (cache sizes per cluster)."""
        for f in self._on_engine:
            f(engine)

    def attach_server(
        self, counts: ServerCounts, simulations: SimulationReader | None = None
    ) -> None:
        """Scrape-time collectors that read the server (loop slices, work in flight, streams)
        through `counts` (server/servicer.py ScheduleServicer.counts), and its simulations
        through `simulations` (RequestHandler.simulations.counts)."""
        for f in self._on_server:
            f(counts, simulations)

    def shutdown(self) -> None:
        """Flush what is queued (spans) before the process exits."""
        for f in self._on_shutdown:
            f()


def _register_server(
    registry: CollectorRegistry, counts: ServerCounts, simulations: SimulationReader | None
) -> None:
    from .metrics import ServerCollector
    from .simulation_metrics import SimulationCollector

    registry.register(ServerCollector(counts))
    if simulations is not None:
        registry.register(SimulationCollector(simulations))


def setup_observability(
    metrics_address: str, tracing: bool, *, cluster_series: int = 100
) -> Observability:
    """Prometheus on `metrics_address` (off when empty) and OTLP tracing when `tracing`;
    per-cluster series for at most `cluster_series` clusters."""
    observers: list[Observer] = []
    interceptors: list[grpc.aio.ServerInterceptor] = []
    on_engine: list[Callable[[Engine], None]] = []
    on_shutdown: list[Callable[[], None]] = []
    on_server: list[Callable[[ServerCounts, SimulationReader | None], None]] = []
    port: int | None = None
    if metrics_address:
        from .grpc_metrics import GrpcMetricsInterceptor
        from .metrics import (
            ClusterCollector,
            PrometheusObserver,
            new_registry,
            start_metrics_server,
        )

        registry = new_registry()
        observers.append(PrometheusObserver(registry))
        # outermost, so calls refused by later interceptors (auth) are counted too
        interceptors.append(GrpcMetricsInterceptor(registry))
        on_engine.append(
            lambda engine: registry.register(ClusterCollector(engine, cluster_series))
        )
        on_server.append(lambda counts, sims: _register_server(registry, counts, sims))
        port = start_metrics_server(metrics_address, registry)
    if tracing:
        from .tracing import setup_tracing

        t = setup_tracing()
        observers.append(t.observer)
        interceptors.append(t.interceptor)
        on_shutdown.append(t.shutdown)
    return Observability(
        combine(observers), tuple(interceptors), port, on_engine, on_shutdown, on_server
    )
