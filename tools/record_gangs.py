"""Record kube v1.37.2's verdicts on generated gang cases (tests/data/gangs; its README).

Generates the cases (tools/casegen_gangs.py), runs each feature-gate set's cases through
`kube-oracle sequence` `--runs` times (the runs of one set in parallel processes), and keeps a
case only when every run recorded the same thing and no run flagged it (an entity retried
during a later step, a step that did not settle): kube picks at random among tied nodes and
its queue runs on a clock, so a case whose answer depends on either is dropped, not recorded.
The kept cases get the recording as `expected` (without `id`) and are written gzipped, in
generation order, with the same bytes for the same verdicts.

    python -m tools.record_gangs --seed S -n N [--gate-off M] [--start I] [--kind K] [--runs 3]
        -o OUT.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tools.casegen_gangs import generate

__all__ = ["outcome_kind", "main"]

ORACLE = Path(__file__).resolve().parent / "kube-oracle" / "bin" / "kube-oracle"


def _run_oracle(oracle: Path, gates: str, cases: Path) -> dict[str, dict[str, Any]]:
    proc = subprocess.run(
        [str(oracle), "sequence", "--feature-gates", gates, "--cases", str(cases)],
        check=True, capture_output=True, text=True)
    out = {}
    for line in proc.stdout.splitlines():
        if line.strip():
            rec = json.loads(line)
            out[rec.pop("id")] = rec
    return out


def outcome_kind(expected: dict[str, Any]) -> str:
    """What kube did: preempt (victims deleted), gated (a pod never decided), nofit (a group
    step ended False), fit (every group Scheduled); mixed when the case has several steps."""
    steps = expected["steps"]
    if any(s.get("deleted") for s in steps):
        return "preempt"
    if len(steps) > 1 or any(not p["decided"] for s in steps for p in s["pods"]):
        return "mixed"
    conds = [(s.get("group") or {}).get("condition") for s in steps]
    if any(c is not None and c["status"] == "False" for c in conds):
        return "nofit"
    return "fit"


def _gates_flag(gates: dict[str, bool]) -> str:
    return ",".join(f"{k}={str(v).lower()}" for k, v in sorted(gates.items()))


def record(cases: list[dict[str, Any]], oracle: Path, runs: int) -> tuple[list[dict[str, Any]],
                                                                        Counter[str]]:
    by_gates: dict[str, list[dict[str, Any]]] = {}
    for c in cases:
        by_gates.setdefault(_gates_flag(c["featureGates"]), []).append(c)
    recorded: dict[str, dict[str, Any]] = {}
    dropped: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for gates, group in by_gates.items():
            path = Path(tmp) / "cases.jsonl"
            path.write_text("".join(json.dumps(c) + "\n" for c in group), encoding="utf-8")
            with ThreadPoolExecutor(max_workers=2) as pool:
                futures = [pool.submit(_run_oracle, oracle, gates, path) for _ in range(runs)]
                results = [f.result() for f in futures]
            for c in group:
                got = [r.get(c["id"]) for r in results]
                first = got[0]
                if first is None or any(g != first for g in got[1:]):
                    dropped["runs differ"] += 1
                elif first.get("flags"):
                    dropped["flagged"] += 1
                else:
                    recorded[c["id"]] = first
    kept = []
    for c in cases:
        if c["id"] in recorded:
            kept.append({**c, "expected": recorded[c["id"]]})
    return kept, dropped


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("-n", type=int, default=400, help="cases with GenericWorkload on")
    ap.add_argument("--gate-off", type=int, default=0, help="more cases with GenericWorkload off")
    ap.add_argument("--start", type=int, default=0, help="the first case's index")
    ap.add_argument("--kind", help="build every case as this kind (casegen_gangs.KINDS)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--oracle", type=Path, default=ORACLE)
    ap.add_argument("-o", "--out", type=Path, required=True)
    args = ap.parse_args(argv)
    cases = list(generate(args.seed, args.n, start=args.start, kind=args.kind))
    cases += list(generate(args.seed, args.gate_off, generic_workload=False,
                           start=args.start + args.n, kind=args.kind))
    kept, dropped = record(cases, args.oracle, args.runs)
    with gzip.GzipFile(args.out, "wb", compresslevel=9, mtime=0) as raw:
        for c in kept:
            raw.write((json.dumps(c, separators=(",", ":")) + "\n").encode())
    kinds = Counter(outcome_kind(c["expected"]) for c in kept
                    if c["featureGates"]["GenericWorkload"])
    print(f"{args.out}: {len(kept)} of {len(cases)} cases kept; dropped {dict(dropped)}; "
          f"GenericWorkload on by outcome {dict(kinds)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
