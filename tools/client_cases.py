"""The recorded conformance cases through the Python client, for the Go client's cross-check
(clients/go/kube/conformance_test.go sends both clients' conversions of every case to one
`schedsvc serve` and compares the answers).

    python -m tools.client_cases [--stride N] FILE.jsonl.gz ...   # to stdout, per case:

a 4-byte big-endian length and the UpdateSnapshotRequest of the case's `kind: List` (as
tools.conformance.case_as_list writes it) read by load_cluster, every pod in upsert_pods,
serialized deterministically; length 0 when the Python client refuses the case. With
`--stride N`, every Nth case of the files read as one sequence (the first, the N+1th, ...).
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from schedsvc_client.kube import KubeObjectError, load_cluster
from tools.client_vectors import cluster_request
from tools.conformance import case_as_list, load_cases

__all__ = ["main"]


def _request(case: dict[str, Any]) -> bytes:
    try:
        kc = load_cluster(json.dumps(case_as_list(case)))
    except KubeObjectError:
        return b""
    data: bytes = cluster_request(kc).SerializeToString(deterministic=True)
    return data


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.client_cases", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stride", type=int, default=1)
    p.add_argument("files", nargs="+", type=Path)
    args = p.parse_args(argv)
    out = sys.stdout.buffer
    n = 0
    for path in args.files:
        for case in load_cases(path):
            if n % args.stride == 0:
                data = _request(case)
                out.write(struct.pack(">I", len(data)) + data)
            n += 1
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
