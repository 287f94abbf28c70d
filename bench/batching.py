"""(b) Opportunistic batching off vs on, every node scored: compare runs of three alternating
rounds each, so one slow moment of a shared machine does not decide a ratio."""

from __future__ import annotations

import statistics
from typing import Any

from _common import OFF, ON, PCT100, command, load, table, verdict

ROUNDS = 3

# (title, workload args, hint-ratio target, speed-up target)
CASES: list[tuple[str, list[str], float | None, float | None]] = [
    ("one-per-node: 5000 nodes, 5000 pods of 3 CPU",
     ["one-per-node", "--size", "medium"], 0.99, 10.0),
    ("basic: 5000 nodes, 10000 small pods (the rescore path)",
     ["default", "--size", "medium"], 0.95, 5.0),
    ("mixed signatures: 5000 nodes, 10000 pods, 4 shapes in runs of 50",
     ["mixed-signatures", "--size", "medium"], None, None),
]
# (mode flags, what they mean, which cases)
MODES: list[tuple[list[str], str, int]] = [
    ([], "unary, one request of 100 pods in flight", len(CASES)),
    (["--mode", "stream"], "one stream, 4 requests of 100 pods in flight", 2),
]


def _side(doc: dict[str, Any], side: str, metric: str) -> list[dict[str, float]]:
    """`metric`'s data for each round of `side`."""
    return [i["data"] for i in doc["dataItems"]
            if i["labels"].get("Side") == side and i["labels"]["Metric"] == metric]


def run() -> str:
    out = [
        "## (b) Batching off vs on (compare), percentageOfNodesToScore 100",
        "",
        f"Side a is batching off, side b batching on. Each compare runs {ROUNDS} rounds in "
        "alternating order (a b, b a, a b), each side with its own fresh server; pods/s are "
        "each side's median round, the speed-up is the median of the rounds' b/a, with the "
        "lowest and highest in brackets. The hint ratio is placements with batched=true / "
        "scheduled pods, side b, lowest round.",
    ]
    for mode, meaning, n_cases in MODES:
        rows = []
        commands = []
        for title, wl, hint_target, speed_target in CASES[:n_cases]:
            args = ["compare", *wl, "--config", PCT100, "--a", OFF, "--b", ON,
                    "--repeat", str(ROUNDS), *mode]
            commands.append(f"- {title}: `{command(args)}`")
            doc, _ = load(args)
            speed = next(i["data"] for i in doc["dataItems"]
                         if i["labels"]["Metric"] == "compare_speedup")
            tput_a, tput_b = (
                statistics.median(d["Average"] for d in _side(doc, s, "SchedulingThroughput"))
                for s in ("a", "b")
            )
            hint = min(d["Ratio"] for d in _side(doc, "b", "batch_hint_ratio"))
            hint_off = max(d["Ratio"] for d in _side(doc, "a", "batch_hint_ratio"))
            unsched = max(d["Unschedulable"] for d in _side(doc, "b", "pods"))
            rows.append([
                title, f"{tput_a:.0f}", f"{tput_b:.0f}",
                f"{speed['Median']:.2f}x ({speed['Min']:.2f}-{speed['Max']:.2f})",
                f"{hint:.4f}", f"{hint_off:.0f}", f"{unsched:.0f}",
                verdict(hint, hint_target) if hint_target else "-",
                verdict(speed["Median"], speed_target) if speed_target else "-",
            ])
        out += ["", f"### {meaning}", "", *commands, ""]
        out.append(table(["workload", "pods/s off", "pods/s on", "speed-up (min-max)",
                          "hint ratio (on)", "hint ratio (off)", "unschedulable (on)",
                          "hint target", "speed-up target"], rows))
    return "\n".join(out)


if __name__ == "__main__":
    print(run())
