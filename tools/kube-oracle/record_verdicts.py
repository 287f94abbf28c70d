#!/usr/bin/env python3
"""Write a conformance file whose verdicts are kube-oracle's (kube-scheduler v1.37.2).

Usage:
    python3 tools/kube-oracle/record_verdicts.py CASES.jsonl.gz ORACLE.jsonl OUT.jsonl.gz

CASES is a conformance file (shared/conformance); ORACLE is ``kube-oracle score`` output over
it (one ``{"id", "expected"}`` line per case, in input order). OUT keeps every case's inputs
and field order, with ``expected`` replaced by the oracle's; a case missing from ORACLE, or an
id out of order, is an error: nothing is skipped. Standard library only.
"""

from __future__ import annotations

import gzip
import json
import sys


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    cases_path, oracle_path, out_path = argv
    with gzip.open(cases_path, "rt", encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    with open(oracle_path, encoding="utf-8") as f:
        verdicts = [json.loads(line) for line in f if line.strip()]
    if len(cases) != len(verdicts):
        print(f"{len(cases)} cases but {len(verdicts)} verdicts", file=sys.stderr)
        return 2
    # mtime 0: the same verdicts give the same bytes
    with gzip.GzipFile(out_path, "wb", compresslevel=9, mtime=0) as raw:
        for case, verdict in zip(cases, verdicts, strict=True):
            if case["id"] != verdict["id"]:
                print(f"case {case['id']}: verdict for {verdict['id']}", file=sys.stderr)
                return 2
            case["expected"] = verdict["expected"]
            raw.write((json.dumps(case, separators=(",", ":")) + "\n").encode())
    print(f"{out_path}: {len(cases)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
