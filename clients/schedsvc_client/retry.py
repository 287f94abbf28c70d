"""How the client retries one RPC: exponential backoff with full jitter within a budget, and the
server's RetryInfo delay when it sends one."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

__all__ = ["RetryPolicy", "ResyncError", "RETRYABLE", "retry_delay", "call_with_retry"]

RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with full jitter, bounded by a total budget per call."""

    initial_backoff: float = 0.05
    max_backoff: float = 2.0
    multiplier: float = 2.0
    budget_seconds: float = 60.0
    max_resyncs: int = 5  # per call: a server restarting in a loop must not spin us forever
    replay_chunk: int = 5000  # items per replay message, under the server's per-request limits


class ResyncError(RuntimeError):
    """The server kept changing under us (restarts) beyond the policy's resync budget."""


def retry_delay(err: grpc.RpcError) -> float | None:
    """The server's google.rpc.RetryInfo delay, if the error carries one."""
    try:
        status = rpc_status.from_call(err)
    except (ValueError, AttributeError):
        return None
    for detail in status.details if status is not None else ():
        info = error_details_pb2.RetryInfo()
        if detail.Unpack(info):
            return float(info.retry_delay.ToMilliseconds()) / 1000
    return None


def call_with_retry(
    fn: Callable[..., Any], request: Any, *, policy: RetryPolicy, deadline: float,
    timeout: float | None, metadata: Sequence[tuple[str, str]],
) -> Any:
    """One RPC with backoff on UNAVAILABLE / RESOURCE_EXHAUSTED until `deadline` (monotonic)."""
    backoff = policy.initial_backoff
    while True:
        try:
            return fn(request, timeout=timeout, metadata=metadata)
        except grpc.RpcError as err:
            code = err.code()
            now = time.monotonic()
            if code not in RETRYABLE or now >= deadline:
                raise
            delay = retry_delay(err) if code == grpc.StatusCode.RESOURCE_EXHAUSTED else None
            if delay is None:
                delay = random.uniform(0, backoff)
                backoff = min(backoff * policy.multiplier, policy.max_backoff)
            time.sleep(max(0.0, min(delay, deadline - now)))
