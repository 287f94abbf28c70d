"""(h) Issue 16: batching where users are, the default configuration and Deployment pods.

Every row is one `schedsvc-load compare`: side a batching off, side b on, alternating rounds,
each side its own fresh server, 3 zones, unary batches of 100 with one request in flight,
tie-break seed 1. kube-scheduler v1.35.4's own figures on this machine stand beside ours.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from typing import Any

from _common import BENCH, OFF, ON, PCT100, command, load, table, verdict

ROUNDS = 3
FIXED = ["--mode", "unary", "--batch-size", "100", "--seed", "1"]  # the defaults, spelled out
WORKLOADS = os.path.relpath(os.path.join(BENCH, "workloads"), os.getcwd())
PLAIN = os.path.join(WORKLOADS, "issue16-plain.yaml")
ONE_PER_NODE = os.path.join(WORKLOADS, "issue16-one-per-node.yaml")


@dataclass(frozen=True)
class Case:
    pods_are: str  # what the pods are
    workload: str
    nodes: int
    pods: int
    config: str  # "default" (adaptive percentageOfNodesToScore) or "100 %"
    rounds: int
    pods_target: float | None
    hint_target: float | None
    kube: str  # kube-scheduler v1.35.4 on this machine, pods/s
    small: tuple[int, int] = (600, 400)  # nodes, pods with --small

    def args(self, small: bool) -> list[str]:
        nodes, pods = self.small if small else (self.nodes, self.pods)
        config = ["--config", PCT100] if self.config == "100 %" else []
        return [self.workload, "--nodes", str(nodes), "--pods", str(pods), *config]

    def title(self, small: bool) -> str:
        nodes, pods = self.small if small else (self.nodes, self.pods)
        return f"{self.pods_are}: {nodes:,} nodes, {pods:,} pods"


DEPLOYMENTS = "Deployment pods (10 Deployments in runs of 50)"
CASES = [
    Case(DEPLOYMENTS, "deployments", 5000, 10_000, "default", ROUNDS, 10_000, 0.95, "226"),
    Case(DEPLOYMENTS, "deployments", 5000, 10_000, "100 %", ROUNDS, None, None, "54"),
    Case("plain pods of 100m", PLAIN, 5000, 10_000, "default", ROUNDS, 15_000, 0.95,
         "~630-770"),
    Case("one-per-node, pods of 3 CPU", ONE_PER_NODE, 5000, 5000, "default", ROUNDS, 25_000,
         None, "-", small=(600, 600)),
    Case("plain pods of 100m", PLAIN, 50_000, 5000, "default", 1, 8_000, None, "-",
         small=(3000, 400)),
]


def _side(doc: dict[str, Any], side: str, metric: str) -> list[dict[str, float]]:
    """`metric`'s data for each round of `side`."""
    return [i["data"] for i in doc["dataItems"]
            if i["labels"].get("Side") == side and i["labels"]["Metric"] == metric]


def _row(case: Case, small: bool) -> tuple[list[str], str]:
    args = ["compare", *case.args(small), *FIXED, "--a", OFF, "--b", ON,
            "--repeat", str(case.rounds)]
    doc, _ = load(args)
    tput_a, tput_b = (
        statistics.median(d["Average"] for d in _side(doc, s, "SchedulingThroughput"))
        for s in ("a", "b")
    )
    hint = min(d["Ratio"] for d in _side(doc, "b", "batch_hint_ratio"))
    unsched = max(d["Unschedulable"] for d in _side(doc, "b", "pods"))
    ratio = tput_b / tput_a if tput_a else 0.0
    pods_ok = verdict(tput_b, case.pods_target) if case.pods_target else "-"
    hint_ok = verdict(hint, case.hint_target) if case.hint_target else "-"
    row = [
        case.title(small), case.config, f"{tput_a:.0f}", f"{tput_b:.0f}", f"{ratio:.2f}x",
        f"{hint:.4f}", f"{unsched:.0f}", case.kube, pods_ok, hint_ok,
    ]
    return row, f"- {case.title(small)}, {case.config}: `{command(args)}`"


def run(small: bool = False) -> str:
    rows, commands = [], []
    for case in CASES:
        row, cmd = _row(case, small)
        rows.append(row)
        commands.append(cmd)
    out = [
        "## (h) Issue 16: the default configuration and Deployment pods, batching off vs on",
        "",
        "Nodes of kube's node-default template in 3 zones (assigned in turn); Deployment pods "
        "are ReplicaSet-owned and Service-selected, so PodTopologySpread's system default "
        "constraints apply through `default_selector`. \"default\" is the configuration a "
        "server starts with (adaptive `percentageOfNodesToScore`: 10 % of 5000 nodes, 5 % of "
        "50,000). Side a is batching off, side b on; each compare runs alternating rounds "
        f"({ROUNDS} at 5000 nodes, 1 at 50,000), each side with its own fresh server; pods/s "
        "are each side's median round, the ratio is on/off of those medians, the hint ratio "
        "(placements with batched=true / scheduled pods, side b) its lowest round. The targets "
        "are issue 16's, on the batching-on figure.",
        "",
        "kube-scheduler v1.35.4 on the same machine (scheduler_perf, 5000 nodes): plain pods "
        "~630-770 pods/s at the default sampling and ~108 at 100 %; Deployment pods (a Service "
        "selects them) 226 pods/s at the default sampling and 54 at 100 %.",
    ]
    if small:
        out += ["", "**Small sizes (`--small`): a check that the section runs, not a result.**"]
    out += ["", *commands, ""]
    out.append(table(["workload", "configuration", "pods/s off", "pods/s on", "on/off",
                      "hint ratio (on)", "unschedulable (on)", "kube pods/s",
                      "pods/s target (on)", "hint target"], rows))
    return "\n".join(out)


if __name__ == "__main__":
    import sys

    print(run(small="--small" in sys.argv))
