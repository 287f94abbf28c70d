"""Several observers behind the engine's one: metrics and traces side by side."""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.observer import NULL_OBSERVER, Observer

__all__ = ["FanoutObserver", "combine"]


class FanoutObserver:
    """Forwards every hook to each observer in order."""

    def __init__(self, observers: Sequence[Observer]) -> None:
        self.observers = tuple(observers)

    def scheduled(self, profile: str, result: str, seconds: float) -> None:
        for o in self.observers:
            o.scheduled(profile, result, seconds)

    def batch_attempt(self, profile: str, result: str) -> None:
        for o in self.observers:
            o.batch_attempt(profile, result)

    def batch_flush(self, profile: str, reason: str) -> None:
        for o in self.observers:
            o.batch_flush(profile, reason)

    def batch_skipped(self, profile: str, reason: str) -> None:
        for o in self.observers:
            o.batch_skipped(profile, reason)

    def nomination_refused(self, profile: str) -> None:
        for o in self.observers:
            o.nomination_refused(profile)

    def hint_duration(self, profile: str, hinted: bool, seconds: float) -> None:
        for o in self.observers:
            o.hint_duration(profile, hinted, seconds)

    def store_duration(self, profile: str, seconds: float) -> None:
        for o in self.observers:
            o.store_duration(profile, seconds)

    def extension_point(self, profile: str, point: str, status: str, seconds: float) -> None:
        for o in self.observers:
            o.extension_point(profile, point, status, seconds)

    def plugin_duration(self, plugin: str, point: str, status: str, seconds: float) -> None:
        for o in self.observers:
            o.plugin_duration(plugin, point, status, seconds)

    def cycle_started(self, profile: str, pod_uid: str) -> None:
        for o in self.observers:
            o.cycle_started(profile, pod_uid)

    def cycle_finished(
        self, profile: str, outcome: str, cycle: int, nodes_evaluated: int, nodes_feasible: int,
        batched: bool,
    ) -> None:
        for o in self.observers:
            o.cycle_finished(profile, outcome, cycle, nodes_evaluated, nodes_feasible, batched)


def combine(observers: Sequence[Observer]) -> Observer:
    """The null observer for none, the observer itself for one (no fan-out cost), else a fan-out."""
    if not observers:
        return NULL_OBSERVER
    if len(observers) == 1:
        return observers[0]
    return FanoutObserver(observers)
