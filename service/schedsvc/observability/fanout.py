"""Several observers behind the engine's one: metrics and traces side by side."""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.cycle_context import CycleRecord
from ..engine.observer import NULL_OBSERVER, Observer

__all__ = ["FanoutObserver", "combine"]


class FanoutObserver:
    """Forwards every hook to each observer in order."""

    def __init__(self, observers: Sequence[Observer]) -> None:
        self.observers = tuple(observers)

    def cycle(self, rec: CycleRecord) -> None:
        for o in self.observers:
            o.cycle(rec)

    def batch_flush(self, profile: str, reason: str) -> None:
        for o in self.observers:
            o.batch_flush(profile, reason)

    def extension_point(self, profile: str, point: str, status: str, seconds: float) -> None:
        for o in self.observers:
            o.extension_point(profile, point, status, seconds)

    def plugin_duration(self, plugin: str, point: str, status: str, seconds: float) -> None:
        for o in self.observers:
            o.plugin_duration(plugin, point, status, seconds)

    def pod_group(self, profile: str, result: str, seconds: float) -> None:
        for o in self.observers:
            o.pod_group(profile, result, seconds)


def combine(observers: Sequence[Observer]) -> Observer:
    """The null observer for none, the observer itself for one (no fan-out cost), else a fan-out."""
    if not observers:
        return NULL_OBSERVER
    if len(observers) == 1:
        return observers[0]
    return FanoutObserver(observers)
