"""Bearer-token authentication as a server interceptor.

Every RPC must carry `authorization: Bearer <token>` metadata matching one of the configured
tokens (several, so a token can be rotated without downtime). The health service is exempt, so
load balancers and kubelet probes work without a secret. Comparison is constant-time so the
answer's timing says nothing about how much of a guess was right.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import grpc

__all__ = ["TokenAuthInterceptor", "load_tokens", "HEALTH_PREFIX"]

HEALTH_PREFIX = "/grpc.health.v1.Health/"
_SCHEME = "bearer "


def load_tokens(path: str | Path) -> tuple[str, ...]:
    """Tokens from a file, one per line; blank lines and `#` comments are ignored."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    tokens = tuple(t for t in (line.strip() for line in lines) if t and not t.startswith("#"))
    if not tokens:
        raise ValueError(f"{path}: no token in the file")
    return tokens


_DENIED = "missing or invalid bearer token"


async def _deny(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
    await context.abort(grpc.StatusCode.UNAUTHENTICATED, _DENIED)


async def _deny_stream(
    request: Any, context: grpc.aio.ServicerContext[Any, Any]
) -> AsyncIterator[Any]:
    await context.abort(grpc.StatusCode.UNAUTHENTICATED, _DENIED)
    yield  # pragma: no cover - abort raises first; the yield makes this a generator


def _denying_handler(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    """A handler of the same shape as `handler` that refuses the call."""
    des = handler.request_deserializer
    ser = handler.response_serializer
    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(_deny_stream, des, ser)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(_deny, des, ser)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(_deny_stream, des, ser)
    return grpc.unary_unary_rpc_method_handler(_deny, des, ser)


class TokenAuthInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Refuse with UNAUTHENTICATED any call (but health checks) without a valid bearer token."""

    def __init__(self, tokens: Sequence[str], exempt_prefixes: Iterable[str] = (HEALTH_PREFIX,)):
        if not tokens or any(not t for t in tokens):
            raise ValueError("bearer tokens must be non-empty")
        self._tokens = tuple(t.encode("utf-8") for t in tokens)
        self._exempt = tuple(exempt_prefixes)

    def _authorized(self, metadata: Sequence[tuple[str, str | bytes]] | None) -> bool:
        for key, value in metadata or ():
            if key != "authorization":
                continue
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
            if text[: len(_SCHEME)].lower() != _SCHEME:
                return False
            given = text[len(_SCHEME):].strip().encode("utf-8")
            ok = False
            for token in self._tokens:  # check all, so timing does not reveal which matched
                ok |= hmac.compare_digest(given, token)
            return ok
        return False

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        method: str = handler_call_details.method
        if method.startswith(self._exempt):
            return await continuation(handler_call_details)
        handler = await continuation(handler_call_details)
        if handler is None or self._authorized(handler_call_details.invocation_metadata):
            return handler
        return _denying_handler(handler)
