"""Admission control: bounded in-flight Schedule work per cluster.

A cluster schedules one batch at a time (its lock), so requests beyond the one running wait in
line, each holding its decoded pods in memory. Counting queued + running requests per cluster and
refusing the excess with RESOURCE_EXHAUSTED (and a retry delay) keeps that line, and the memory
behind it, bounded, and tells a client to back off instead of piling up behind a slow cluster.
Different clusters have separate counters, so one busy cluster never starves another.

Bytes that do not decode as the request message are refused here too, as INVALID_ARGUMENT:
grpcio would otherwise answer INTERNAL, which reads as a server bug and invites retries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from ..errors import ResourceExhausted

__all__ = ["Admission", "MalformedRequestInterceptor"]


class Admission:
    """Per-cluster counters of admitted requests; `max_per_cluster` <= 0 disables the bound."""

    def __init__(self, max_per_cluster: int, retry_after_seconds: float = 0.5) -> None:
        self.max_per_cluster = max_per_cluster
        self.retry_after_seconds = retry_after_seconds
        self._lock = threading.Lock()
        # only clusters with work in flight have an entry, so this stays as small as the work
        self._in_flight: dict[str, int] = {}

    def in_flight(self, cluster: str) -> int:
        """Requests admitted for `cluster` and not yet finished (queued or running)."""
        with self._lock:
            return self._in_flight.get(cluster, 0)

    @contextmanager
    def admit(self, cluster: str) -> Iterator[None]:
        """Hold a slot of `cluster` for the body; raise ResourceExhausted when none is free."""
        with self._lock:
            n = self._in_flight.get(cluster, 0)
            if 0 < self.max_per_cluster <= n:
                raise ResourceExhausted(
                    f"cluster {cluster!r} has {n} schedule requests in flight "
                    f"(limit {self.max_per_cluster}): retry later",
                    self.retry_after_seconds,
                )
            self._in_flight[cluster] = n + 1
        try:
            yield
        finally:
            with self._lock:
                left = self._in_flight[cluster] - 1
                if left:
                    self._in_flight[cluster] = left
                else:
                    del self._in_flight[cluster]


class _Malformed:
    """Stands in for a request whose bytes did not decode."""

    __slots__ = ("error",)

    def __init__(self, error: str) -> None:
        self.error = error


def _abort_malformed(context: grpc.ServicerContext, m: _Malformed) -> None:
    context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed request message: {m.error}")


def _lenient(des: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if des is None:
        return None

    def decode(data: bytes) -> Any:
        try:
            return des(data)
        except (DecodeError, ValueError, RuntimeError) as exc:
            return _Malformed(str(exc) or type(exc).__name__)

    return decode


def _checked_iter(it: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
    for request in it:
        if isinstance(request, _Malformed):
            _abort_malformed(context, request)
        yield request


def _checked(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    """`handler` with a decoder that cannot fail and a behaviour that refuses bad input."""
    des = _lenient(handler.request_deserializer)
    ser = handler.response_serializer
    if handler.request_streaming:
        inner = handler.stream_stream or handler.stream_unary

        def streaming(it: Iterator[Any], context: grpc.ServicerContext) -> Any:
            return inner(_checked_iter(it, context), context)

        if handler.response_streaming:
            return grpc.stream_stream_rpc_method_handler(streaming, des, ser)
        return grpc.stream_unary_rpc_method_handler(streaming, des, ser)
    inner1 = handler.unary_stream or handler.unary_unary

    def unary(request: Any, context: grpc.ServicerContext) -> Any:
        if isinstance(request, _Malformed):
            _abort_malformed(context, request)
        return inner1(request, context)

    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(unary, des, ser)
    return grpc.unary_unary_rpc_method_handler(unary, des, ser)


class MalformedRequestInterceptor(grpc.ServerInterceptor):  # type: ignore[misc]
    """Undecodable request bytes -> INVALID_ARGUMENT, for every service on the server."""

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        handler = continuation(handler_call_details)
        return None if handler is None else _checked(handler)
