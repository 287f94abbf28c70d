"""`schedsvc serve`: the server's command line (flags, with SCHEDSVC_* environment defaults)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence

import grpc

from .config import SchedulerConfig, default_config, load_config
from .engine.nomination_bound import DEFAULT_MAX_NOMINATED_PODS
from .engine.scheduler import Engine
from .errors import ConfigError
from .feature_gates import KNOWN_GATES, parse_feature_gates, profile_gates
from .framework.feature import DEFAULT_EMULATED_VERSION, Features, parse_emulated_version
from .observability.setup import setup_observability, tracing_requested
from .server.app import Server, ServerOptions
from .server.auth import TokenAuthInterceptor, load_tokens
from .server.counts import DEFAULT_MAX_ITEMS
from .server.limits import Limits
from .server.tls import server_credentials

__all__ = ["KNOWN_GATES", "main", "build_parser", "parse_feature_gates", "scheduler_config"]

def _env(name: str, default: str) -> str:
    return os.environ.get("SCHEDSVC_" + name, default)


def _memory_mib(text: str) -> float | None:
    """--max-memory-mib: "auto" (None: derived from the limits the process runs under) or MiB."""
    if text.strip().lower() == "auto":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of MiB or 'auto': {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be >= 0 (0: no budget) or 'auto'")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="schedsvc", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser(
        "serve",
        help="run the gRPC server",
        description="Serve schedsvc.v1.ScheduleService. Every flag defaults to the environment "
        "variable SCHEDSVC_<FLAG> (upper case, dashes as underscores) when set.",
    )
    s.add_argument("--address", default=_env("ADDRESS", "127.0.0.1:50051"),
                   help="HOST:PORT to listen on (default %(default)s)")
    s.add_argument("--config", default=_env("CONFIG", ""),
                   help="KubeSchedulerConfiguration v1 YAML file")
    s.add_argument("--metrics-address", default=_env("METRICS_ADDRESS", ""),
                   help="HOST:PORT for Prometheus /metrics (off when empty; port 0 picks one)")
    s.add_argument("--tracing", action=argparse.BooleanOptionalAction,
                   default=_env("TRACING", "false").lower() in ("1", "true", "yes"),
                   help="export OpenTelemetry spans (per RPC, per scheduling cycle) by OTLP; "
                   "also on when OTEL_TRACES_EXPORTER=otlp (or console), never when "
                   "OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. The exporter reads "
                   "the standard variables: OTEL_EXPORTER_OTLP_ENDPOINT (default "
                   "http://localhost:4317), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, "
                   "OTEL_EXPORTER_OTLP_INSECURE, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME "
                   "(default schedsvc), OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER[_ARG], "
                   "OTEL_BSP_SCHEDULE_DELAY")
    s.add_argument("--emulated-version",
                   default=_env("EMULATED_VERSION", DEFAULT_EMULATED_VERSION.value),
                   help="the kube-scheduler release whose decisions to reproduce: 1.37 "
                   "(v1.37.2) or 1.35 (v1.35.4); kube's own compatibility flag "
                   "(default %(default)s)")
    s.add_argument("--feature-gates", default=_env("FEATURE_GATES", ""),
                   help="kube syntax, e.g. OpportunisticBatching=false,GenericWorkload=true; "
                   "the gates of the emulated release: " + ", ".join(KNOWN_GATES) + " (those "
                   "schedsvc does not model may only be false)")
    s.add_argument("--seed", type=int, default=int(_env("SEED", "-1")),
                   help="seed for tie-breaking among equal scores (-1: random)")
    s.add_argument("--max-workers", type=int, default=int(_env("MAX_WORKERS", "16")),
                   help="threads running requests' engine work (conversion, scheduling); "
                   "streams waiting for a request and health checks need none "
                   "(default %(default)s)")
    s.add_argument("--loop-slice-ms", type=float, default=float(_env("LOOP_SLICE_MS", "10")),
                   help="a Schedule request whose cluster's pods are recently fast starts on "
                   "the event loop, with no thread hand-off, for at most this long; the rest "
                   "runs on a worker thread (0: always a worker thread; default %(default)s)")
    s.add_argument("--max-pods-per-request", type=int,
                   default=int(_env("MAX_PODS_PER_REQUEST", "10000")),
                   help="pods in one Schedule request; more is INVALID_ARGUMENT "
                   "(default %(default)s)")
    s.add_argument("--max-message-bytes", type=int,
                   default=int(_env("MAX_MESSAGE_BYTES", str(64 * 1024 * 1024))),
                   help="largest gRPC message accepted; more is RESOURCE_EXHAUSTED "
                   "(default %(default)s)")
    s.add_argument("--max-nodes-per-update", type=int,
                   default=int(_env("MAX_NODES_PER_UPDATE", "100000")),
                   help="nodes upserted by one UpdateSnapshot (default %(default)s)")
    s.add_argument("--max-pods-per-update", type=int,
                   default=int(_env("MAX_PODS_PER_UPDATE", "1000000")),
                   help="pods upserted by one UpdateSnapshot (default %(default)s)")
    s.add_argument("--max-queue-per-cluster", type=int,
                   default=int(_env("MAX_QUEUE_PER_CLUSTER", "8")),
                   help="requests queued or running per cluster (Schedule, UpdateSnapshot, "
                   "Explain) before RESOURCE_EXHAUSTED; each waiting one holds a worker "
                   "thread, so keep it below --max-workers (0: unbounded; default "
                   "%(default)s)")
    s.add_argument("--max-simulation-steps", type=int,
                   default=int(_env("MAX_SIMULATION_STEPS", "100")),
                   help="steps in one Simulate request; more is INVALID_ARGUMENT "
                   "(default %(default)s)")
    s.add_argument("--max-simulated-pods", type=int,
                   default=int(_env("MAX_SIMULATED_PODS", "100000")),
                   help="pods one Simulate may place or try (schedule pods, fill max_pods, "
                   "scale_up pods per probe, pods on drained nodes); more is INVALID_ARGUMENT "
                   "(default %(default)s)")
    s.add_argument("--max-simulated-nodes", type=int,
                   default=int(_env("MAX_SIMULATED_NODES", "10000")),
                   help="nodes one Simulate may add (add_nodes count, scale_up max_new_nodes "
                   "per template); more is INVALID_ARGUMENT (default %(default)s)")
    s.add_argument("--max-concurrent-simulations-per-cluster", type=int,
                   default=int(_env("MAX_CONCURRENT_SIMULATIONS_PER_CLUSTER", "2")),
                   help="Simulate calls queued or running per cluster (each also counts in "
                   "--max-queue-per-cluster) before RESOURCE_EXHAUSTED (0: unbounded; "
                   "default %(default)s)")
    s.add_argument("--max-namespaces-per-update", type=int,
                   default=int(_env("MAX_NAMESPACES_PER_UPDATE", "100000")),
                   help="namespaces upserted by one UpdateSnapshot; remove_nodes and "
                   "remove_pods are bounded by the node and pod limits (default %(default)s)")
    s.add_argument("--max-pdbs-per-update", type=int,
                   default=int(_env("MAX_PDBS_PER_UPDATE", "100000")),
                   help="PodDisruptionBudgets upserted, and removed, by one UpdateSnapshot "
                   "(and so each list of PodGroups and Workloads); more is INVALID_ARGUMENT "
                   "(default %(default)s)")
    s.add_argument("--max-storage-objects-per-update", type=int,
                   default=int(_env("MAX_STORAGE_OBJECTS_PER_UPDATE", "1000000")),
                   help="entries of each storage list of one UpdateSnapshot (PersistentVolumes, "
                   "claims, StorageClasses, CSI objects, VolumeAttachments; upserts and "
                   "removals alike); more is INVALID_ARGUMENT (default %(default)s)")
    s.add_argument("--max-items-per-field", type=int,
                   default=int(_env("MAX_ITEMS_PER_FIELD", str(DEFAULT_MAX_ITEMS))),
                   help="entries in any list or map inside one pod, node, namespace or "
                   "PodDisruptionBudget "
                   "(containers, labels, images, ...; 0: unbounded; default %(default)s)")
    s.add_argument("--max-parked-mib", type=float, default=float(_env("MAX_PARKED_MIB", "256")),
                   help="memory for parked batch states (interrupted runs kept to resume) "
                   "over every cluster and profile; past it a profile evicts its own oldest, "
                   "then parks nothing (0: unbounded; default %(default)s)")
    s.add_argument("--staged-replace-idle-seconds", type=float,
                   default=float(_env("STAGED_REPLACE_IDLE_SECONDS", "60")),
                   help="a staged replace (UpdateSnapshot stage/commit) with no chunk for this "
                   "long is dropped and its cluster schedules again (default %(default)s)")
    s.add_argument("--max-memory-mib", type=_memory_mib, default=_env("MAX_MEMORY_MIB", "auto"),
                   help="server-wide memory budget: a request that would grow the process "
                   "past it is RESOURCE_EXHAUSTED with a retry delay. auto: 80%% of the "
                   "cgroup memory limit or physical memory (resident), and 80%% of RLIMIT_AS "
                   "when set (address space); N: N MiB resident (RLIMIT_AS still bounds "
                   "address space); 0: no budget (default %(default)s)")
    s.add_argument("--max-clusters", type=int, default=int(_env("MAX_CLUSTERS", "1000")),
                   help="clusters the server holds; an UpdateSnapshot naming one more is "
                   "RESOURCE_EXHAUSTED (DeleteCluster frees one; 0: unbounded; default "
                   "%(default)s)")
    s.add_argument("--max-nominated-pods-per-cluster", type=int,
                   default=int(_env("MAX_NOMINATED_PODS_PER_CLUSTER",
                                    str(DEFAULT_MAX_NOMINATED_PODS))),
                   help="pods one cluster holds nominated (sent so, or by preemption); an "
                   "UpdateSnapshot beyond it is INVALID_ARGUMENT, a preemption beyond it "
                   "nominates nothing and says so (0: unbounded; default %(default)s)")
    s.add_argument("--max-streams", type=int, default=int(_env("MAX_STREAMS", "1024")),
                   help="ScheduleStream calls open at once; more is RESOURCE_EXHAUSTED "
                   "(0: unbounded; default %(default)s)")
    s.add_argument("--max-streams-per-cluster", type=int,
                   default=int(_env("MAX_STREAMS_PER_CLUSTER", "16")),
                   help="open streams that have sent a request for one cluster "
                   "(0: unbounded; default %(default)s)")
    s.add_argument("--max-in-flight", type=int, default=int(_env("MAX_IN_FLIGHT", "256")),
                   help="requests queued or running on the worker threads, over all "
                   "clusters; more is RESOURCE_EXHAUSTED (0: unbounded; default %(default)s)")
    s.add_argument("--metrics-cluster-series", type=int,
                   default=int(_env("METRICS_CLUSTER_SERIES", "100")),
                   help="clusters (first by name) with their own "
                   "schedsvc_cluster_cache_size series; all count in scheduler_cache_size "
                   "(0: none per cluster; default %(default)s)")
    s.add_argument("--tls-cert", default=_env("TLS_CERT", ""),
                   help="PEM server certificate chain (TLS on when set, with --tls-key)")
    s.add_argument("--tls-key", default=_env("TLS_KEY", ""), help="PEM server private key")
    s.add_argument("--tls-client-ca", default=_env("TLS_CLIENT_CA", ""),
                   help="PEM CA bundle: require client certificates signed by it (mutual TLS)")
    s.add_argument("--auth-token-file", default=_env("AUTH_TOKEN_FILE", ""),
                   help="file of accepted bearer tokens, one per line (or set "
                   "SCHEDSVC_AUTH_TOKEN); health checks need none")
    s.add_argument("--grace-seconds", type=float, default=float(_env("GRACE_SECONDS", "10")),
                   help="how long SIGTERM waits for in-flight RPCs")
    s.add_argument("--log-level", default=_env("LOG_LEVEL", "INFO"),
                   help="DEBUG, INFO, WARNING or ERROR (default %(default)s)")
    s.add_argument("--log-format", choices=("text", "json"), default=_env("LOG_FORMAT", "text"),
                   help="json: one JSON object per line, for log collectors (default "
                   "%(default)s)")
    return p


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {
            "ts": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out)


def _setup_logging(level: str, fmt: str) -> None:
    handler = logging.StreamHandler()
    if fmt == "json":
        handler.setFormatter(_JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)


def _security(
    args: argparse.Namespace,
) -> tuple[tuple[grpc.aio.ServerInterceptor, ...], grpc.ServerCredentials | None]:
    """Token interceptor and TLS credentials from the flags; half-given TLS is an error."""
    tokens: tuple[str, ...] = ()
    if args.auth_token_file:
        tokens = load_tokens(args.auth_token_file)
    elif os.environ.get("SCHEDSVC_AUTH_TOKEN", "").strip():
        tokens = (os.environ["SCHEDSVC_AUTH_TOKEN"].strip(),)
    interceptors = (TokenAuthInterceptor(tokens),) if tokens else ()
    if args.tls_client_ca and not args.tls_cert:
        raise ConfigError("--tls-client-ca", "mutual TLS needs --tls-cert and --tls-key")
    creds = None
    if args.tls_cert or args.tls_key:
        creds = server_credentials(args.tls_cert, args.tls_key, args.tls_client_ca)
    return interceptors, creds


def scheduler_config(
    args: argparse.Namespace, gates: dict[str, bool] | None = None
) -> SchedulerConfig:
    """The configuration (--config, or kube's default) as the --emulated-version reads it,
    every profile's Features carrying the --feature-gates (`gates`, parsed from `args` when
    not given); ConfigError when any is wrong."""
    version = parse_emulated_version(args.emulated_version)
    if gates is None:
        gates = parse_feature_gates(args.feature_gates, version)
    features = Features(version, profile_gates(gates))
    if args.config:
        return load_config(args.config, version, features)
    return default_config(version, features)


def serve(args: argparse.Namespace) -> int:
    _setup_logging(args.log_level, args.log_format)
    try:
        gates = parse_feature_gates(
            args.feature_gates, parse_emulated_version(args.emulated_version)
        )
        config = scheduler_config(args, gates)
    except ConfigError as exc:
        print(f"schedsvc: configuration error: {exc}", file=sys.stderr)
        return 2
    try:
        security = _security(args)
    except (ConfigError, OSError, ValueError) as exc:
        print(f"schedsvc: configuration error: {exc}", file=sys.stderr)
        return 2
    try:
        obs = setup_observability(
            args.metrics_address, tracing_requested(args.tracing),
            cluster_series=args.metrics_cluster_series,
        )
    except (OSError, ValueError) as exc:
        print(f"schedsvc: cannot start observability: {exc}", file=sys.stderr)
        return 2
    engine = Engine(
        config,
        seed=None if args.seed < 0 else args.seed,
        batching_enabled=gates["OpportunisticBatching"],
        observer=obs.observer,
        max_clusters=args.max_clusters,
        max_nominated_pods=args.max_nominated_pods_per_cluster,
        max_parked_bytes=int(args.max_parked_mib * (1 << 20)),
        staged_idle_seconds=args.staged_replace_idle_seconds,
    )
    obs.attach(engine)
    if obs.metrics_port is not None:
        print(f"schedsvc metrics on port {obs.metrics_port}", flush=True)
    options = ServerOptions(
        address=args.address,
        max_workers=args.max_workers,
        loop_slice_seconds=args.loop_slice_ms / 1000,
        max_message_bytes=args.max_message_bytes,
        grace_seconds=args.grace_seconds,
        max_memory_mib=args.max_memory_mib,
        limits=Limits(
            max_pods_per_request=args.max_pods_per_request,
            max_nodes_per_update=args.max_nodes_per_update,
            max_pods_per_update=args.max_pods_per_update,
            max_queue_per_cluster=args.max_queue_per_cluster,
            max_namespaces_per_update=args.max_namespaces_per_update,
            max_pdbs_per_update=args.max_pdbs_per_update,
            max_storage_objects_per_update=args.max_storage_objects_per_update,
            max_streams=args.max_streams,
            max_streams_per_cluster=args.max_streams_per_cluster,
            max_in_flight=args.max_in_flight,
            max_items_per_field=args.max_items_per_field,
            max_simulation_steps=args.max_simulation_steps,
            max_simulated_pods=args.max_simulated_pods,
            max_simulated_nodes=args.max_simulated_nodes,
            max_concurrent_simulations_per_cluster=args.max_concurrent_simulations_per_cluster,
        ),
        interceptors=(*obs.interceptors, *security[0]),
        credentials=security[1],
        tune_process=True,
    )
    server = Server(engine, options).start()
    obs.attach_server(server.servicer.counts, server.servicer.handler.simulations.counts)
    server.install_signal_handlers()
    logging.getLogger("schedsvc").info(
        "reproducing kube-scheduler %s (--emulated-version %s)",
        config.emulated_version.kube, config.emulated_version.value,
    )
    print(f"schedsvc listening on port {server.port}", flush=True)
    server.wait()
    obs.shutdown()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        return serve(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
