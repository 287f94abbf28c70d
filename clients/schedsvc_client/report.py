"""What a load run measured: collected per response, summarized as a table and as perf-dash JSON.

Per-pod latency is the latency of the request that carried the pod: a pod's decision reaches the
client only when its whole request returns, so that is what a pod waits. Dividing an RPC's
latency among its pods would describe the server's cost per pod, not any pod's wait; we report
that cost as pods/s instead. Throughput percentiles follow scheduler_perf's SchedulingThroughput:
decided pods counted per one-second window of the measured phase.
"""

from __future__ import annotations

import json
import statistics
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from schedsvc.v1 import schedule_pb2 as pb

__all__ = ["Collector", "Report", "format_report", "format_compare", "data_items", "write_plot"]

_PCTS = (50, 90, 99)


class Collector:
    """Accumulates one measured phase; responses may arrive from several threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.start: float | None = None
        self.end: float | None = None
        self.pods = 0
        self.scheduled = 0
        self.unschedulable = 0
        self.rejected = 0
        self.batched = 0
        self.nominated = 0  # unschedulable, but DefaultPreemption nominated a node
        self.claims_bound = 0  # Placement.volume_bindings of the scheduled pods
        self.reasons: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self.rpc_latencies: list[float] = []
        self.rpc_sizes: list[int] = []
        self.completions: list[tuple[float, int]] = []

    def begin(self, t: float) -> None:
        with self._lock:
            self.start = t if self.start is None else min(self.start, t)

    def finish(self, t: float) -> None:
        with self._lock:
            self.end = t if self.end is None else max(self.end, t)

    def record(self, placements: Sequence[pb.Placement], t_start: float, t_end: float) -> int:
        """One response; returns how many of its pods were scheduled."""
        sched = unsched = rejected = batched = nominated = bound = 0
        reasons: Counter[str] = Counter()
        examples: dict[str, str] = {}
        for p in placements:
            if p.outcome == pb.Placement.SCHEDULED:
                sched += 1
                batched += p.batched
                bound += len(p.volume_bindings)
            else:
                if p.outcome == pb.Placement.REJECTED:
                    rejected += 1
                    keys = ["rejected: " + p.message]
                else:
                    unsched += 1
                    nominated += bool(p.nominated_node_name)
                    keys = list(p.reasons) or [p.message or "unschedulable"]
                for key in keys:
                    reasons[key] += 1
                    examples.setdefault(key, p.message)
        with self._lock:
            self.pods += len(placements)
            self.scheduled += sched
            self.unschedulable += unsched
            self.rejected += rejected
            self.batched += batched
            self.nominated += nominated
            self.claims_bound += bound
            self.reasons.update(reasons)
            for k, v in examples.items():
                self.examples.setdefault(k, v)
            self.rpc_latencies.append(t_end - t_start)
            self.rpc_sizes.append(len(placements))
            self.completions.append((t_end, len(placements)))
        return sched


def _pcts(values: np.ndarray[Any, Any]) -> dict[str, float]:
    if values.size == 0:
        return {f"p{q}": 0.0 for q in _PCTS}
    got = np.percentile(values, _PCTS)
    return {f"p{q}": float(v) for q, v in zip(_PCTS, got, strict=True)}


@dataclass(slots=True)
class Report:
    """The summary of a run's measured phase (warm-up excluded)."""

    name: str
    pods: int = 0
    scheduled: int = 0
    unschedulable: int = 0
    rejected: int = 0
    batched: int = 0
    nominated: int = 0
    claims_bound: int = 0
    duration_s: float = 0.0
    throughput: dict[str, float] = field(default_factory=dict)  # average, p50, p90, p99
    pod_latency_ms: dict[str, float] = field(default_factory=dict)
    rpc_latency_ms: dict[str, float] = field(default_factory=dict)
    rpcs: int = 0
    top_reasons: list[tuple[str, int]] = field(default_factory=list)
    examples: dict[str, str] = field(default_factory=dict)
    server_cpu_s: float | None = None
    server_cpu_measured_s: float | None = None
    server_peak_rss_bytes: int | None = None
    client_cpu_s: float = 0.0
    deleted: int = 0
    nodes_used: int = 0  # distinct nodes the measured pods went to
    pods_per_node: tuple[int, int] = (0, 0)  # (min, max) measured pods over the nodes used
    samples: list[float] = field(default_factory=list)  # per-second throughput, for plots
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def hint_ratio(self) -> float:
        return self.batched / self.scheduled if self.scheduled else 0.0

    @classmethod
    def from_collector(cls, name: str, c: Collector) -> Report:
        duration = (c.end - c.start) if c.start is not None and c.end is not None else 0.0
        lat = np.asarray(c.rpc_latencies, dtype=np.float64) * 1000.0
        per_pod = np.repeat(lat, np.asarray(c.rpc_sizes, dtype=np.int64)) if lat.size else lat
        samples: list[float] = []
        if c.start is not None and duration >= 1.0:
            ends = np.asarray([t for t, _ in c.completions]) - c.start
            counts = np.asarray([n for _, n in c.completions])
            windows = int(duration)  # full seconds only; the last partial one would skew low
            idx = np.floor(ends).astype(np.int64)
            keep = idx < windows
            samples = np.bincount(idx[keep], weights=counts[keep], minlength=windows).tolist()
        average = c.pods / duration if duration > 0 else 0.0
        tp = {"average": average}
        tp.update(_pcts(np.asarray(samples)) if samples else {f"p{q}": average for q in _PCTS})
        return cls(
            name=name,
            pods=c.pods,
            scheduled=c.scheduled,
            unschedulable=c.unschedulable,
            rejected=c.rejected,
            batched=c.batched,
            nominated=c.nominated,
            claims_bound=c.claims_bound,
            duration_s=duration,
            throughput=tp,
            pod_latency_ms=_pcts(per_pod),
            rpc_latency_ms=_pcts(lat),
            rpcs=len(c.rpc_latencies),
            top_reasons=c.reasons.most_common(5),
            examples=dict(c.examples),
            samples=samples,
        )


def _mib(n: int | None) -> str:
    return "n/a" if n is None else f"{n / 2**20:.0f} MiB"


def _secs(s: float | None) -> str:
    return "n/a" if s is None else f"{s:.2f} s"


def _rows(r: Report) -> list[tuple[str, str]]:
    tp, pl, rl = r.throughput, r.pod_latency_ms, r.rpc_latency_ms
    return [
        ("pods decided (measured)", f"{r.pods}"),
        ("  scheduled", f"{r.scheduled}"),
        ("  unschedulable", f"{r.unschedulable}"),
        ("    nominated (preempting)", f"{r.nominated}"),
        ("  rejected", f"{r.rejected}"),
        ("claims bound (volume_bindings)", f"{r.claims_bound}"),
        ("duration", f"{r.duration_s:.2f} s"),
        ("pods/s average", f"{tp.get('average', 0):.0f}"),
        ("pods/s per-second p50/p90/p99",
         f"{tp.get('p50', 0):.0f} / {tp.get('p90', 0):.0f} / {tp.get('p99', 0):.0f}"),
        ("pod latency p50/p90/p99 *",
         f"{pl.get('p50', 0):.1f} / {pl.get('p90', 0):.1f} / {pl.get('p99', 0):.1f} ms"),
        ("RPC latency p50/p90/p99",
         f"{rl.get('p50', 0):.1f} / {rl.get('p90', 0):.1f} / {rl.get('p99', 0):.1f} ms"),
        ("RPCs", f"{r.rpcs}"),
        ("batch hint ratio", f"{r.hint_ratio:.3f} ({r.batched}/{r.scheduled})"),
        ("nodes used (pods/node min..max)",
         f"{r.nodes_used} ({r.pods_per_node[0]}..{r.pods_per_node[1]})"),
        ("pods deleted (churn)", f"{r.deleted}"),
        ("server CPU (whole run)", _secs(r.server_cpu_s)),
        ("server CPU (measured)", _secs(r.server_cpu_measured_s)),
        ("server peak RSS", _mib(r.server_peak_rss_bytes)),
        ("client CPU (whole run)", f"{r.client_cpu_s:.2f} s"),
    ]


_FOOTNOTE = "* a pod's latency is its request's latency: its decision arrives with the response"


def format_report(r: Report) -> str:
    """A human table, then the top unschedulable reasons with one example message."""
    rows = _rows(r)
    width = max(len(k) for k, _ in rows)
    lines = [f"== {r.name}"]
    lines += [f"{k:<{width}}  {v}" for k, v in rows]
    lines.append(_FOOTNOTE)
    if r.top_reasons:
        lines.append("top unschedulable reasons (pods):")
        for reason, n in r.top_reasons:
            lines.append(f"  {n:>7}  {reason}")
        first = r.examples.get(r.top_reasons[0][0], "")
        if first:
            lines.append(f"  e.g. {first}")
    return "\n".join(lines)


def format_compare(a: Report, b: Report, label_a: str, label_b: str) -> str:
    """Both reports side by side, with b/a for pods/s and the latencies."""
    ra, rb = _rows(a), _rows(b)
    width = max(len(k) for k, _ in ra)
    wa = max(len(label_a), *(len(v) for _, v in ra))
    wb = max(len(label_b), *(len(v) for _, v in rb))
    ratios = {
        "pods/s average": _ratio(b.throughput.get("average"), a.throughput.get("average")),
        "pod latency p50/p90/p99 *":
            _ratio(b.pod_latency_ms.get("p50"), a.pod_latency_ms.get("p50")) + " (p50)",
        "server CPU (measured)": _ratio(b.server_cpu_measured_s, a.server_cpu_measured_s),
        "server peak RSS": _ratio(b.server_peak_rss_bytes, a.server_peak_rss_bytes),
    }
    lines = [f"== compare: {a.name}", f"{'':<{width}}  {label_a:<{wa}}  {label_b:<{wb}}  b/a"]
    for (k, va), (_, vb) in zip(ra, rb, strict=True):
        lines.append(f"{k:<{width}}  {va:<{wa}}  {vb:<{wb}}  {ratios.get(k, '')}".rstrip())
    lines.append(_FOOTNOTE)
    for label, r in ((label_a, a), (label_b, b)):
        if r.top_reasons:
            top = ", ".join(f"{reason} ({n})" for reason, n in r.top_reasons[:3])
            lines.append(f"{label} unschedulable: {top}")
    return "\n".join(lines)


def median_report(reports: Sequence[Report]) -> Report:
    """The report of median throughput (the lower middle one of an even count)."""
    ranked = sorted(reports, key=lambda r: r.throughput.get("average", 0.0))
    return ranked[(len(ranked) - 1) // 2]


def speedup_summary(rounds: Sequence[Mapping[str, Report]]) -> dict[str, float]:
    """b/a pods/s of each round of a compare: median, min, max, and how many rounds."""
    ratios = sorted(
        r["b"].throughput.get("average", 0.0) / a
        for r in rounds
        if (a := r["a"].throughput.get("average", 0.0))
    )
    if not ratios:
        return {"Median": 0.0, "Min": 0.0, "Max": 0.0, "Rounds": float(len(rounds))}
    return {"Median": statistics.median(ratios), "Min": ratios[0], "Max": ratios[-1],
            "Rounds": float(len(rounds))}


def format_rounds(rounds: Sequence[Mapping[str, Report]], summary: Mapping[str, float]) -> str:
    lines = ["rounds (pods/s average):"]
    for i, r in enumerate(rounds, 1):
        a, b = r["a"].throughput.get("average", 0.0), r["b"].throughput.get("average", 0.0)
        lines.append(f"  {i}: a {a:.0f}  b {b:.0f}  b/a {_ratio(b, a)}")
    lines.append(
        f"b/a over {int(summary['Rounds'])} rounds: median {summary['Median']:.2f}x "
        f"(min {summary['Min']:.2f}x, max {summary['Max']:.2f}x)"
    )
    return "\n".join(lines)


def _ratio(b: float | int | None, a: float | int | None) -> str:
    if a is None or b is None or not a:
        return "n/a"
    return f"{b / a:.2f}x"


def data_items(
    reports: Sequence[Report], summary: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """perf-dash's DataItems: one item per metric, labelled with the workload's name (and, for
    a compare, its side and round); `summary` adds a compare's b/a over its rounds."""
    items: list[dict[str, Any]] = []
    if summary is not None and reports:
        items.append({"data": dict(summary), "unit": "x",
                      "labels": {"Metric": "compare_speedup", "Name": reports[0].name}})
    for r in reports:
        def item(metric: str, data: dict[str, float], unit: str, r: Report = r) -> None:
            labels = {"Metric": metric, "Name": r.name}
            labels.update({k: str(v) for k, v in r.settings.items()})
            items.append({"data": data, "unit": unit, "labels": labels})

        tp = r.throughput
        item("SchedulingThroughput",
             {"Average": tp.get("average", 0.0), "Perc50": tp.get("p50", 0.0),
              "Perc90": tp.get("p90", 0.0), "Perc99": tp.get("p99", 0.0)}, "pods/s")
        for metric, d in (("pod_scheduling_latency", r.pod_latency_ms),
                          ("rpc_latency", r.rpc_latency_ms)):
            item(metric, {"Perc50": d.get("p50", 0.0), "Perc90": d.get("p90", 0.0),
                          "Perc99": d.get("p99", 0.0)}, "ms")
        item("batch_hint_ratio", {"Ratio": r.hint_ratio, "Batched": float(r.batched),
                                  "Scheduled": float(r.scheduled)}, "")
        item("pods", {"Decided": float(r.pods), "Scheduled": float(r.scheduled),
                      "Unschedulable": float(r.unschedulable), "Rejected": float(r.rejected),
                      "Nominated": float(r.nominated), "ClaimsBound": float(r.claims_bound),
                      "DurationSeconds": r.duration_s}, "pods")
        if r.server_cpu_s is not None:
            item("server_cpu", {"Total": r.server_cpu_s,
                                "Measured": r.server_cpu_measured_s or 0.0}, "s")
        if r.server_peak_rss_bytes is not None:
            item("server_peak_rss", {"Max": r.server_peak_rss_bytes / 2**20}, "MiB")
        item("client_cpu", {"Total": r.client_cpu_s}, "s")
    return {"version": "v1", "dataItems": items}


def write_json(
    path: str, reports: Sequence[Report], summary: Mapping[str, float] | None = None
) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data_items(reports, summary), f, indent=2)
        f.write("\n")


def write_plot(path: str, reports: Sequence[Report]) -> str:
    """Per-second throughput over time; returns a message saying what was (not) written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"--plot {path}: skipped, matplotlib is not installed (pip install matplotlib)"
    fig, ax = plt.subplots(figsize=(8, 4))
    for r in reports:
        ax.plot(range(1, len(r.samples) + 1), r.samples, label=r.name)
    ax.set_xlabel("second of measured phase")
    ax.set_ylabel("pods/s")
    ax.legend()
    fig.savefig(path)
    plt.close(fig)
    return f"wrote {path}"
