"""What the engine reports as it works, without knowing who listens (metrics, traces).

The engine calls these hooks; observability/ implements them with Prometheus and
OpenTelemetry. A scheduling cycle reports once, at its end, with the record of everything it
did (cycle_context.py); the other hooks carry what happens outside a cycle (an UpdateSnapshot's
flushes, Explain's extension points, a filter piece on a worker thread). With the null
observer (metrics and tracing off) a cycle makes no record, and its stages tell the null
observer directly, one method call per event: the hot path pays nothing else. Durations are
measured by the engine (perf_counter pairs) and handed over as seconds: an observer never
times anything itself.
"""

from __future__ import annotations

from typing import Protocol

from .cycle_context import CycleRecord

__all__ = ["Observer", "NullObserver", "NULL_OBSERVER"]


class Observer(Protocol):
    def cycle(self, rec: CycleRecord) -> None:
        """One pod's attempt ended (its outcome ERROR when it raised); called on the thread
        that ran it, once per pod."""

    def batch_flush(self, profile: str, reason: str) -> None:
        """Batch state dropped outside a cycle (an UpdateSnapshot changed what it kept)."""

    def extension_point(self, profile: str, point: str, status: str, seconds: float) -> None:
        """All plugins of PreFilter, Filter, PreScore or Score ran once outside a cycle
        (Explain); status is kube's code name (Success, Unschedulable, ..., Skip)."""

    def plugin_duration(self, plugin: str, point: str, status: str, seconds: float) -> None:
        """One plugin at one extension point, in sampled cycles only (kube samples 10%), off
        the cycle's thread (a filter piece on the worker pool)."""

    def pod_group(self, profile: str, result: str, seconds: float) -> None:
        """One pod group cycle ended (kube's PodGroupScheduled and friends): result is
        scheduled, unschedulable, waiting_on_preemption or error; its members' own cycles
        were reported by `cycle`."""


class NullObserver:
    def cycle(self, rec: CycleRecord) -> None:
        pass

    def batch_flush(self, profile: str, reason: str) -> None:
        pass

    def extension_point(self, profile: str, point: str, status: str, seconds: float) -> None:
        pass

    def plugin_duration(self, plugin: str, point: str, status: str, seconds: float) -> None:
        pass

    def pod_group(self, profile: str, result: str, seconds: float) -> None:
        pass


NULL_OBSERVER = NullObserver()
