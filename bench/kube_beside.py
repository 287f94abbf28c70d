"""(i) Real kube-scheduler v1.37.2 beside schedsvc, same workloads, same run.

kube's side is `tools/kube-oracle sequence --generate ...` (`make oracle`): the real
`scheduler.New` over a fake API server, the workload built in-process to the same shapes as
schedsvc-load's (node and pod sizes, 3 zones, Deployments in turns of 50 owned by ReplicaSets
and selected by Services), pods/s from the first create to the last first decision. Ours is
schedsvc-load against a fresh `schedsvc serve`, unary batches of 100, one request in flight.
Both at the configuration's default (adaptive percentageOfNodesToScore) and at 100 %; kube
also with its OpportunisticBatching gate off, so its own batching gain stands beside ours.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass

from _common import BENCH, PCT100, command, load, metrics, table

ROOT = os.path.dirname(BENCH)
ORACLE = os.path.join(ROOT, "tools", "kube-oracle", "bin", "kube-oracle")
WORKLOADS = os.path.relpath(os.path.join(BENCH, "workloads"), os.getcwd())
FIXED = ["--mode", "unary", "--batch-size", "100", "--seed", "1"]
NODE = ["--node-cpu", "4", "--node-memory", "32Gi", "--node-pods", "110"]


@dataclass(frozen=True)
class Case:
    title: str
    ours: list[str]  # schedsvc-load workload arguments, without sizes
    kube: list[str]  # kube-oracle --generate arguments, without sizes
    nodes: int
    pods: int
    small: tuple[int, int] = (500, 500)

    def sizes(self, small: bool) -> list[str]:
        nodes, pods = self.small if small else (self.nodes, self.pods)
        return ["--nodes", str(nodes), "--pods", str(pods)]


CASES = [
    Case("plain pods of 100m", [os.path.join(WORKLOADS, "issue16-plain.yaml")],
         ["--generate", "plain", *NODE, "--pod-cpu", "100m", "--pod-memory", "500Mi"],
         5000, 10_000),
    Case("Deployment pods (10 Deployments in runs of 50)", ["deployments"],
         ["--generate", "deployment", "--deployments", "10", "--run-length", "50", *NODE,
          "--pod-cpu", "100m", "--pod-memory", "500Mi"], 5000, 10_000),
    Case("one-per-node, pods of 3 CPU", [os.path.join(WORKLOADS, "issue16-one-per-node.yaml")],
         ["--generate", "plain", *NODE, "--pod-cpu", "3", "--pod-memory", "4Gi"], 5000, 5000),
]


def kube(args: list[str]) -> tuple[dict[str, object], str]:
    """One kube-oracle sequence run: its JSON line and the command."""
    cmd = [ORACLE, "sequence", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr}")
    shown = " ".join(["tools/kube-oracle/bin/kube-oracle", "sequence", *args])
    return json.loads(done.stdout.splitlines()[-1]), shown


def _nodes_used(report: str) -> str:
    m = re.search(r"nodes used \(pods/node min\.\.max\)\s+(\d+)", report)
    return m.group(1) if m else "?"


def run(small: bool = False) -> str:
    if not os.path.exists(ORACLE):
        return ("## (i) kube-scheduler v1.37.2 beside schedsvc\n\nSkipped: "
                "tools/kube-oracle/bin/kube-oracle is not built (`make oracle`).\n")
    rows, commands = [], []
    for case in CASES:
        for config in ("default", "100 %"):
            cfg = ["--config", PCT100] if config == "100 %" else []
            sizes = case.sizes(small)
            on, cmd_on = kube([*case.kube, *sizes, *cfg])
            off_rate = "-"
            if config == "default":
                off, cmd_off = kube([*case.kube, *sizes, *cfg,
                                     "--feature-gates", "OpportunisticBatching=false"])
                off_rate = f"{off['podsPerSecond']:.0f}"
                commands.append(f"- `{cmd_off}`")
            ours_args = [*case.ours, *sizes, *cfg, *FIXED]
            doc, report = load(ours_args)
            m = metrics(doc)
            ours = m["SchedulingThroughput"]["Average"]
            commands += [f"- `{cmd_on}`", f"- `{command(ours_args)}`"]
            rows.append([
                f"{case.title}: {sizes[1]} nodes, {sizes[3]} pods", config,
                off_rate, f"{on['podsPerSecond']:.0f}", f"{ours:.0f}",
                f"{ours / on['podsPerSecond']:.1f}x" if on["podsPerSecond"] else "-",
                f"{m['batch_hint_ratio']['Ratio']:.3f}",
                f"{on['scheduled']} / {on['unschedulable']}",
                f"{m['pods']['Scheduled']:.0f} / {m['pods']['Unschedulable']:.0f}",
                f"{on['nodesUsed']}", _nodes_used(report),
            ])
    out = [
        "## (i) kube-scheduler v1.37.2 beside schedsvc, same workloads, same run",
        "",
        (__doc__ or "").split("\n\n", 1)[1].strip(),
        "",
        "kube's hint ratio is not reported (the oracle does not read kube's batching "
        "metrics); its batching shows as the gate-on/gate-off ratio.",
    ]
    if small:
        out += ["", "**Small sizes (`--small`): a check that the section runs, not a result.**"]
    out += ["", *commands, ""]
    out.append(table(["workload", "configuration", "kube pods/s (batching off)",
                      "kube pods/s (on)", "schedsvc pods/s", "schedsvc / kube",
                      "schedsvc hint ratio", "kube scheduled / unschedulable",
                      "schedsvc scheduled / unschedulable", "kube nodes used",
                      "schedsvc nodes used"], rows))
    return "\n".join(out)


if __name__ == "__main__":
    import sys

    print(run(small="--small" in sys.argv))
