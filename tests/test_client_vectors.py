"""The shared client vectors (tests/data/vectors, tools/client_vectors.py): the Python client
converts every input to the committed bytes, text and report, or refuses it with the committed
error. clients/go/kube/vectors_test.go holds the Go client to the same files, so neither client
can drift from the other without one of the two tests failing."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format

from schedsvc.v1 import schedule_pb2 as pb
from tools.client_vectors import convert, expected_files, inputs, stem

VECTORS = inputs()


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


def test_the_vectors_cover_every_kind_and_both_modes() -> None:
    names = [stem(p) for p in VECTORS]
    assert len(names) >= 50
    assert any(n.endswith(".lenient") for n in names)
    assert any(n.endswith(".reschedule") for n in names)
    errors = [p for p in VECTORS if p.with_name(stem(p) + ".error.txt").exists()]
    assert len(errors) >= 15  # refusals, unmodelled fields among them


@pytest.mark.parametrize("path", VECTORS, ids=stem)
def test_vector(path: Path) -> None:
    got = expected_files(convert(path))
    for suffix in (".binpb", ".txtpb", ".report.txt", ".error.txt"):
        assert got.get(suffix) == _read(path.with_name(stem(path) + suffix)), suffix


@pytest.mark.parametrize("path", [p for p in VECTORS if "conformance" not in p.name][:40],
                         ids=stem)
def test_text_form_is_the_binary_form(path: Path) -> None:
    binary = _read(path.with_name(stem(path) + ".binpb"))
    if binary is None:
        pytest.skip("refused: no message")
    from_text = text_format.Parse(
        path.with_name(stem(path) + ".txtpb").read_text(), pb.UpdateSnapshotRequest())
    assert from_text.SerializeToString(deterministic=True) == binary
