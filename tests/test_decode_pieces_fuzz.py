"""decode_in_pieces is FromString, for any bytes (review of issue 30, chunked decoding).

Random messages of every request type (built from the descriptors: every field, maps, proto3
optionals, nested messages), concatenated with each other (a singular message appearing twice,
a scalar twice: last wins, messages merge) and with unknown fields, cut into pieces of random
sizes; and random mutations of those bytes. Both decoders must agree on success or failure
and, on success, on the message (its unknown fields included).
"""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.server.decode import decode_in_pieces
from schedsvc.v1 import schedule_pb2 as pb

FD = FieldDescriptor
TYPES: list[type[Message]] = [
    pb.UpdateSnapshotRequest, pb.ScheduleRequest, pb.ExplainRequest, pb.Pod,
]

_text = st.text(alphabet="ab/.-=_\u00e9", max_size=6)


def _scalar(fd: FieldDescriptor) -> st.SearchStrategy[Any]:
    t = fd.type
    if t in (FD.TYPE_STRING,):
        return _text
    if t == FD.TYPE_BYTES:
        return st.binary(max_size=6)
    if t == FD.TYPE_BOOL:
        return st.booleans()
    if t in (FD.TYPE_INT32, FD.TYPE_SINT32, FD.TYPE_SFIXED32):
        return st.integers(-(2**31), 2**31 - 1)
    if t in (FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_SFIXED64):
        return st.integers(-(2**63), 2**63 - 1)
    if t in (FD.TYPE_UINT32, FD.TYPE_FIXED32):
        return st.integers(0, 2**32 - 1)
    if t in (FD.TYPE_UINT64, FD.TYPE_FIXED64):
        return st.integers(0, 2**64 - 1)
    if t in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
        return st.floats(allow_nan=False, width=32)
    if t == FD.TYPE_ENUM:
        return st.sampled_from([v.number for v in fd.enum_type.values])
    raise AssertionError(t)


@st.composite
def _fill(draw: st.DrawFn, msg: Message, depth: int) -> Message:
    d: Descriptor = msg.DESCRIPTOR
    for fd in d.fields:
        if not draw(st.booleans()):
            continue
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            kf, vf = fd.message_type.fields_by_name["key"], fd.message_type.fields_by_name["value"]
            if vf.message_type is not None:
                continue
            m = getattr(msg, fd.name)
            for k, v in draw(st.dictionaries(_scalar(kf), _scalar(vf), max_size=3)).items():
                m[k] = v
        elif fd.message_type is not None:
            if depth <= 0:
                continue
            if fd.is_repeated:
                for _ in range(draw(st.integers(0, 2))):
                    draw(_fill(getattr(msg, fd.name).add(), depth - 1))
            else:
                sub = getattr(msg, fd.name)
                sub.SetInParent()
                draw(_fill(sub, depth - 1))
        elif fd.is_repeated:
            getattr(msg, fd.name).extend(draw(st.lists(_scalar(fd), max_size=3)))
        else:
            setattr(msg, fd.name, draw(_scalar(fd)))
    return msg


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


# well-formed unknown fields (numbers no request type uses) of every wire type
_unknown = st.one_of(
    st.integers(0, 2**64 - 1).map(lambda v: _varint(900 << 3) + _varint(v)),
    st.binary(min_size=8, max_size=8).map(lambda b: _varint(901 << 3 | 1) + b),
    st.binary(max_size=20).map(lambda b: _varint(902 << 3 | 2) + _varint(len(b)) + b),
    st.binary(min_size=4, max_size=4).map(lambda b: _varint(903 << 3 | 5) + b),
)


@st.composite
def _encoded(draw: st.DrawFn) -> tuple[type[Message], bytes]:
    cls = draw(st.sampled_from(TYPES))
    parts = []
    for _ in range(draw(st.integers(1, 3))):  # a concatenation is a merge
        parts.append(draw(_fill(cls(), 4)).SerializeToString())
        parts.extend(draw(st.lists(_unknown, max_size=2)))
    return cls, b"".join(parts)


def _outcome(fn: Any) -> tuple[str, bytes]:
    try:
        msg = fn()
    except (DecodeError, ValueError, RuntimeError):
        return ("error", b"")
    return ("ok", msg.SerializeToString(deterministic=True))


def _agree(cls: type[Message], data: bytes, size: int) -> None:
    want = _outcome(lambda: cls.FromString(data))
    got = _outcome(lambda: decode_in_pieces(cls, data, size))
    assert got == want, (cls.__name__, data.hex(), size)


_settings = settings(max_examples=300, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_settings
@given(enc=_encoded(), size=st.integers(1, 64))
def test_any_message_in_any_pieces_is_the_whole(
    enc: tuple[type[Message], bytes], size: int,
) -> None:
    cls, data = enc
    _agree(cls, data, size)


@_settings
@given(enc=_encoded(), size=st.integers(1, 64), data=st.data())
def test_mutated_bytes_decode_or_fail_alike(
    enc: tuple[type[Message], bytes], size: int, data: st.DataObject,
) -> None:
    cls, raw = enc
    b = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 3))):
        op = data.draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate"]))
        at = data.draw(st.integers(0, max(0, len(b) - 1)))
        if op == "flip" and b:
            b[at] ^= 1 << data.draw(st.integers(0, 7))
        elif op == "set" and b:
            b[at] = data.draw(st.integers(0, 255))
        elif op == "insert":
            b[at:at] = data.draw(st.binary(min_size=1, max_size=3))
        elif op == "delete" and b:
            del b[at]
        elif op == "truncate":
            del b[at:]
    _agree(cls, bytes(b), size)


def _group(number: int, inner: bytes = b"") -> bytes:
    return _varint(number << 3 | 3) + inner + _varint(number << 3 | 4)


@pytest.mark.parametrize("data", [
    _group(900),  # an unknown field of wire type 3 (a group): valid protobuf
    _group(900, _varint(901 << 3) + b"\x01" + _group(902)),  # nested, with a field inside
    _group(1),  # a known field's number on the wrong wire type is an unknown field too
    pb.ScheduleRequest(cluster="c" * 40).SerializeToString() + _group(900),
])
@pytest.mark.parametrize("size", [1, 4, 1 << 20])
def test_an_unknown_group_decodes_as_the_whole_message_would(data: bytes, size: int) -> None:
    """upb accepts groups as unknown fields (proto3 has none of its own): a large request
    carrying one must not be INVALID_ARGUMENT when the same bytes, small, are accepted."""
    for cls in (pb.ScheduleRequest, pb.UpdateSnapshotRequest):
        _agree(cls, data, size)


def test_decoding_in_pieces_takes_memory_in_proportion_to_a_piece_not_to_the_field_count() -> None:
    """A large message of tiny fields (1M remove_pods uids fit the limits; unknown varints are
    3 bytes each) must not cost a Python object per field held all at once: 64 MiB of them
    were over 5 GB of tuples before the first piece was parsed."""
    import tracemalloc

    data = (_varint(900 << 3) + b"\x01") * 200_000  # 600 KB
    tracemalloc.start()
    try:
        decode_in_pieces(pb.UpdateSnapshotRequest, data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(data) + (1 << 20), peak  # the message's own unknown bytes, a piece
