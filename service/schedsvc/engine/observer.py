"""What the engine reports as it works, without knowing who listens (metrics, traces).

The engine calls these hooks; observability/ implements them with Prometheus and
OpenTelemetry. The null observer costs one method call per event, so with metrics and tracing
off the hot path pays nothing else. Durations are measured by the engine (perf_counter pairs)
and handed over as seconds: an observer never times anything itself.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Observer", "NullObserver", "NULL_OBSERVER"]


class Observer(Protocol):
    def scheduled(self, profile: str, result: str, seconds: float) -> None:
        """One scheduling attempt ended: result is scheduled, unschedulable or error."""

    def batch_attempt(self, profile: str, result: str) -> None:
        """hint, no_hint, hint_used, hint_not_used (kube's batch attempt results)."""

    def batch_flush(self, profile: str, reason: str) -> None: ...

    def batch_skipped(self, profile: str, reason: str) -> None:
        """A pod asked no batching hint (reason nominated_pods: nominations count for it)."""

    def nomination_refused(self, profile: str) -> None:
        """Preemption found a node, but the cluster holds its limit of nominated pods."""

    def hint_duration(self, profile: str, hinted: bool, seconds: float) -> None: ...

    def store_duration(self, profile: str, seconds: float) -> None: ...

    def extension_point(self, profile: str, point: str, status: str, seconds: float) -> None:
        """All plugins of PreFilter, Filter, PreScore or Score ran once for a cycle; status is
        kube's code name (Success, Unschedulable, UnschedulableAndUnresolvable, Skip)."""

    def plugin_duration(self, plugin: str, point: str, status: str, seconds: float) -> None:
        """One plugin at one extension point, in sampled cycles only (kube samples 10%)."""

    def cycle_started(self, profile: str, pod_uid: str) -> None:
        """A pod's attempt begins; every call is followed by cycle_finished on the same thread."""

    def cycle_finished(
        self, profile: str, outcome: str, cycle: int, nodes_evaluated: int, nodes_feasible: int,
        batched: bool,
    ) -> None:
        """The attempt ended: outcome is SCHEDULED, UNSCHEDULABLE, REJECTED or ERROR."""


class NullObserver:
    def scheduled(self, profile: str, result: str, seconds: float) -> None:
        pass

    def batch_attempt(self, profile: str, result: str) -> None:
        pass

    def batch_flush(self, profile: str, reason: str) -> None:
        pass

    def batch_skipped(self, profile: str, reason: str) -> None:
        pass

    def nomination_refused(self, profile: str) -> None:
        pass

    def hint_duration(self, profile: str, hinted: bool, seconds: float) -> None:
        pass

    def store_duration(self, profile: str, seconds: float) -> None:
        pass

    def extension_point(self, profile: str, point: str, status: str, seconds: float) -> None:
        pass

    def plugin_duration(self, plugin: str, point: str, status: str, seconds: float) -> None:
        pass

    def cycle_started(self, profile: str, pod_uid: str) -> None:
        pass

    def cycle_finished(
        self, profile: str, outcome: str, cycle: int, nodes_evaluated: int, nodes_feasible: int,
        batched: bool,
    ) -> None:
        pass


NULL_OBSERVER = NullObserver()
