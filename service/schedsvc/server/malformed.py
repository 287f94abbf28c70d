"""Malformed request bytes refused as INVALID_ARGUMENT, for every service on the server.

grpcio would otherwise answer INTERNAL, which reads as a server bug and invites retries. And
bytes too large to decode on the event loop without stalling it are decoded on a thread
(decode.py) before the method sees them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Executor
from typing import Any

import grpc
from google.protobuf.message import DecodeError, Message

from .decode import INLINE_DECODE_BYTES, LARGE_REQUEST, Deferred, decode_in_pieces
from .handlers import responses_of
from .pauses import ShortTurns

__all__ = ["MalformedRequestInterceptor"]


class _Malformed:
    """Stands in for a request whose bytes did not decode."""

    __slots__ = ("error",)

    def __init__(self, error: str) -> None:
        self.error = error


async def _abort_malformed(context: grpc.aio.ServicerContext[Any, Any], m: _Malformed) -> None:
    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed request message: {m.error}")


def _message_class(des: Callable[[bytes], Any]) -> type[Message] | None:
    """The message class whose FromString `des` is, if it is one (generated stubs pass it)."""
    cls = getattr(des, "__self__", None)
    return cls if isinstance(cls, type) and issubclass(cls, Message) else None


def _lenient(
    des: Callable[[bytes], Any] | None, inline_bytes: int
) -> Callable[[bytes], Any] | None:
    """A decoder that never raises (bad bytes become _Malformed) and leaves messages over
    `inline_bytes` undecoded (Deferred) for a thread to decode."""
    if des is None:
        return None
    cls = _message_class(des)

    def decode(data: bytes) -> Any:
        if cls is not None and 0 < inline_bytes < len(data):
            return Deferred(data, cls)
        try:
            return des(data)
        except (DecodeError, ValueError, RuntimeError) as exc:
            return _Malformed(str(exc) or type(exc).__name__)

    return decode


class _Decoder:
    """Finishes what `_lenient` left: a Deferred request decoded on `executor`, any
    _Malformed one refused (the call aborts INVALID_ARGUMENT)."""

    def __init__(self, executor: Executor | None, turns: ShortTurns | None) -> None:
        self.executor = executor
        self.turns = turns

    async def __call__(self, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        LARGE_REQUEST.set(isinstance(request, Deferred))  # read by the call it is decoded for
        if isinstance(request, Deferred):
            try:
                request = await asyncio.get_running_loop().run_in_executor(
                    self.executor, decode_in_pieces, request.cls, request.data
                )
            except (DecodeError, ValueError, RuntimeError) as exc:
                request = _Malformed(str(exc) or type(exc).__name__)
        if isinstance(request, _Malformed):
            await _abort_malformed(context, request)
        return request


async def _checked_iter(
    it: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any], decoded: _Decoder
) -> AsyncIterator[Any]:
    async for request in it:
        yield await decoded(request, context)


def _checked(
    handler: grpc.RpcMethodHandler, decoded: _Decoder, inline_bytes: int
) -> grpc.RpcMethodHandler:
    """`handler` with a decoder that cannot fail nor stall the loop, and a behaviour that
    refuses bad input."""
    des = _lenient(handler.request_deserializer, inline_bytes)
    ser = handler.response_serializer
    if handler.request_streaming:
        if handler.response_streaming:
            inner_ss = handler.stream_stream

            async def stream_stream(it: Any, context: Any) -> AsyncIterator[Any]:
                requests = _checked_iter(it, context, decoded)
                async for resp in responses_of(inner_ss(requests, context)):
                    yield resp

            return grpc.stream_stream_rpc_method_handler(stream_stream, des, ser)
        inner_su = handler.stream_unary

        async def stream_unary(it: Any, context: Any) -> Any:
            return await inner_su(_checked_iter(it, context, decoded), context)

        return grpc.stream_unary_rpc_method_handler(stream_unary, des, ser)
    if handler.response_streaming:
        inner_us = handler.unary_stream

        async def unary_stream(request: Any, context: Any) -> AsyncIterator[Any]:
            request = await decoded(request, context)
            async for resp in responses_of(inner_us(request, context)):
                yield resp

        return grpc.unary_stream_rpc_method_handler(unary_stream, des, ser)
    inner_uu = handler.unary_unary

    async def unary_unary(request: Any, context: Any) -> Any:
        if decoded.turns is not None and isinstance(request, Deferred):
            with decoded.turns:  # its decode and its work off the loop
                return await inner_uu(await decoded(request, context), context)
        return await inner_uu(await decoded(request, context), context)

    return grpc.unary_unary_rpc_method_handler(unary_unary, des, ser)


class MalformedRequestInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Undecodable request bytes -> INVALID_ARGUMENT, for every service on the server.

    grpc asks interceptors on every call; the registered handlers are the same objects each
    time, so each is wrapped once (a wrap builds closures and a new handler: a cost per call
    that a batch of hinted pods notices). Handlers made per call (another interceptor's
    refusal) are wrapped but not kept once the memo holds MEMO_MAX."""

    MEMO_MAX = 64

    def __init__(
        self, executor: Executor | None = None, inline_bytes: int = INLINE_DECODE_BYTES,
        turns: ShortTurns | None = None,
    ) -> None:
        """Requests over `inline_bytes` (0: none) are decoded on `executor` (None: asyncio's
        default pool), not on the loop; a unary one is worked inside `turns` (pauses.py)."""
        self._decoded = _Decoder(executor, turns)
        self._inline_bytes = inline_bytes
        # id(handler) -> (handler, wrapped); holding the handler keeps its id from being reused
        self._memo: dict[int, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        hit = self._memo.get(id(handler))
        if hit is not None and hit[0] is handler:
            return hit[1]
        wrapped = _checked(handler, self._decoded, self._inline_bytes)
        if len(self._memo) < self.MEMO_MAX:
            self._memo[id(handler)] = (handler, wrapped)
        return wrapped
