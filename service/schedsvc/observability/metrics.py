"""Prometheus metrics under kube-scheduler's names, fed by the engine's Observer hooks."""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, start_http_server

__all__ = ["PrometheusObserver", "start_metrics_server"]

_LATENCY_BUCKETS = (
    0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0,
)


class PrometheusObserver:
    """Metric families are created once per registry; labels stay low-cardinality."""

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self.attempts = Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result.",
            ["result", "profile"],
            registry=registry,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + assume).",
            ["result", "profile"],
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.extension_point_hist = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.batch_attempts = Counter(
            "scheduler_batch_attempts",
            "Opportunistic batching attempts, by result.",
            ["profile", "result"],
            registry=registry,
        )
        self.batch_flushes = Counter(
            "scheduler_batch_cache_flushed",
            "Opportunistic batching state flushes, by reason.",
            ["profile", "reason"],
            registry=registry,
        )
        self._hint = Histogram(
            "scheduler_get_node_hint_duration_seconds",
            "Latency of computing a batching node hint.",
            ["hinted", "profile"],
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self._store = Histogram(
            "scheduler_store_schedule_results_duration_seconds",
            "Latency of storing scheduling results for batching.",
            ["profile"],
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )

    # Observer protocol ------------------------------------------------------------------------
    def scheduled(self, profile: str, result: str, seconds: float) -> None:
        self.attempts.labels(result, profile).inc()
        self.attempt_duration.labels(result, profile).observe(seconds)

    def batch_attempt(self, profile: str, result: str) -> None:
        self.batch_attempts.labels(profile, result).inc()

    def batch_flush(self, profile: str, reason: str) -> None:
        self.batch_flushes.labels(profile, reason).inc()

    def hint_duration(self, profile: str, hinted: bool, seconds: float) -> None:
        self._hint.labels("hint" if hinted else "no_hint", profile).observe(seconds)

    def store_duration(self, profile: str, seconds: float) -> None:
        self._store.labels(profile).observe(seconds)

    def extension_point(self, profile: str, point: str, seconds: float) -> None:
        self.extension_point_hist.labels(point, "Success", profile).observe(seconds)


def start_metrics_server(address: str, registry: CollectorRegistry = REGISTRY) -> int:
    """Serve /metrics on HOST:PORT; returns the bound port (0 picks a free one)."""
    host, _, port = address.rpartition(":")
    server, _thread = start_http_server(int(port), addr=host or "0.0.0.0", registry=registry)
    return int(server.server_port)
