"""Request bytes decoded without holding the event loop.

grpc's asyncio server calls a method's deserializer on its event loop, and protobuf's parser
holds the GIL for the whole message: a 40 MB UpdateSnapshot stalls every other call (health
included) for about a second. Small messages still decode there (cheaper than any hand-off);
a large one is handed to a thread and parsed in pieces cut at top-level field boundaries. A
message's encoding is the concatenation of its fields, and parsing a concatenation is merging
its parts (repeated fields append, the last scalar wins, messages merge), so the pieces give
exactly the message the whole would. Between pieces the thread lets the loop run.
"""

from __future__ import annotations

import time
from typing import Any

from google.protobuf.message import DecodeError, Message

__all__ = ["INLINE_DECODE_BYTES", "PIECE_BYTES", "Deferred", "decode_in_pieces", "pieces"]

# a message up to this size decodes on the loop (a few ms at most); a larger one on a thread
INLINE_DECODE_BYTES = 256 * 1024
# what one parse call may take without yielding the GIL (a few ms of the loop's time)
PIECE_BYTES = 256 * 1024


class Deferred:
    """Request bytes too large to decode on the loop, and the message class they encode."""

    __slots__ = ("data", "cls")

    def __init__(self, data: bytes, cls: type[Message]) -> None:
        self.data = data
        self.cls = cls


def _varint(data: bytes, i: int) -> tuple[int, int]:
    """The varint at `i` and the index after it; DecodeError past the end or over 10 bytes."""
    out = shift = 0
    for j in range(i, min(i + 10, len(data))):
        b = data[j]
        out |= (b & 0x7F) << shift
        if b < 0x80:
            return out, j + 1
        shift += 7
    raise DecodeError("truncated or overlong varint")


def pieces(data: bytes, size: int = PIECE_BYTES) -> list[tuple[int, int]]:
    """(start, end) spans of `data`, each a whole number of top-level fields and about
    `size` bytes long (longer only when one field is). DecodeError on a malformed frame."""
    out: list[tuple[int, int]] = []
    start = i = 0
    n = len(data)
    while i < n:
        tag, i = _varint(data, i)
        wire = tag & 7
        if wire == 0:
            _, i = _varint(data, i)
        elif wire == 1:
            i += 8
        elif wire == 2:
            length, i = _varint(data, i)
            i += length
        elif wire == 5:
            i += 4
        else:  # groups (3, 4) are not in proto3; anything else is not protobuf
            raise DecodeError(f"unexpected wire type {wire}")
        if i > n:
            raise DecodeError("truncated field")
        if i - start >= size:
            out.append((start, i))
            start = i
    if start < n or not out:
        out.append((start, n))
    return out


def decode_in_pieces(cls: type[Message], data: bytes, size: int = PIECE_BYTES) -> Any:
    """`cls.FromString(data)`, parsed piece by piece, the GIL offered between pieces."""
    msg = cls()
    for start, end in pieces(data, size):
        msg.MergeFromString(data[start:end])
        time.sleep(0)  # let the event loop's thread take the GIL
    return msg
