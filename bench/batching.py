"""(b) Opportunistic batching off vs on, in one compare run per workload, every node scored."""

from __future__ import annotations

from _common import OFF, ON, PCT100, command, load, metrics, table, tput, verdict

# (title, workload args, hint-ratio target, speed-up target)
CASES: list[tuple[str, list[str], float | None, float | None]] = [
    ("one-per-node: 5000 nodes, 5000 pods of 3 CPU",
     ["one-per-node", "--size", "medium"], 0.99, 10.0),
    ("basic: 5000 nodes, 10000 small pods (the rescore path)",
     ["default", "--size", "medium"], 0.95, 5.0),
    ("mixed signatures: 5000 nodes, 10000 pods, 4 shapes in runs of 50",
     ["mixed-signatures", "--size", "medium"], None, None),
]


def run() -> str:
    out = [
        "## (b) Batching off vs on (compare), percentageOfNodesToScore 100",
        "",
        "Side a is batching off, side b batching on; speed-up = b/a pods/s. The hint ratio is "
        "placements with batched=true / scheduled pods, on side b.",
        "",
    ]
    rows = []
    commands = []
    for title, wl, hint_target, speed_target in CASES:
        args = ["compare", *wl, "--config", PCT100, "--a", OFF, "--b", ON]
        commands.append(f"- {title}: `{command(args)}`")
        doc, _ = load(args)
        a, b = metrics(doc, "a"), metrics(doc, "b")
        speedup = b["SchedulingThroughput"]["Average"] / a["SchedulingThroughput"]["Average"]
        hint = b["batch_hint_ratio"]["Ratio"]
        rows.append([
            title, tput(a), tput(b), f"{speedup:.2f}x", f"{hint:.4f}",
            f"{a['batch_hint_ratio']['Ratio']:.0f}",
            f"{b['pods']['Unschedulable']:.0f}",
            verdict(hint, hint_target) if hint_target else "-",
            verdict(speedup, speed_target) if speed_target else "-",
        ])
    out += commands
    out += ["", table(["workload", "pods/s off", "pods/s on", "speed-up", "hint ratio (on)",
                       "hint ratio (off)", "unschedulable (on)", "hint target",
                       "speed-up target"], rows)]
    return "\n".join(out)


if __name__ == "__main__":
    print(run())
