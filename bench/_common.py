"""Shared by the bench scripts: run `schedsvc-load` in a subprocess and read its DataItems JSON.

Every benchmark goes end to end through gRPC: the load tool starts its own server subprocess
(`schedsvc serve --address 127.0.0.1:0`), so the figures include serialization and transport.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from typing import Any

BENCH = os.path.dirname(os.path.abspath(__file__))
PCT100 = os.path.relpath(os.path.join(BENCH, "pct100.yaml"), os.getcwd())
OFF = "--feature-gates OpportunisticBatching=false"
ON = "--feature-gates OpportunisticBatching=true"


def command(args: list[str]) -> str:
    """The command as a user would type it."""
    return "schedsvc-load " + shlex.join(args)


def load(args: list[str]) -> tuple[dict[str, Any], str]:
    """Run schedsvc-load with `args`; returns (DataItems JSON, printed report)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        cmd = [sys.executable, "-m", "schedsvc_client.load", *args, "--json", out,
               "--no-progress"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{command(args)} failed:\n{done.stdout}\n{done.stderr}")
        with open(out, encoding="utf-8") as f:
            return json.load(f), done.stdout


def metrics(doc: dict[str, Any], side: str | None = None) -> dict[str, dict[str, float]]:
    """Metric name -> data, for one compare side (or the only run)."""
    out: dict[str, dict[str, float]] = {}
    for item in doc["dataItems"]:
        labels = item["labels"]
        if side is None or labels.get("Side") == side:
            out[labels["Metric"]] = item["data"]
    return out


def table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def lat(m: dict[str, dict[str, float]], metric: str = "pod_scheduling_latency") -> str:
    d = m[metric]
    return f"{d['Perc50']:.1f} / {d['Perc90']:.1f} / {d['Perc99']:.1f}"


def tput(m: dict[str, dict[str, float]]) -> str:
    return f"{m['SchedulingThroughput']['Average']:.0f}"


def tput_pcts(m: dict[str, dict[str, float]]) -> str:
    d = m["SchedulingThroughput"]
    return f"{d['Perc50']:.0f} / {d['Perc90']:.0f} / {d['Perc99']:.0f}"


def verdict(value: float, target: float) -> str:
    if value >= target:
        return f"met (≥ {target:g})"
    return f"MISSED by {target - value:.2f} ({value / target:.0%} of {target:g})"


class InProcessCaller:
    """The caller a benchmark that calls the request handler in process (no transport) plays:
    no deadline, always there."""

    def time_remaining(self) -> None:
        return None

    def is_active(self) -> bool:
        return True
