"""StatefulSets (issue 26): pods with a WaitForFirstConsumer claim each at 5000 nodes under
kube's default configuration (all four volume plugins on), beside plain pods on the same
cluster: the same workload run twice, measuring the StatefulSet pods, then the plain ones."""

from __future__ import annotations

from _common import command, lat, load, metrics, table


def _row(label: str, args: list[str]) -> list[str]:
    doc, _ = load(args)
    m = metrics(doc)
    pods, tp = m["pods"], m["SchedulingThroughput"]
    return [label, f"{pods['Decided']:.0f}", f"{pods['Scheduled']:.0f}",
            f"{pods.get('ClaimsBound', 0):.0f}", f"{tp['Average']:.0f}", lat(m),
            f"{m['server_cpu']['Measured']:.2f}", f"`{command(args)}`"]


def run(small: bool = False) -> str:
    size = "small" if small else "medium"
    sets = ["statefulsets", "--size", size]
    plain = [*sets, "--param", "measurePlain=1", "--param", "measureSets=0", "--param", "pods=0"]
    rows = [_row("StatefulSet pods (1 claim each)", sets), _row("plain pods", plain)]
    return "\n".join([
        f"## StatefulSets: pods with a WFFC claim each beside plain pods ({size})",
        "",
        "Nodes over 3 zones, each with a CSINode (ebs.csi.aws.com, 25 attachable), a "
        "WaitForFirstConsumer class, pre-provisioned PVs with node affinity (1 per 5 nodes); "
        "the claims `data-<set>-<i>` are sent unbound before their pods (untimed, as the "
        "StatefulSet controller creates them first). Claims bound = Placement.volume_bindings.",
        "",
        table(["pods", "decided", "scheduled", "claims bound", "pods/s average",
               "pod latency ms p50/p90/p99", "server CPU s (measured)", "command"], rows),
    ])


if __name__ == "__main__":
    print(run())
