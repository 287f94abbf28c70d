"""(a) The issue's target: 10000 default pods on 5000 nodes, every node scored, batching off."""

from __future__ import annotations

from _common import OFF, PCT100, command, lat, load, metrics, table, tput, tput_pcts, verdict

TARGET = 1000.0


def run() -> str:
    args = ["default", "--size", "medium", "--config", PCT100, *OFF.split()]
    doc, _ = load(args)
    m = metrics(doc)
    pods = m["pods"]
    rows = [[
        f"{pods['Decided']:.0f}", f"{pods['Scheduled']:.0f}", f"{pods['Unschedulable']:.0f}",
        tput(m), tput_pcts(m), lat(m), lat(m, "rpc_latency"),
        f"{m['server_cpu']['Measured']:.2f}", f"{m['server_peak_rss']['Max']:.0f}",
        verdict(m["SchedulingThroughput"]["Average"], TARGET),
    ]]
    return "\n".join([
        "## (a) Issue target: 10000 default pods on 5000 nodes, percentageOfNodesToScore 100, "
        "batching off",
        "",
        f"`{command(args)}`",
        "",
        table(["pods", "scheduled", "unschedulable", "pods/s avg", "pods/s p50/p90/p99",
               "pod latency ms p50/p90/p99", "RPC latency ms p50/p90/p99",
               "server CPU s (measured)", "server peak RSS MiB", "target ≥ 1000 pods/s"], rows),
    ])


if __name__ == "__main__":
    print(run())
