"""Prometheus metrics under kube-scheduler's names, fed by the engine's Observer hooks.

Names, labels and buckets follow kube 1.35's pkg/scheduler/metrics/metrics.go, so dashboards
written for kube-scheduler read ours. Labels stay low-cardinality: profile, result, extension
point, plugin, status, and the cluster name for the per-cluster cache gauges; never a pod or
node name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    start_http_server,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ..engine.cycle_context import CycleRecord
from .hot_metrics import HotMetrics

if TYPE_CHECKING:
    from ..engine.scheduler import Engine

# clusters with their own schedsvc_cluster_cache_size series (--metrics-cluster-series)
DEFAULT_CLUSTER_SERIES = 100

__all__ = [
    "DEFAULT_CLUSTER_SERIES",
    "PrometheusObserver",
    "ClusterCollector",
    "ServerCollector",
    "new_registry",
    "start_metrics_server",
]


def _exponential(start: float, factor: float, count: int) -> tuple[float, ...]:
    """client_golang's ExponentialBuckets."""
    return tuple(start * factor**i for i in range(count))


# kube: scheduling_attempt_duration_seconds ExponentialBuckets(0.001, 2, 15)
ATTEMPT_BUCKETS = _exponential(0.001, 2, 15)
# kube's podgroup_scheduling_attempt_duration_seconds: ExponentialBuckets(0.001, 2, 15)
POD_GROUP_BUCKETS = _exponential(0.001, 2, 15)
# kube: framework_extension_point_duration_seconds ExponentialBuckets(0.0001, 2, 12)
EXTENSION_POINT_BUCKETS = _exponential(0.0001, 2, 12)
# kube: plugin_execution_duration_seconds ExponentialBuckets(0.00001, 1.5, 20)
PLUGIN_BUCKETS = _exponential(0.00001, 1.5, 20)
# kube: get_node_hint / store_schedule_results ExponentialBuckets(0.00001, 2, 12)
BATCH_BUCKETS = _exponential(0.00001, 2, 12)

# kube's schedule_attempts_total results
_RESULTS = {"SCHEDULED": "scheduled", "UNSCHEDULABLE": "unschedulable", "ERROR": "error"}


def new_registry() -> CollectorRegistry:
    """A registry with prometheus-client's process, platform and GC collectors, as the
    default one has; a fresh one per server keeps tests independent of each other."""
    registry = CollectorRegistry()
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    return registry


class PrometheusObserver:
    """Metric families are created once per registry; labels stay low-cardinality."""

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        hot = HotMetrics(registry)  # touched several times per cycle: see hot_metrics.py
        self.attempts = hot.counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
            "could not be scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
        )
        self.attempt_duration = hot.histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + assume).",
            ["result", "profile"],
            ATTEMPT_BUCKETS,
        )
        self.extension_point_hist = hot.histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            EXTENSION_POINT_BUCKETS,
        )
        self.plugin_hist = hot.histogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point (sampled cycles).",
            ["plugin", "extension_point", "status"],
            PLUGIN_BUCKETS,
        )
        self._batch_metrics(hot)
        self.pod_group_attempts = hot.counter(
            "scheduler_podgroup_schedule_attempts",
            "Number of attempts to schedule pod groups, by the result.",
            ["result", "profile"],
        )
        self.pod_group_duration = hot.histogram(
            "scheduler_podgroup_scheduling_attempt_duration_seconds",
            "Pod group scheduling attempt latency in seconds (all members' cycles and the "
            "group's PostFilter).",
            ["result", "profile"],
            POD_GROUP_BUCKETS,
        )

    def _batch_metrics(self, hot: HotMetrics) -> None:
        """Batching's families (kube's, and ours for skips and refused nominations)."""
        self.batch_attempts = hot.counter(
            "scheduler_batch_attempts",
            "Counts of results when we attempt to use batching.",
            ["profile", "result"],
        )
        self.batch_flushes = hot.counter(
            "scheduler_batch_cache_flushed",
            "Counts of cache flushes by reason.",
            ["profile", "reason"],
        )
        # ours: pods that asked no hint, by reason (nominated_pods: nominations of their
        # priority or higher count in their filters), and nominations refused by the bound
        self.batch_skips = hot.counter(
            "schedsvc_batch_skipped",
            "Pods that asked no batching hint, by reason (nominated_pods: nominated pods of "
            "their priority or higher exist).",
            ["profile", "reason"],
        )
        self.nominations_refused = hot.counter(
            "schedsvc_nominations_refused",
            "Preemptions that found a node but nominated nothing: the cluster holds "
            "--max-nominated-pods-per-cluster nominated pods.",
            ["profile"],
        )
        self.hint_hist = hot.histogram(
            "scheduler_get_node_hint_duration_seconds",
            "Latency for getting a node hint.",
            ["hinted", "profile"],
            BATCH_BUCKETS,
        )
        self.store_hist = hot.histogram(
            "scheduler_store_schedule_results_duration_seconds",
            "Latency for storing scheduling results for batching.",
            ["profile"],
            BATCH_BUCKETS,
        )
        # a cycle's events by kind, each (profile, value)-labelled
        self._events = {
            "batch_attempt": self.batch_attempts,
            "batch_flush": self.batch_flushes,
            "batch_skipped": self.batch_skips,
        }

    # Observer protocol ------------------------------------------------------------------------
    def cycle(self, rec: CycleRecord) -> None:
        """Everything one attempt recorded, observed at once."""
        profile = rec.profile
        for point, status, seconds, _ in rec.points:
            self.extension_point_hist.observe((point, status, profile), seconds)
        for plugin, point, status, seconds in rec.plugins:
            self.plugin_hist.observe((plugin, point, status), seconds)
        for what, prof, value in rec.events:
            counter = self._events.get(what)
            if counter is not None:
                counter.inc((prof, value))
            else:  # nomination_refused
                self.nominations_refused.inc((prof,))
        if rec.hint is not None:
            self.hint_hist.observe(("hint" if rec.hint[0] else "no_hint", profile), rec.hint[1])
        if rec.store is not None:
            self.store_hist.observe((profile,), rec.store[0])
        if rec.result:
            self.attempts.inc((rec.result, profile))
            self.attempt_duration.observe((rec.result, profile), rec.seconds)
        elif rec.outcome == "ERROR":  # an exception is kube's "error"
            self.attempts.inc((_RESULTS["ERROR"], profile))

    def batch_flush(self, profile: str, reason: str) -> None:
        self.batch_flushes.inc((profile, reason))

    def extension_point(self, profile: str, point: str, status: str, seconds: float) -> None:
        self.extension_point_hist.observe((point, status, profile), seconds)

    def plugin_duration(self, plugin: str, point: str, status: str, seconds: float) -> None:
        self.plugin_hist.observe((plugin, point, status), seconds)

    def pod_group(self, profile: str, result: str, seconds: float) -> None:
        self.pod_group_attempts.inc((result, profile))
        self.pod_group_duration.observe((result, profile), seconds)


class ClusterCollector(Collector):
    """Cache sizes read at scrape time, so the hot path pays nothing for them.

    kube's scheduler_cache_size{type} (nodes, pods, assumed_pods) over all clusters, and the
    same per cluster as schedsvc_cluster_cache_size{cluster,type}: assumed pods are those we
    placed and the client has not yet confirmed (kube's assumed pods awaiting binding).
    kube's scheduler_pending_pods has no analogue: we keep no queue, a request's pods are
    scheduled as it arrives.

    The per-cluster series are bounded: only the first `cluster_series` clusters by name have
    them (the total covers every cluster), so a tenant creating clusters cannot grow /metrics
    without bound. schedsvc_clusters says how many there are.
    """

    def __init__(self, engine: Engine, cluster_series: int = DEFAULT_CLUSTER_SERIES) -> None:
        self.engine = engine
        self.cluster_series = max(0, cluster_series)

    def collect(self) -> Iterator[Metric]:
        total = GaugeMetricFamily(
            "scheduler_cache_size",
            "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
            labels=["type"],
        )
        per = GaugeMetricFamily(
            "schedsvc_cluster_cache_size",
            "Nodes, bound pods, assumed pods and nominated pods per cluster.",
            labels=["cluster", "type"],
        )
        sums = {"nodes": 0, "pods": 0, "assumed_pods": 0}
        held = sorted(self.engine.clusters().items())
        for i, (name, cluster) in enumerate(held):
            snap = cluster.snapshot
            # list() copies the values in one C call, safe against a concurrent cycle
            records = list(snap.pods.values())
            assumed = sum(1 for r in records if r.assumed)
            counts = {
                "nodes": snap.num_nodes,
                "pods": len(records),  # bound and assumed: every record of snap.pods has a node
                "assumed_pods": assumed,
                # pods only nominated live in their own table (snap.nominated)
                "nominated_pods": len(snap.nominated),
            }
            for kind, n in counts.items():
                if i < self.cluster_series:
                    per.add_metric([name, kind], n)
                if kind in sums:
                    sums[kind] += n
        for kind, n in sums.items():
            total.add_metric([kind], n)
        yield total
        yield per
        yield GaugeMetricFamily("schedsvc_clusters", "Clusters the server holds.", len(held))


def start_metrics_server(address: str, registry: CollectorRegistry = REGISTRY) -> int:
    """Serve /metrics on HOST:PORT; returns the bound port (0 picks a free one)."""
    host, _, port = address.rpartition(":")
    server, _thread = start_http_server(int(port), addr=host or "0.0.0.0", registry=registry)
    return int(server.server_port)


class ServerCollector(Collector):
    """Where Schedule requests ran, and the server's bounded work, read at scrape time from
    `counts` (the asyncio servicer's `counts`: plain ints kept on the event loop, so a scrape
    sees values that were true a moment ago, which is what a scrape is)."""

    _HELP = {
        "loop_slices": (
            CounterMetricFamily, "Schedule requests that began on the event loop "
            "(--loop-slice-ms), no thread hand-off."),
        "loop_slice_rests": (
            CounterMetricFamily, "Of those, requests whose rest moved to a worker thread "
            "(the slice ran out, the cluster was busy, or conversion outlasted the slice)."),
        "requests_in_flight": (
            GaugeMetricFamily,
            "Requests queued or running on the worker threads (--max-in-flight bounds them)."),
        "streams_open": (
            GaugeMetricFamily, "Open ScheduleStream calls (--max-streams bounds them)."),
        "memory_budget_bytes": (
            GaugeMetricFamily, "The server-wide budget of resident memory (--max-memory-mib; "
            "0: none)."),
        "memory_budget_address_space_bytes": (
            GaugeMetricFamily, "The budget of address space, from RLIMIT_AS (0: none)."),
        "memory_reserved_bytes": (
            GaugeMetricFamily, "Estimated growth of requests admitted near the budget and "
            "not finished."),
        "memory_refusals": (
            CounterMetricFamily, "Requests refused with RESOURCE_EXHAUSTED by the memory "
            "budget."),
    }

    def __init__(self, counts: Callable[[], Mapping[str, int]]) -> None:
        self.counts = counts

    def collect(self) -> Iterator[Metric]:
        for name, value in self.counts().items():
            family, help_text = self._HELP[name]
            yield family(f"schedsvc_{name}", help_text, value=value)
