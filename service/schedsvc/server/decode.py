"""Request bytes decoded without holding the event loop.

grpc's asyncio server calls a method's deserializer on its event loop, and protobuf's parser
holds the GIL for the whole message: a 40 MB UpdateSnapshot stalls every other call (health
included) for about a second. Small messages still decode there (cheaper than any hand-off);
a large one is handed to a thread and parsed in pieces cut at top-level field boundaries. A
message's encoding is the concatenation of its fields, and parsing a concatenation is merging
its parts (repeated fields append, the last scalar wins, messages merge), so the pieces give
exactly the message the whole would. A single field larger than a piece (one huge pod) is
split the same way one level down, into the sub-message it encodes. Between pieces the thread
lets the loop run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from google.protobuf.message import DecodeError, Message

__all__ = ["INLINE_DECODE_BYTES", "LARGE_REQUEST", "PIECE_BYTES", "Deferred", "decode_in_pieces"]

# a message up to this size decodes on the loop (a few ms at most); a larger one on a thread
INLINE_DECODE_BYTES = 256 * 1024
# what one parse call may take without yielding the GIL (a few ms of the loop's time)
PIECE_BYTES = 256 * 1024
# whether the request the current call is handling was too large to decode on the loop: then
# it is too large to work on there too (even serializing one such pod costs tens of ms)
LARGE_REQUEST: ContextVar[bool] = ContextVar("schedsvc_large_request", default=False)


class Deferred:
    """Request bytes too large to decode on the loop, and the message class they encode."""

    __slots__ = ("data", "cls")

    def __init__(self, data: bytes, cls: type[Message]) -> None:
        self.data = data
        self.cls = cls


# (field number, wire type, field start, payload start, field end)
_Field = tuple[int, int, int, int, int]


def _varint(data: bytes, i: int) -> tuple[int, int]:
    """The varint at `i` and the index after it; DecodeError past the end or over 10 bytes."""
    if i < len(data) and data[i] < 0x80:  # most tags and lengths: one byte
        return data[i], i + 1
    out = shift = 0
    for j in range(i, min(i + 10, len(data))):
        b = data[j]
        out |= (b & 0x7F) << shift
        if b < 0x80:
            return out, j + 1
        shift += 7
    raise DecodeError("truncated or overlong varint")


# upb's nesting limit: messages and groups together, counted from the top-level message
MAX_DEPTH = 100


def _skip(data: bytes, i: int, end: int, wire: int, number: int, depth: int) -> int:
    """The index after the payload of a field of `wire` type whose payload starts at `i`, at
    nesting `depth`; DecodeError on a malformed frame. A group (wire type 3, which upb keeps
    as an unknown field) ends at its matching end tag."""
    if wire == 0:
        _, i = _varint(data, i)
    elif wire == 1:
        i += 8
    elif wire == 2:
        length, i = _varint(data, i)
        i += length
    elif wire == 5:
        i += 4
    elif wire == 3:
        if depth >= MAX_DEPTH:
            raise DecodeError("groups nested too deep")
        while True:
            if i >= end:
                raise DecodeError("truncated group")
            tag, i = _varint(data, i)
            if tag & 7 == 4:
                if tag >> 3 != number:
                    raise DecodeError("mismatched end of group")
                break
            i = _skip(data, i, end, tag & 7, tag >> 3, depth + 1)
    else:  # an end of group without its start (4), or not protobuf at all (6, 7)
        raise DecodeError(f"unexpected wire type {wire}")
    if i > end:
        raise DecodeError("truncated field")
    return i


def _fields(data: bytes, start: int, end: int, depth: int = 0) -> Iterator[_Field]:
    """(field number, wire type, field start, payload start, field end) of each field in
    data[start:end] (a message at nesting `depth`), one at a time: a message of millions of
    tiny fields must not cost an object per field at once. DecodeError on a malformed frame."""
    i = start
    while i < end:
        at = i
        tag, i = _varint(data, i)
        wire = tag & 7
        payload = i
        if wire == 2:
            _, payload = _varint(data, i)
        i = _skip(data, i, end, wire, tag >> 3, depth)
        yield tag >> 3, wire, at, payload, i


def _merge(
    msg: Message, data: bytes, start: int, end: int, size: int, depth: int = 0
) -> None:
    """Merge data[start:end] into `msg` (at nesting `depth`) in pieces of about `size` bytes;
    a message field larger than that is merged the same way into its sub-message."""
    by_number = msg.DESCRIPTOR.fields_by_number
    begun = start
    for number, wire, at, payload, after in _fields(data, start, end, depth):
        fd = by_number.get(number)
        big = wire == 2 and after - at > size and fd is not None
        if big and fd is not None and fd.message_type is not None and not (
            fd.message_type.GetOptions().map_entry
        ):
            if begun < at:
                msg.MergeFromString(data[begun:at])
                time.sleep(0)  # let the event loop's thread take the GIL
            field = getattr(msg, fd.name)
            if hasattr(field, "add"):  # repeated
                sub = field.add()
            else:  # singular: present once it appears, as parsing it whole would make it
                sub = field
                sub.SetInParent()
            _merge(sub, data, payload, after, size, depth + 1)
            begun = after
        elif after - begun >= size:
            msg.MergeFromString(data[begun:after])
            time.sleep(0)
            begun = after
    if begun < end:
        msg.MergeFromString(data[begun:end])


def decode_in_pieces(cls: type[Message], data: bytes, size: int = PIECE_BYTES) -> Any:
    """`cls.FromString(data)`, parsed piece by piece, the GIL offered between pieces."""
    msg = cls()
    _merge(msg, data, 0, len(data), size)
    return msg
