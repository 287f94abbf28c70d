"""MalformedRequestInterceptor wraps each registered handler once, not once per call."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from schedsvc.server.malformed import MalformedRequestInterceptor


def _handler() -> grpc.RpcMethodHandler:
    async def behaviour(request: Any, context: Any) -> Any:
        return request

    return grpc.unary_unary_rpc_method_handler(behaviour, bytes, bytes)


def _intercept(icpt: MalformedRequestInterceptor, handler: grpc.RpcMethodHandler) -> Any:
    async def continuation(_details: Any) -> grpc.RpcMethodHandler:
        return handler

    return asyncio.run(icpt.intercept_service(continuation, None))


def test_a_registered_handler_is_wrapped_once_and_still_refuses_bad_bytes() -> None:
    icpt = MalformedRequestInterceptor()
    h = _handler()
    first = _intercept(icpt, h)
    assert first is not h
    assert _intercept(icpt, h) is first
    # the wrapped decoder never raises: bad bytes become the malformed marker
    assert type(first.request_deserializer(b"ok")).__name__ == "bytes"
    assert first.request_deserializer is not h.request_deserializer


def test_per_call_handlers_do_not_grow_the_memo_past_its_bound() -> None:
    icpt = MalformedRequestInterceptor()
    for _ in range(MalformedRequestInterceptor.MEMO_MAX + 50):
        _intercept(icpt, _handler())
    assert len(icpt._memo) == MalformedRequestInterceptor.MEMO_MAX
    # a handler seen after the bound is reached is wrapped afresh each call, never stale
    late = _handler()
    a, b = _intercept(icpt, late), _intercept(icpt, late)
    assert a is not b and a is not late
