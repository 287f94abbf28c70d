"""gRPC server metrics under go-grpc-prometheus's names, from a server interceptor.

grpc_server_started_total, grpc_server_handled_total{grpc_code}, grpc_server_msg_received_total,
grpc_server_msg_sent_total and the grpc_server_handling_seconds histogram, each labelled
grpc_type, grpc_service and grpc_method (and nothing per request), so the dashboards and alerts
written for Go services apply unchanged. Codes are spelled as Go's codes.Code.String().
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias

import grpc
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram

from ..server.handlers import responses_of

__all__ = ["GrpcMetricsInterceptor", "go_code_name"]

Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"

# client_golang's DefBuckets, which go-grpc-prometheus uses for handling time
_DEF_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

_GO_NAMES = {
    grpc.StatusCode.OK: "OK",
    grpc.StatusCode.CANCELLED: "Canceled",
    grpc.StatusCode.UNKNOWN: "Unknown",
    grpc.StatusCode.INVALID_ARGUMENT: "InvalidArgument",
    grpc.StatusCode.DEADLINE_EXCEEDED: "DeadlineExceeded",
    grpc.StatusCode.NOT_FOUND: "NotFound",
    grpc.StatusCode.ALREADY_EXISTS: "AlreadyExists",
    grpc.StatusCode.PERMISSION_DENIED: "PermissionDenied",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "ResourceExhausted",
    grpc.StatusCode.FAILED_PRECONDITION: "FailedPrecondition",
    grpc.StatusCode.ABORTED: "Aborted",
    grpc.StatusCode.OUT_OF_RANGE: "OutOfRange",
    grpc.StatusCode.UNIMPLEMENTED: "Unimplemented",
    grpc.StatusCode.INTERNAL: "Internal",
    grpc.StatusCode.UNAVAILABLE: "Unavailable",
    grpc.StatusCode.DATA_LOSS: "DataLoss",
    grpc.StatusCode.UNAUTHENTICATED: "Unauthenticated",
}


def go_code_name(code: grpc.StatusCode | None) -> str:
    """Go's spelling of a status code; None (nothing set) is OK."""
    return "OK" if code is None else _GO_NAMES.get(code, "Unknown")


def _grpc_type(handler: grpc.RpcMethodHandler) -> str:
    if handler.request_streaming and handler.response_streaming:
        return "bidi_stream"
    if handler.request_streaming:
        return "client_stream"
    if handler.response_streaming:
        return "server_stream"
    return "unary"


class _Metrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ["grpc_type", "grpc_service", "grpc_method"]
        self.started = Counter(
            "grpc_server_started", "Total number of RPCs started on the server.",
            labels, registry=registry,
        )
        self.handled = Counter(
            "grpc_server_handled",
            "Total number of RPCs completed on the server, regardless of success or failure.",
            [*labels, "grpc_code"], registry=registry,
        )
        self.received = Counter(
            "grpc_server_msg_received", "Total number of RPC stream messages received on the "
            "server.", labels, registry=registry,
        )
        self.sent = Counter(
            "grpc_server_msg_sent", "Total number of gRPC stream messages sent by the server.",
            labels, registry=registry,
        )
        self.seconds = Histogram(
            "grpc_server_handling_seconds",
            "Histogram of response latency (seconds) of gRPC that had been application-level "
            "handled by the server.",
            labels, buckets=_DEF_BUCKETS, registry=registry,
        )


class _Call:
    """One RPC's label values and clock; `done` records it exactly once."""

    __slots__ = ("m", "labels", "started", "finished")

    def __init__(self, m: _Metrics, labels: tuple[str, str, str]) -> None:
        self.m = m
        self.labels = labels
        self.started = time.perf_counter()
        self.finished = False
        m.started.labels(*labels).inc()

    def done(self, context: Context, error: BaseException | None) -> None:
        if self.finished:
            return
        self.finished = True
        code = _code_of(context)
        if code is None and isinstance(error, (GeneratorExit, asyncio.CancelledError)):
            code = grpc.StatusCode.CANCELLED  # the stream was closed: the client went away
        elif code is None and error is not None:
            code = grpc.StatusCode.UNKNOWN  # grpc answers an unhandled exception so
        self.m.handled.labels(*self.labels, go_code_name(code)).inc()
        self.m.seconds.labels(*self.labels).observe(time.perf_counter() - self.started)


def _code_of(context: Context) -> grpc.StatusCode | None:
    code = context.code()  # grpcio >= 1.38
    return code if isinstance(code, grpc.StatusCode) else None


class GrpcMetricsInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Counts every RPC: started, handled by code, messages each way, handling time."""

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self._m = _Metrics(registry)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        service, _, method = handler_call_details.method.lstrip("/").rpartition("/")
        kind = _grpc_type(handler)
        labels = (kind, service, method)
        m = self._m
        if kind == "unary":
            return _wrap_unary_unary(handler, m, labels)
        if kind == "server_stream":
            return _wrap_unary_stream(handler, m, labels)
        if kind == "client_stream":
            return _wrap_stream_unary(handler, m, labels)
        return _wrap_stream_stream(handler, m, labels)


async def _counted_requests(it: AsyncIterator[Any], call: _Call) -> AsyncIterator[Any]:
    counter = call.m.received.labels(*call.labels)
    async for msg in it:
        counter.inc()
        yield msg


async def _counted_responses(result: Any, call: _Call, context: Context) -> AsyncIterator[Any]:
    counter = call.m.sent.labels(*call.labels)
    try:
        async for msg in responses_of(result):
            counter.inc()
            yield msg
    except BaseException as exc:
        call.done(context, exc)
        raise
    finally:
        # normal end, or the generator closed when the client went away
        call.done(context, None)


async def _answered(call: _Call, context: Context, handle: Awaitable[Any]) -> Any:
    """Await a handler with one response: the call ends with its status, the response
    counted."""
    try:
        resp = await handle
    except BaseException as exc:
        call.done(context, exc)
        raise
    call.done(context, None)
    call.m.sent.labels(*call.labels).inc()
    return resp


def _wrap_unary_unary(
    h: grpc.RpcMethodHandler, m: _Metrics, labels: tuple[str, str, str]
) -> grpc.RpcMethodHandler:
    inner = h.unary_unary

    async def behavior(request: Any, context: Context) -> Any:
        call = _Call(m, labels)
        m.received.labels(*labels).inc()
        return await _answered(call, context, inner(request, context))

    return grpc.unary_unary_rpc_method_handler(
        behavior, h.request_deserializer, h.response_serializer
    )


def _wrap_unary_stream(
    h: grpc.RpcMethodHandler, m: _Metrics, labels: tuple[str, str, str]
) -> grpc.RpcMethodHandler:
    inner = h.unary_stream

    async def behavior(request: Any, context: Context) -> AsyncIterator[Any]:
        call = _Call(m, labels)
        m.received.labels(*labels).inc()
        async for resp in _counted_responses(inner(request, context), call, context):
            yield resp

    return grpc.unary_stream_rpc_method_handler(
        behavior, h.request_deserializer, h.response_serializer
    )


def _wrap_stream_unary(
    h: grpc.RpcMethodHandler, m: _Metrics, labels: tuple[str, str, str]
) -> grpc.RpcMethodHandler:
    inner = h.stream_unary

    async def behavior(requests: AsyncIterator[Any], context: Context) -> Any:
        call = _Call(m, labels)
        return await _answered(call, context, inner(_counted_requests(requests, call), context))

    return grpc.stream_unary_rpc_method_handler(
        behavior, h.request_deserializer, h.response_serializer
    )


def _wrap_stream_stream(
    h: grpc.RpcMethodHandler, m: _Metrics, labels: tuple[str, str, str]
) -> grpc.RpcMethodHandler:
    inner = h.stream_stream

    async def behavior(requests: AsyncIterator[Any], context: Context) -> AsyncIterator[Any]:
        call = _Call(m, labels)
        results = inner(_counted_requests(requests, call), context)
        async for resp in _counted_responses(results, call, context):
            yield resp

    return grpc.stream_stream_rpc_method_handler(
        behavior, h.request_deserializer, h.response_serializer
    )
