"""The simulations' metrics (issue 27), read at scrape time from the request handler's counts
(server/simulation_stats.py): a simulation is counted once when it ends, never per pod."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from ..server.simulation_stats import SECONDS_BUCKETS, SimulationCounts

__all__ = ["SimulationCollector"]


class SimulationCollector(Collector):
    """schedsvc_simulations_total{outcome}, schedsvc_simulated_pods_total{step},
    schedsvc_simulation_seconds."""

    def __init__(self, counts: Callable[[], SimulationCounts]) -> None:
        self.counts = counts

    def collect(self) -> Iterator[Metric]:
        c = self.counts()
        runs = CounterMetricFamily(
            "schedsvc_simulations", "Simulate calls that reached the engine's checks, by how "
            "they ended (complete, partial, deadline_exceeded, cancelled, invalid_argument, "
            "resource_exhausted, error).", labels=["outcome"])
        for outcome, n in sorted(c.outcomes.items()):
            runs.add_metric([outcome], n)
        yield runs
        pods = CounterMetricFamily(
            "schedsvc_simulated_pods", "Pods the simulations' steps placed or tried, as their "
            "results show them, by step kind.", labels=["step"])
        for step, n in sorted(c.pods.items()):
            pods.add_metric([step], n)
        yield pods
        cumulative, buckets = 0, []
        for bound, n in zip((*map(str, SECONDS_BUCKETS), "+Inf"), c.buckets, strict=True):
            cumulative += n
            buckets.append((bound, float(cumulative)))
        seconds = HistogramMetricFamily(
            "schedsvc_simulation_seconds", "Wall time of a Simulate call on its worker thread "
            "(checks, conversion, waiting for the cluster's lock, the steps).")
        seconds.add_metric([], buckets, c.seconds_sum)
        yield seconds
