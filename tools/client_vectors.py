"""The shared client vectors (tests/data/vectors): Kubernetes JSON inputs and the contract
messages both clients must convert them to, byte for byte.

Each vector is `NAME[.MODE].input.json` (a `kind: List`, a typed list or one object, as
`kubectl get -o json` prints it); MODE `lenient` reads with ignore_unmodelled, `reschedule`
with reschedule_all. Beside it, written by this tool from the Python client's conversion
(clients/schedsvc_client/kube.py, load_cluster):

- `NAME[.MODE].binpb`: the UpdateSnapshotRequest holding every upsert list, serialized
  deterministically: fields in field-number order, map entries ordered by key (bytewise, as
  Go's Deterministic marshalling and Python's deterministic=True both order them);
- `NAME[.MODE].txtpb`: the same request in protobuf text form, for review;
- `NAME[.MODE].report.txt`: LoadReport.render() when it is not empty;
- `NAME[.MODE].error.txt` instead of the two messages when the input is refused: the
  KubeObjectError's text (`path: description`).

tests/test_client_vectors.py checks the Python client against every vector, and
clients/go/kube/vectors_test.go the Go client. The inputs carry quantities in kube's canonical
form, as the API server stores and prints them (client-go's resource.Quantity keeps no other).

    python -m tools.client_vectors [--check]   # (re)write the expected files, or compare
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.kube import KubeCluster, KubeObjectError, load_cluster
from schedsvc_client.unmodelled import LoadReport

__all__ = ["VECTORS", "Expected", "cluster_request", "convert", "expected_files", "inputs", "main"]

VECTORS = Path(__file__).resolve().parent.parent / "tests" / "data" / "vectors"
_SUFFIX = ".input.json"


@dataclass(frozen=True, slots=True)
class Expected:
    """What the Python client makes of one vector."""

    binary: bytes | None  # None: refused
    text: str
    report: str
    error: str


def inputs(directory: Path = VECTORS) -> list[Path]:
    return sorted(directory.glob(f"*{_SUFFIX}"))


def stem(path: Path) -> str:
    return path.name.removesuffix(_SUFFIX)


def convert(path: Path) -> Expected:
    """The vector's input through the Python client, in its mode."""
    mode = stem(path).rpartition(".")[2] if "." in stem(path) else ""
    report = LoadReport()
    try:
        kc = load_cluster(path.read_text(encoding="utf-8"), report=report,
                          ignore_unmodelled=mode == "lenient",
                          reschedule_all=mode == "reschedule")
    except KubeObjectError as exc:
        return Expected(None, "", report.render(), str(exc))
    req = cluster_request(kc)
    return Expected(req.SerializeToString(deterministic=True), text_format.MessageToString(req),
                    report.render(), "")


def cluster_request(kc: KubeCluster) -> pb.UpdateSnapshotRequest:
    """What load_cluster read, as one request's upsert lists (every pod among upsert_pods)."""
    req = pb.UpdateSnapshotRequest(
        upsert_nodes=kc.nodes, upsert_pods=kc.pods, upsert_namespaces=kc.namespaces,
        upsert_pod_disruption_budgets=kc.pod_disruption_budgets,
        upsert_pod_groups=kc.pod_groups, upsert_workloads=kc.workloads)
    for name, items in kc.storage_lists().items():
        getattr(req, name).extend(items)
    return req


def expected_files(exp: Expected) -> dict[str, bytes]:
    """The files a vector's expectation is written to, by suffix."""
    out: dict[str, bytes] = {}
    if exp.binary is None:
        out[".error.txt"] = (exp.error + "\n").encode()
    else:
        out[".binpb"] = exp.binary
        out[".txtpb"] = exp.text.encode()
    if exp.report:
        out[".report.txt"] = (exp.report + "\n").encode()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.client_vectors", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="compare instead of writing")
    args = p.parse_args(argv)
    stale = 0
    for path in inputs():
        files = expected_files(convert(path))
        for suffix in (".binpb", ".txtpb", ".report.txt", ".error.txt"):
            target = path.with_name(stem(path) + suffix)
            want = files.get(suffix)
            have = target.read_bytes() if target.exists() else None
            if want == have:
                continue
            stale += 1
            if args.check:
                print(f"{target.name}: differs from the Python client's conversion")
            elif want is None:
                target.unlink()
            else:
                target.write_bytes(want)
    if args.check:
        return 1 if stale else 0
    print(f"{len(inputs())} vectors, {stale} file(s) written or removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
