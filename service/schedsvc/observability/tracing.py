"""OpenTelemetry traces: a span per RPC and per scheduling cycle, with Filter/Score/BatchHint
children, exported by OTLP as the standard OTEL_* environment variables configure it.

Off by default. `schedsvc serve --tracing` (or SCHEDSVC_TRACING=true) or
OTEL_TRACES_EXPORTER=otlp|console turns it on; OTEL_SDK_DISABLED=true or
OTEL_TRACES_EXPORTER=none keeps it off whatever else is set. When off, nothing here is imported
and the engine keeps its null observer: no cost.

The engine times its phases itself (one perf_counter pair each) and reports seconds when a phase
ends; the cycle span is opened when the attempt starts, so it parents to the RPC span that the
gRPC instrumentation made current on the handler thread, and each phase becomes a child span
back-dated by its duration. Spans never carry node names, only counts.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import grpc
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.trace import Span, Status, StatusCode, Tracer

__all__ = ["TracingObserver", "Tracing", "setup_tracing", "CYCLE_SPAN"]

CYCLE_SPAN = "schedsvc.SchedulingCycle"
_HEALTH_SERVICE = "grpc.health.v1.Health"


class _CycleLocal(threading.local):
    span: Span | None = None
    ctx: Context | None = None


class TracingObserver:
    """The engine's Observer as spans. A cluster runs its cycles on one thread at a time and
    each cycle starts and ends on that thread, so the open cycle span is thread-local."""

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer
        self._local = _CycleLocal()

    # cycle ----------------------------------------------------------------------------------
    def cycle_started(self, profile: str, pod_uid: str) -> None:
        local = self._local
        if local.span is not None:  # never left open by a missed finish; close it honestly
            local.span.set_status(Status(StatusCode.ERROR, "cycle not finished"))
            local.span.end()
        span = self._tracer.start_span(
            CYCLE_SPAN, attributes={"schedsvc.pod.uid": pod_uid, "schedsvc.profile": profile}
        )
        local.span = span
        local.ctx = trace.set_span_in_context(span)

    def cycle_finished(
        self, profile: str, outcome: str, cycle: int, nodes_evaluated: int, nodes_feasible: int,
        batched: bool,
    ) -> None:
        local = self._local
        span = local.span
        if span is None:
            return
        local.span = None
        local.ctx = None
        span.set_attributes({
            "schedsvc.outcome": outcome,
            "schedsvc.cycle": cycle,
            "schedsvc.nodes.evaluated": nodes_evaluated,
            "schedsvc.nodes.feasible": nodes_feasible,
            "schedsvc.batched": batched,
        })
        if outcome == "ERROR":
            span.set_status(Status(StatusCode.ERROR, "scheduling attempt failed"))
        span.end()

    def _child(self, name: str, seconds: float, attributes: dict[str, str | bool]) -> None:
        """A finished phase of the open cycle as a child span; nothing outside a cycle
        (Explain, or a plugin on a filter worker thread)."""
        ctx = self._local.ctx
        if ctx is None:
            return
        end = time.time_ns()
        child = self._tracer.start_span(
            name, context=ctx, start_time=end - int(seconds * 1e9), attributes=attributes
        )
        child.end(end_time=end)

    # phases ---------------------------------------------------------------------------------
    def extension_point(self, profile: str, point: str, status: str, seconds: float) -> None:
        self._child(point, seconds, {"schedsvc.status": status})

    def hint_duration(self, profile: str, hinted: bool, seconds: float) -> None:
        self._child("BatchHint", seconds, {"schedsvc.hinted": hinted})

    def store_duration(self, profile: str, seconds: float) -> None:
        self._child("BatchStore", seconds, {})

    def batch_flush(self, profile: str, reason: str) -> None:
        span = self._local.span
        if span is not None:
            span.add_event("batch_flush", {"reason": reason})

    def batch_skipped(self, profile: str, reason: str) -> None:
        span = self._local.span
        if span is not None:
            span.add_event("batch_skipped", {"reason": reason})

    def nomination_refused(self, profile: str) -> None:
        span = self._local.span
        if span is not None:
            span.add_event("nomination_refused", {})

    # metrics only ---------------------------------------------------------------------------
    def scheduled(self, profile: str, result: str, seconds: float) -> None:
        pass

    def batch_attempt(self, profile: str, result: str) -> None:
        pass

    def plugin_duration(self, plugin: str, point: str, status: str, seconds: float) -> None:
        pass


@dataclass(frozen=True, slots=True)
class Tracing:
    """What the server needs: the engine's observer, the RPC interceptor, and shutdown."""

    provider: TracerProvider
    observer: TracingObserver
    interceptor: grpc.aio.ServerInterceptor

    def shutdown(self) -> None:
        """Flush spans still queued, then stop exporting."""
        self.provider.shutdown()


def _resource() -> Resource:
    """OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME as the SDK reads them; "schedsvc" when
    they name no service."""
    resource = Resource.create()
    name = str(resource.attributes.get(SERVICE_NAME, ""))
    if not name or name.startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "schedsvc"}))
    return resource


def _exporter_from_env() -> SpanExporter:
    if os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "console":
        return ConsoleSpanExporter()
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    # endpoint, headers, TLS, timeout, compression: OTEL_EXPORTER_OTLP_[TRACES_]* variables
    return OTLPSpanExporter()


def setup_tracing(exporter: SpanExporter | None = None, *, batch: bool = True) -> Tracing:
    """A tracer provider of our own (the global one is left alone), exporting to `exporter`,
    or as OTEL_* configures when None. `batch=False` exports each span as it ends (tests)."""
    from opentelemetry.instrumentation.grpc import aio_server_interceptor, filters

    provider = TracerProvider(resource=_resource())
    exp = exporter if exporter is not None else _exporter_from_env()
    provider.add_span_processor(BatchSpanProcessor(exp) if batch else SimpleSpanProcessor(exp))
    interceptor = aio_server_interceptor(  # type: ignore[no-untyped-call]
        tracer_provider=provider, filter_=filters.negate(filters.service_name(_HEALTH_SERVICE))
    )
    tracer = provider.get_tracer("schedsvc")
    return Tracing(provider, TracingObserver(tracer), interceptor)
