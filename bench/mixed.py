"""(c) Mixed workload: 3 zones, spread constraints and pod anti-affinity, every node scored."""

from __future__ import annotations

from _common import PCT100, command, lat, load, metrics, table, tput, tput_pcts, verdict

TARGET = 300.0


def run() -> str:
    args = ["mixed-constraints", "--size", "medium", "--config", PCT100]
    doc, _ = load(args)
    m = metrics(doc)
    pods = m["pods"]
    rows = [[
        f"{pods['Decided']:.0f}", f"{pods['Unschedulable']:.0f}", tput(m), tput_pcts(m),
        lat(m), f"{m['batch_hint_ratio']['Ratio']:.3f}", f"{m['server_cpu']['Measured']:.2f}",
        f"{m['server_peak_rss']['Max']:.0f}", verdict(m["SchedulingThroughput"]["Average"], TARGET),
    ]]
    return "\n".join([
        "## (c) Mixed workload: 5000 nodes in 3 zones, spread + anti-affinity + plain pods, "
        "percentageOfNodesToScore 100",
        "",
        "500 warm-up pods, then 3000 measured pods in runs of 10: zone-spread (DoNotSchedule), "
        "hostname anti-affinity (required), plain. Batching on (the default); spread and "
        "anti-affinity pods are unsignable, so only plain pods can take hints.",
        "",
        f"`{command(args)}`",
        "",
        table(["pods", "unschedulable", "pods/s avg", "pods/s p50/p90/p99",
               "pod latency ms p50/p90/p99", "hint ratio", "server CPU s (measured)",
               "server peak RSS MiB", "target ≥ 300 pods/s"], rows),
    ])


if __name__ == "__main__":
    print(run())
