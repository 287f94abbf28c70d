"""Helpers for aio interceptors that wrap method handlers of any shape."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

__all__ = ["responses_of"]


async def responses_of(result: Any) -> AsyncIterator[Any]:
    """The responses of a streaming behaviour's result: an async generator yields them; a
    coroutine writes them itself (context.write, as grpc's health Watch does) and yields
    nothing here."""
    if hasattr(result, "__aiter__"):
        async for resp in result:
            yield resp
    else:
        await result
