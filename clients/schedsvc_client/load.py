"""`schedsvc-load`: run scheduler_perf-style workloads against schedsvc and report what it did.

    schedsvc-load [run] [WORKLOAD] [--size small|medium|large] [--param k=v] [--target H:P]
    schedsvc-load compare WORKLOAD --a "--feature-gates OpportunisticBatching=true" --b "..."
    schedsvc-load replay --nodes nodes.json --pods pods.yaml
    schedsvc-load list

Without --target it starts its own server (`schedsvc serve` in a subprocess) and measures that
process's CPU and peak memory. Pods created before the first `collectMetrics: true` op are
warm-up and excluded from every figure. Requests are built before their op is timed, so the
figures are the RPCs, not Python building protobufs.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections import Counter
from collections.abc import Sequence

import grpc

from schedsvc.v1 import schedule_pb2 as pb

from .driver import CHANNEL_OPTIONS, LoadError, RunOptions, new_stub, run
from .embedded import EmbeddedServer, server_command
from .kube import load_cluster
from .report import (
    Report,
    format_compare,
    format_report,
    format_rounds,
    median_report,
    speedup_summary,
    write_json,
    write_plot,
)
from .unmodelled import LoadReport
from .workload import (
    WorkloadError,
    load_workload,
    shipped_workloads,
)
from .workload_groups import batches_keeping_groups

__all__ = ["main", "RunOptions", "run", "build_parser"]


def _add_server_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("server")
    g.add_argument("--target", default="", help="HOST:PORT of a running server (default: start "
                   "an embedded one)")
    g.add_argument("--embedded", action="store_true",
                   help="start a server subprocess (the default without --target)")
    g.add_argument("--noop", action="store_true",
                   help="embedded no-op server: measures the load client's own cost")
    g.add_argument("--seed", type=int, default=1, help="tie-break seed (-1: random)")
    g.add_argument("--config", default=None, help="KubeSchedulerConfiguration for the server "
                   "(default: the workload's own, if any)")
    g.add_argument("--feature-gates", default="", help="e.g. OpportunisticBatching=false")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="schedsvc-load", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workload", nargs="?", default="default",
                   help="a shipped workload name (see `schedsvc-load list`) or a file")
    p.add_argument("--size", default="small", help="which `workloads:` entry (small|medium|large)")
    p.add_argument("--param", action="append", default=[], metavar="K=V",
                   help="override a workload parameter (repeatable)")
    p.add_argument("--nodes", type=int, help="shorthand for --param nodes=N")
    p.add_argument("--pods", type=int, help="shorthand for --param pods=N")
    p.add_argument("--mode", choices=("unary", "stream"), default="unary")
    p.add_argument("--batch-size", type=int, default=100, help="pods per request")
    p.add_argument("--inflight", type=int, default=0,
                   help="requests in flight per client (default 1 unary, 4 stream)")
    p.add_argument("--clients", type=int, default=1, help="concurrent clients, one cluster each")
    p.add_argument("--rate", type=float, default=0.0,
                   help="open loop: pods/s over all clients (default: closed loop, max speed)")
    p.add_argument("--json", default="", help="write perf-dash DataItems JSON here")
    p.add_argument("--plot", default="", help="write a throughput plot (needs matplotlib)")
    p.add_argument("--label", default="", help="the report's name")
    prog = p.add_mutually_exclusive_group()
    prog.add_argument("--progress", dest="progress", action="store_true", default=None,
                      help="force the progress bar")
    prog.add_argument("--no-progress", dest="progress", action="store_false")
    _add_server_flags(p)
    cmp = p.add_argument_group("compare")
    cmp.add_argument("--a", default="", help="extra flags for side a (compare)")
    cmp.add_argument("--b", default="", help="extra flags for side b (compare)")
    cmp.add_argument("--repeat", type=int, default=1,
                     help="rounds of a and b, in alternating order (a b, b a, ...); the table "
                          "shows each side's median round and the median of the rounds' b/a")
    return p


def _options(args: argparse.Namespace) -> RunOptions:
    overrides = dict(kv.split("=", 1) for kv in args.param if "=" in kv)
    bad = [kv for kv in args.param if "=" not in kv]
    if bad:
        raise WorkloadError(f"--param expects K=V, got {bad[0]!r}")
    if args.nodes is not None:
        overrides["nodes"] = str(args.nodes)
    if args.pods is not None:
        overrides["pods"] = str(args.pods)
    for name in ("batch_size", "clients"):
        if getattr(args, name) < 1:
            raise WorkloadError(f"--{name.replace('_', '-')} must be at least 1")
    return RunOptions(
        workload=load_workload(args.workload, args.size, overrides),
        target=args.target, noop=args.noop, seed=None if args.seed < 0 else args.seed,
        config=args.config, feature_gates=args.feature_gates, mode=args.mode,
        batch_size=args.batch_size, inflight=args.inflight, clients=args.clients,
        rate=args.rate, progress=args.progress, label=args.label,
    )


def _finish(
    args: argparse.Namespace, reports: list[Report], summary: dict[str, float] | None = None
) -> None:
    if args.json:
        write_json(args.json, reports, summary)
        print(f"wrote {args.json}")
    if args.plot:
        print(write_plot(args.plot, reports))


def _cmd_run(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    opts = _options(args)
    w = opts.workload
    where = opts.target or ("embedded no-op server" if opts.noop else "embedded server")
    print(f"{w.name}/{w.size}: {w.nodes} nodes, {w.pods} pods ({w.measured_pods} measured) "
          f"x {opts.clients} client(s), {opts.mode} batches of {opts.batch_size}, {where}",
          flush=True)
    report = run(opts)
    print(format_report(report))
    _finish(args, [report])
    return 0


def _cmd_compare(argv: Sequence[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.a and not args.b:
        parser.error("compare needs --a and/or --b (extra flags for each side)")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    sides = (("a", args.a), ("b", args.b))
    rounds: list[dict[str, Report]] = []
    for i in range(args.repeat):
        done: dict[str, Report] = {}
        # alternate the order, so a drift in the machine's speed weighs on both sides alike
        for side, extra in sides if i % 2 == 0 else sides[::-1]:
            side_args = parser.parse_args([*argv, *shlex.split(extra)])
            opts = _options(side_args)
            opts.label = f"{opts.workload.name}/{opts.workload.size} [{side}]"
            opts.extra = {"Side": side, "SideFlags": extra}
            if args.repeat > 1:
                opts.extra["Round"] = str(i + 1)
            round_note = f" (round {i + 1}/{args.repeat})" if args.repeat > 1 else ""
            print(f"-- side {side}{round_note}: {extra or '(no extra flags)'}", flush=True)
            done[side] = run(opts)
        rounds.append(done)
    a = median_report([r["a"] for r in rounds])
    b = median_report([r["b"] for r in rounds])
    print(format_compare(a, b, f"a: {args.a}", f"b: {args.b}"))
    summary = speedup_summary(rounds)
    if args.repeat > 1:
        print(format_rounds(rounds, summary))
    _finish(args, [r[s] for r in rounds for s in ("a", "b")], summary)
    return 0


def _cmd_replay(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="schedsvc-load replay", description="Schedule a recorded "
                                "cluster: pods with spec.nodeName are loaded as bound, the "
                                "others are scheduled in file order.")
    p.add_argument("--nodes", required=True, action="append",
                   help="kubectl get -o json|yaml output with nodes (repeatable)")
    p.add_argument("--pods", required=True, action="append", help="pods (repeatable)")
    p.add_argument("--reschedule-all", action="store_true",
                   help="ignore spec.nodeName: schedule every pod")
    p.add_argument("--ignore-unmodelled", action="store_true",
                   help="schedule pods that use a field kube-scheduler acts on and schedsvc "
                   "does not model (PVC volumes, resourceClaims, schedulingGates, ...) as if "
                   "it were absent, and report each such field and how often; by default such "
                   "a pod is an error naming the field")
    p.add_argument("--dry-run", action="store_true", help="decide but assume nothing")
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--cluster", default="replay")
    _add_server_flags(p)
    args = p.parse_args(argv)
    # One input: Services, ReplicaSets and PriorityClasses in one file apply to pods in another.
    report = LoadReport()
    cluster = load_cluster(
        [*args.nodes, *args.pods], ignore_unmodelled=args.ignore_unmodelled, report=report,
        reschedule_all=args.reschedule_all)
    nodes, pods, namespaces = cluster.nodes, cluster.pods, cluster.namespaces
    if report.render():
        print(report.render())
    bound = [q for q in pods if q.node_name]
    pending = [q for q in pods if not q.node_name]
    sidecars = sum(any(c.restart_policy == "Always" for c in q.init_containers) for q in pending)
    pod_level = sum(bool(q.resources.requests) for q in pending)
    if sidecars or pod_level:
        print(f"to schedule: {sidecars} with sidecars, {pod_level} with pod-level resources "
              "(effective requests as kube counts them)")
    server = None if args.target else EmbeddedServer(
        server_command(None if args.seed < 0 else args.seed, args.config, args.feature_gates))
    try:
        address = args.target or (server.address if server else "")
        with grpc.insecure_channel(address, options=CHANNEL_OPTIONS) as ch:
            stub = new_stub(ch)
            stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
                cluster=args.cluster, replace=True, upsert_nodes=nodes, upsert_pods=bound,
                upsert_namespaces=namespaces, upsert_pod_groups=cluster.pod_groups,
                upsert_workloads=cluster.workloads))
            print(f"{len(nodes)} nodes, {len(bound)} bound pods, {len(pending)} to schedule")
            outcomes: Counter[str] = Counter()
            for batch in batches_keeping_groups(pending, args.batch_size):
                resp = stub.Schedule(pb.ScheduleRequest(cluster=args.cluster, pods=batch,
                                                        dry_run=args.dry_run))
                for pod, pl in zip(batch, resp.placements, strict=True):
                    outcome = pb.Placement.Outcome.Name(pl.outcome)
                    outcomes[outcome] += 1
                    where = pl.node_name if pl.node_name else pl.message
                    tag = " (batched)" if pl.batched else ""
                    print(f"{pod.namespace}/{pod.name}\t{outcome}\t{where}{tag}")
            print(", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())) or "no pods")
    finally:
        if server is not None:
            server.stop()
    return 0


def _cmd_list(argv: Sequence[str]) -> int:
    for name, path in shipped_workloads().items():
        w = load_workload(path, size="small")
        sizes = ", ".join(w.sizes) or "-"
        print(f"{name:<22} sizes: {sizes:<22} {w.description}")
    return 0


_COMMANDS = {"run": _cmd_run, "compare": _cmd_compare, "replay": _cmd_replay, "list": _cmd_list}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _COMMANDS.get(argv[0]) if argv else None
    try:
        if command is not None:
            return command(argv[1:])
        return _cmd_run(argv)
    except (WorkloadError, LoadError, RuntimeError, OSError, ValueError) as exc:
        print(f"schedsvc-load: {exc}", file=sys.stderr)
        return 1
    except grpc.RpcError as exc:
        print(f"schedsvc-load: RPC failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
