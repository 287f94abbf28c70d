"""SchedulingBasic at 500 / 5000 / 15000 nodes, default (adaptive) percentage, batching on."""

from __future__ import annotations

from _common import command, lat, load, metrics, table, tput, tput_pcts

SIZES = ["small", "medium", "large"]


def run() -> str:
    rows = []
    commands = []
    for size in SIZES:
        args = ["scheduling-basic", "--size", size]
        commands.append(f"- `{command(args)}`")
        doc, _ = load(args)
        m = metrics(doc)
        rows.append([
            size, doc["dataItems"][0]["labels"]["Nodes"], f"{m['pods']['Decided']:.0f}",
            tput(m), tput_pcts(m), lat(m), f"{m['batch_hint_ratio']['Ratio']:.3f}",
            f"{m['server_cpu']['Measured']:.2f}", f"{m['server_peak_rss']['Max']:.0f}",
        ])
    return "\n".join([
        "## SchedulingBasic, default percentageOfNodesToScore (adaptive), batching on",
        "",
        "Warm-up pods (500 / 1000 / 1000) excluded.",
        "",
        *commands,
        "",
        table(["size", "nodes", "measured pods", "pods/s avg", "pods/s p50/p90/p99",
               "pod latency ms p50/p90/p99", "hint ratio", "server CPU s (measured)",
               "server peak RSS MiB"], rows),
    ])


if __name__ == "__main__":
    print(run())
