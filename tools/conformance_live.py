"""Differential test against the live oracle: random clusters, kube's verdicts, our engine.

`python -m tools.conformance_live [-n N] [--seed SEED]` (`make conformance-live N=... SEED=...`):

1. prints the seed (a fresh one from os.urandom without --seed), so any run can be replayed;
2. generates N cases from it (tools/casegen.py) into OUT/cases.jsonl;
3. asks the real kube-scheduler for its verdicts: one `kube-oracle score --cases` process over
   the file (tools/kube-oracle, `make oracle`);
4. runs each case through our engine and compares exactly as `python -m tools.conformance`
   compares a recorded case (its run_case: per node feasibility, reasons, plugin, every
   plugin's score, totals, FitError, chosen node, and for preemption cases candidates, victims,
   nomination and message);
5. prints agreement per aspect/plugin and per feature, then EVERY disagreement, and saves each
   disagreeing case with kube's verdict to OUT/disagreements.jsonl, replayable with
   `python -m tools.conformance --cases OUT/disagreements.jsonl`.

OUT is /tmp/conformance-live-<seed> unless --out. Exit 0: every case agrees; 1: a
disagreement; 2: a bad case file, or the oracle failed or is missing (the error names which).
Our engine runs at its default semantics: where they differ from the oracle's kube v1.37.2
(tools/kube-oracle/FINDINGS.md), this fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tools.casegen import generate
from tools.conformance import CaseFileError, CaseResult, Report, load_cases, run_case

__all__ = ["OracleError", "ask_oracle", "default_oracle", "fresh_seed", "main", "run_live"]


class OracleError(RuntimeError):
    """kube-oracle is missing, failed, or answered something that is not a verdict per case."""


def default_oracle() -> Path:
    """tools/kube-oracle/bin/kube-oracle (`make oracle`), or $SCHEDSVC_KUBE_ORACLE."""
    env = os.environ.get("SCHEDSVC_KUBE_ORACLE")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent / "kube-oracle" / "bin" / "kube-oracle"


def fresh_seed() -> int:
    """A new seed, printed by every run: 48 bits from os.urandom."""
    return int.from_bytes(os.urandom(6), "big")


def ask_oracle(
    oracle: Path, cases_file: Path, ids: Sequence[str], extra: Sequence[str] = ()
) -> dict[str, dict[str, Any]]:
    """kube's verdict (`expected`) per case id, from one `kube-oracle score --cases` run."""
    if not oracle.exists():
        raise OracleError(f"{oracle}: no kube-oracle binary (build it with `make oracle`)")
    cmd = [str(oracle), "score", *extra, "--cases", str(cases_file)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise OracleError(f"{oracle}: cannot run: {exc}") from None
    if proc.returncode != 0:
        raise OracleError(
            f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip() or '(no stderr)'}"
        )
    verdicts: dict[str, dict[str, Any]] = {}
    for n, line in enumerate(proc.stdout.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out = json.loads(line)
            verdicts[str(out["id"])] = out["expected"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise OracleError(f"{oracle}: output line {n} is not a verdict: {exc}") from None
    missing = [i for i in ids if i not in verdicts]
    if missing:
        raise OracleError(f"{oracle}: no verdict for {len(missing)} case(s), first {missing[0]}")
    return verdicts


def _write_jsonl(path: Path, cases: Iterable[Mapping[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, separators=(",", ":")) + "\n")


def describe(r: CaseResult) -> list[str]:
    """Every mismatch of a case, one line each."""
    return [
        f"case {r.case} {m.aspect} node {m.node or '-'}: kube {m.expected!r}, ours {m.got!r}"
        for m in r.mismatches
    ]


def run_live(
    cases: list[dict[str, Any]], out_dir: Path, oracle: Path, log: Any = sys.stdout
) -> tuple[Report, list[CaseResult]]:
    """kube's verdicts for `cases` (written to out_dir/cases.jsonl), then ours; the report and
    the disagreeing cases' results. Disagreeing cases are saved to out_dir/disagreements.jsonl
    with `expected` (the file is removed when every case agrees)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    cases_file = out_dir / "cases.jsonl"
    _write_jsonl(cases_file, cases)
    t0 = time.monotonic()
    verdicts = ask_oracle(oracle, cases_file, [c["id"] for c in cases])
    print(f"oracle: {len(verdicts)} verdicts in {time.monotonic() - t0:.1f} s", file=log)
    rep = Report()
    bad: list[CaseResult] = []
    saved: list[dict[str, Any]] = []
    t0 = time.monotonic()
    for c in cases:
        case = {**c, "expected": verdicts[c["id"]]}
        try:
            r = run_case(case)
        except Exception as exc:  # our reader or engine refused a case kube answered
            r = CaseResult(c["id"], tuple(c.get("features", ())))
            r.check("error", "", "", f"{type(exc).__name__}: {exc}")
        rep.add(r)
        if r.mismatches:
            bad.append(r)
            saved.append(case)
    print(f"ours: {len(cases)} cases in {time.monotonic() - t0:.1f} s", file=log)
    target = out_dir / "disagreements.jsonl"
    if saved:
        _write_jsonl(target, saved)
    elif target.exists():
        target.unlink()
    return rep, bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tools.conformance_live", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("-n", type=int, default=100, help="cases to generate (default 100)")
    ap.add_argument("--seed", type=int, help="default: a fresh one from os.urandom")
    ap.add_argument("--oracle", type=Path, default=default_oracle())
    ap.add_argument("--out", type=Path, help="default /tmp/conformance-live-<seed>")
    ap.add_argument("--cases", type=Path,
                    help="run these cases (JSONL[.gz], their `expected` ignored) instead of "
                    "generating")
    args = ap.parse_args(argv)
    seed = fresh_seed() if args.seed is None else args.seed
    print(f"seed: {seed}  (replay: make conformance-live N={args.n} SEED={seed})", flush=True)
    out_dir = args.out or Path(f"/tmp/conformance-live-{seed}")
    try:
        if args.cases:
            cases = [{k: v for k, v in c.items() if k != "expected"}
                     for c in load_cases(args.cases)]
        else:
            cases = list(generate(seed, args.n))
        rep, bad = run_live(cases, out_dir, args.oracle)
    except (CaseFileError, OracleError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(rep.render())
    if not bad:
        print(f"seed {seed}: all {rep.cases} cases agree with kube")
        return 0
    print(f"\n{len(bad)} of {rep.cases} cases disagree (seed {seed}); every difference:")
    for r in bad:
        for line in describe(r):
            print(line)
    print(f"\nsaved with kube's verdicts: {out_dir / 'disagreements.jsonl'}\n"
          f"replay: python -m tools.conformance --cases {out_dir / 'disagreements.jsonl'}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
