"""`make bench`: every benchmark, one at a time, written to bench/RESULTS.md.

Benchmarks run strictly one after another (2-core machine): each starts its own server
subprocess and stops it before the next begins.

    python bench/run_all.py                       every section -> bench/RESULTS.md
    python bench/run_all.py --only issue16        the named sections (comma-separated, or
                                                  repeated) -> bench/RESULTS.<names>.md
    python bench/run_all.py --only issue16 --small    the same at small sizes, to check that a
                                                  section runs (sections with a small form)
"""

from __future__ import annotations

import argparse
import datetime
import inspect
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import batching  # noqa: E402
import client_overhead  # noqa: E402
import gang  # noqa: E402
import issue16  # noqa: E402
import issue_target  # noqa: E402
import kube_beside  # noqa: E402
import mixed  # noqa: E402
import preemption  # noqa: E402
import profile_batching  # noqa: E402
import scheduling_basic  # noqa: E402
import simulate  # noqa: E402
import simulate_memory  # noqa: E402
import statefulsets  # noqa: E402

BENCHMARKS: list[tuple[str, Callable[..., str]]] = [
    ("issue_target", issue_target.run),
    ("batching", batching.run),
    ("mixed", mixed.run),
    ("client_overhead", client_overhead.run),
    ("scheduling_basic", scheduling_basic.run),
    ("profile_batching", profile_batching.run),
    ("preemption", preemption.run),
    ("issue16", issue16.run),
    ("kube_beside", kube_beside.run),
    ("statefulsets", statefulsets.run),
    ("simulate", simulate.run),
    ("simulate_memory", simulate_memory.run),
    ("gang", gang.run),
]


def _sh(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "n/a"


def _free() -> str:
    try:
        return subprocess.run(["free", "-m"], capture_output=True, text=True).stdout.rstrip()
    except OSError:
        return "n/a"


def machine() -> str:
    load = os.getloadavg()
    return "\n".join([
        f"- date: {datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- commit: {_sh(['git', 'rev-parse', '--short', 'HEAD'])}",
        f"- nproc: {_sh(['nproc'])}; {platform.processor() or platform.machine()}; "
        f"Python {platform.python_version()}; {platform.system()} {platform.release()}",
        f"- load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        "- free -m:",
        "",
        "```",
        _free(),
        "```",
    ])


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Run the benchmarks, write bench/RESULTS*.md.")
    p.add_argument("names", nargs="*", help="sections to run (as --only)")
    p.add_argument("--only", action="append", default=[],
                   help="section(s) to run, comma-separated: "
                   + ", ".join(n for n, _ in BENCHMARKS))
    p.add_argument("--small", action="store_true",
                   help="small sizes, for sections that have them: a check, not a result")
    return p.parse_args()


def main() -> int:
    args = _args()
    only = {n for spec in [*args.names, *args.only] for n in spec.split(",") if n}
    unknown = only - {n for n, _ in BENCHMARKS}
    if unknown:
        print(f"unknown section(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    sections = []
    started = time.perf_counter()
    for name, fn in BENCHMARKS:
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        print(f"bench: {name} ...", flush=True)
        small = args.small and "small" in inspect.signature(fn).parameters
        section = fn(small=True) if small else fn()
        took = time.perf_counter() - t0
        print(section + f"\n\n({name}: {took:.0f} s)\n", flush=True)
        sections.append(section + f"\n\n_Wall time of this benchmark: {took:.0f} s._")
    total = time.perf_counter() - started
    header = "\n".join([
        "# schedsvc benchmarks",
        "",
        "Written by `make bench` (`python bench/run_all.py`); each table gives the exact "
        "command that produced it. Every figure is end to end through gRPC on loopback: "
        "`schedsvc-load` starts its own `schedsvc serve` subprocess, sends batches of 100 pods "
        "(unary, one request in flight) and reports the measured phase only (warm-up pods "
        "excluded). pods/s counts decided pods (scheduled + unschedulable) per second; the "
        "p50/p90/p99 of pods/s are over one-second windows, as scheduler_perf's "
        "SchedulingThroughput. **Per-pod latency is the latency of the request that carried the "
        "pod** (its decision arrives only with the response), not the RPC time divided by its "
        "pods. Tie-break seed 1.",
        "",
        "Benchmarks run one at a time; anything else running on the 2 cores skews them, so the "
        "load average at start is recorded below.",
        "",
        "## Machine",
        "",
        machine(),
        "",
        f"Total wall time: {total:.0f} s.",
    ])
    text = header + "\n\n" + "\n\n".join(sections) + "\n"
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
    if only or args.small:
        suffix = ".".join(n for n, _ in BENCHMARKS if n in only) or "all"
        small = ".small" if args.small else ""
        path = os.path.join(os.path.dirname(path), f"RESULTS.{suffix}{small}.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
