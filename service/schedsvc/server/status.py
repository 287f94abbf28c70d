"""The one place where errors become gRPC status codes, most specific first.

The request handler (request_handler.py) and the work it runs raise domain errors
(schedsvc.errors) and know nothing of gRPC; the servicer (servicer.py) hands whatever reaches
its boundary to `abort`. Anything unexpected is INTERNAL with a generic message (and a log
line), never a traceback to the caller.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, NoReturn, TypeAlias

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from ..errors import (
    Cancelled,
    ConfigError,
    DeadlineExceeded,
    FailedPrecondition,
    InvalidArgument,
    ResourceExhausted,
    SchedsvcError,
)

__all__ = ["abort", "status_for"]

log = logging.getLogger("schedsvc.server")
AioContext: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


@dataclass(frozen=True, slots=True)
class _Plain(grpc.Status):  # type: ignore[misc]
    """A status with no details: no trailing metadata at all (grpc_status always adds some)."""

    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[Any, ...] = ()


def _status(code: int, message: str, details: list[any_pb2.Any] | None = None) -> grpc.Status:
    st = status_pb2.Status(code=code, message=message)
    for d in details or []:
        st.details.append(d)
    return rpc_status.to_status(st)


def _packed(detail: Any) -> list[any_pb2.Any]:
    out = any_pb2.Any()
    out.Pack(detail)
    return [out]


def status_for(exc: BaseException) -> grpc.Status:
    """`exc` as the status its call ends with."""
    if isinstance(exc, InvalidArgument):
        br = error_details_pb2.BadRequest()
        br.field_violations.add(field=exc.field, description=exc.description)
        return _status(code_pb2.INVALID_ARGUMENT, str(exc), _packed(br))
    if isinstance(exc, FailedPrecondition):
        return _status(code_pb2.FAILED_PRECONDITION, str(exc))
    if isinstance(exc, ResourceExhausted):
        ri = error_details_pb2.RetryInfo()
        ri.retry_delay.FromMilliseconds(int(exc.retry_after_seconds * 1000))
        return _status(code_pb2.RESOURCE_EXHAUSTED, str(exc), _packed(ri))
    if isinstance(exc, ConfigError):
        return _status(code_pb2.FAILED_PRECONDITION, str(exc))
    if isinstance(exc, DeadlineExceeded):
        return _Plain(grpc.StatusCode.DEADLINE_EXCEEDED, str(exc))
    if isinstance(exc, Cancelled):
        return _Plain(grpc.StatusCode.CANCELLED, str(exc))
    if isinstance(exc, SchedsvcError):
        return _status(code_pb2.INTERNAL, "internal error")
    if isinstance(exc, MemoryError):
        # the budget (memory.py) refuses before this in all but a race: still the client's
        # cue to back off, never INTERNAL; the engine left no cluster half-changed
        log.warning("out of memory serving a request: answered RESOURCE_EXHAUSTED")
        return status_for(ResourceExhausted(
            "the server ran out of memory for this request: retry later", 2.0))
    log.exception("unexpected error", exc_info=exc)
    return _status(code_pb2.INTERNAL, "internal error")


async def abort(context: AioContext, exc: BaseException) -> NoReturn:
    """End the call with `exc`'s status and its trailing metadata (BadRequest, RetryInfo)."""
    st = status_for(exc)
    if st.trailing_metadata:
        context.set_trailing_metadata(tuple(st.trailing_metadata))
    await context.abort(st.code, st.details)
    raise AssertionError("unreachable")  # abort raises
