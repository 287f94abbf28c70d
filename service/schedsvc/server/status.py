"""The one place where domain errors become gRPC status codes, most specific first."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from ..errors import (
    ConfigError,
    FailedPrecondition,
    InvalidArgument,
    ResourceExhausted,
    SchedsvcError,
)

__all__ = ["abort_with", "mapped_errors"]

log = logging.getLogger("schedsvc.server")


def _status(code: int, message: str, details: list[any_pb2.Any] | None = None) -> grpc.Status:
    st = status_pb2.Status(code=code, message=message)
    for d in details or []:
        st.details.append(d)
    return rpc_status.to_status(st)


def status_for(exc: BaseException) -> grpc.Status:
    if isinstance(exc, InvalidArgument):
        br = error_details_pb2.BadRequest()
        br.field_violations.add(field=exc.field, description=exc.description)
        detail = any_pb2.Any()
        detail.Pack(br)
        return _status(code_pb2.INVALID_ARGUMENT, str(exc), [detail])
    if isinstance(exc, FailedPrecondition):
        return _status(code_pb2.FAILED_PRECONDITION, str(exc))
    if isinstance(exc, ResourceExhausted):
        ri = error_details_pb2.RetryInfo()
        ri.retry_delay.FromMilliseconds(int(exc.retry_after_seconds * 1000))
        detail = any_pb2.Any()
        detail.Pack(ri)
        return _status(code_pb2.RESOURCE_EXHAUSTED, str(exc), [detail])
    if isinstance(exc, ConfigError):
        return _status(code_pb2.FAILED_PRECONDITION, str(exc))
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


def abort_with(context: grpc.ServicerContext, exc: BaseException) -> NoReturn:
    # what grpc's abort_with_status does, spelled out so grpcio-testing contexts support it
    st = status_for(exc)
    context.set_trailing_metadata(st.trailing_metadata)
    context.abort(st.code, st.details)
    raise AssertionError("unreachable")  # abort raises


@contextmanager
def mapped_errors(context: grpc.ServicerContext) -> Iterator[None]:
    """Run a handler body; any exception leaves as a clean gRPC status, never a traceback.

    Handler bodies raise domain errors and never call context.abort themselves, so nothing
    caught here is an abort already in flight.
    """
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - this is the boundary
        abort_with(context, exc)
