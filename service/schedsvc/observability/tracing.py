"""OpenTelemetry traces: a span per RPC and per scheduling cycle, with Filter/Score/BatchHint
children, exported by OTLP as the standard OTEL_* environment variables configure it.

Off by default. `schedsvc serve --tracing` (or SCHEDSVC_TRACING=true) or
OTEL_TRACES_EXPORTER=otlp|console turns it on; OTEL_SDK_DISABLED=true or
OTEL_TRACES_EXPORTER=none keeps it off whatever else is set. When off, nothing here is imported
and the engine keeps its null observer: no cost.

The engine times its phases itself (one perf_counter pair each) and hands the observer the
cycle's record at its end, on the thread that ran it: the cycle span, back-dated to the
attempt's start, parents to the RPC span that the gRPC instrumentation made current on that
thread, and each phase becomes a child span back-dated by its duration. Spans never carry node
names, only counts.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import grpc
from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.trace import Status, StatusCode, Tracer

from ..engine.cycle_context import CycleRecord

__all__ = ["TracingObserver", "Tracing", "setup_tracing", "CYCLE_SPAN"]

CYCLE_SPAN = "schedsvc.SchedulingCycle"
_HEALTH_SERVICE = "grpc.health.v1.Health"


class TracingObserver:
    """The engine's Observer as spans: a cycle's record becomes its span, opened back-dated to
    the attempt's start under the span current on the cycle's thread (the RPC span the gRPC
    instrumentation made current), with each phase a child back-dated by its duration."""

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer

    def cycle(self, rec: CycleRecord) -> None:
        now, clock = time.time_ns(), time.perf_counter()

        def wall(at: float) -> int:
            return now - int((clock - at) * 1e9)

        start = wall(rec.started)
        span = self._tracer.start_span(
            CYCLE_SPAN, start_time=start,
            attributes={"schedsvc.pod.uid": rec.pod_uid, "schedsvc.profile": rec.profile},
        )
        ctx = trace.set_span_in_context(span)

        def child(name: str, seconds: float, ended: float, attrs: dict[str, str | bool]) -> None:
            end = wall(ended)
            s = self._tracer.start_span(
                name, context=ctx, start_time=max(start, end - int(seconds * 1e9)),
                attributes=attrs,
            )
            s.end(end_time=end)

        if rec.hint is not None:
            child("BatchHint", rec.hint[1], rec.hint[2], {"schedsvc.hinted": rec.hint[0]})
        for point, status, seconds, ended in rec.points:
            child(point, seconds, ended, {"schedsvc.status": status})
        if rec.store is not None:
            child("BatchStore", rec.store[0], rec.store[1], {})
        for what, _, value in rec.events:
            if what != "batch_attempt":
                span.add_event(what, {"reason": value} if value else {})
        span.set_attributes({
            "schedsvc.outcome": rec.outcome,
            "schedsvc.cycle": rec.cycle,
            "schedsvc.nodes.evaluated": rec.nodes_evaluated,
            "schedsvc.nodes.feasible": rec.nodes_feasible,
            "schedsvc.batched": rec.batched,
        })
        if rec.outcome == "ERROR":
            span.set_status(Status(StatusCode.ERROR, "scheduling attempt failed"))
        span.end(end_time=now)

    # outside a cycle (Explain, an update's flush, a filter piece on a worker): no span
    def batch_flush(self, profile: str, reason: str) -> None:
        pass

    def extension_point(self, profile: str, point: str, status: str, seconds: float) -> None:
        pass

    def plugin_duration(self, plugin: str, point: str, status: str, seconds: float) -> None:
        pass

    def pod_group(self, profile: str, result: str, seconds: float) -> None:
        pass  # each member's cycle has its span


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
