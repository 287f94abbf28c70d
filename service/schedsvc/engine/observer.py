"""What the engine reports as it works, without knowing who listens (metrics, traces).

The engine calls these hooks; observability/ implements them with Prometheus. The null
observer costs one method call per event.
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

    def hint_duration(self, profile: str, hinted: bool, seconds: float) -> None: ...

    def store_duration(self, profile: str, seconds: float) -> None: ...

    def extension_point(self, profile: str, point: str, seconds: float) -> None: ...


class NullObserver:
    def scheduled(self, profile: str, result: str, seconds: float) -> None:
        pass

    def batch_attempt(self, profile: str, result: str) -> None:
        pass

    def batch_flush(self, profile: str, reason: str) -> None:
        pass

    def hint_duration(self, profile: str, hinted: bool, seconds: float) -> None:
        pass

    def store_duration(self, profile: str, seconds: float) -> None:
        pass

    def extension_point(self, profile: str, point: str, seconds: float) -> None:
        pass


NULL_OBSERVER = NullObserver()
