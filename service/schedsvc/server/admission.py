"""Admission control: bounded work in flight and bounded streams (no gRPC here).

A cluster runs one request at a time (its lock: Schedule, UpdateSnapshot, Explain), so
requests beyond the one running wait in line, each holding its decoded message in memory and,
once handed to the executor, a worker thread. Counting queued + running requests per cluster
and in total, and refusing the excess with RESOURCE_EXHAUSTED (and a retry delay) keeps that
line, and the memory behind it, bounded, and tells a client to back off instead of piling up
behind a slow cluster. Different clusters have separate counters, so one busy cluster never
starves another.

An idle stream holds no thread (the server is asyncio), but each open stream still costs
memory and a file descriptor, so streams are bounded too: in total, and per cluster (a stream
counts for every cluster it has sent a request for, from its first request on).

Bytes that do not decode are refused before any of this (malformed.py).
"""

from __future__ import annotations

import threading

from ..errors import ResourceExhausted

__all__ = ["Admission", "StreamAdmission"]


class Admission:
    """Per-cluster counters of admitted requests; `max_per_cluster` <= 0 disables the bound.

    Thread-safe: a slot is taken and given back on whichever thread runs that part of the
    request."""

    def __init__(
        self, max_per_cluster: int, retry_after_seconds: float = 0.5,
        flag: str = "--max-queue-per-cluster", what: str = "requests",
    ) -> None:
        """`flag` and `what` name the bound in the refusal (Simulate has one of its own)."""
        self.max_per_cluster = max_per_cluster
        self.retry_after_seconds = retry_after_seconds
        self.flag = flag
        self.what = what
        self._lock = threading.Lock()
        # only clusters with work in flight have an entry, so this stays as small as the work
        self._in_flight: dict[str, int] = {}

    def in_flight(self, cluster: str) -> int:
        """Requests admitted for `cluster` and not yet finished (queued or running)."""
        with self._lock:
            return self._in_flight.get(cluster, 0)

    def enter(self, cluster: str) -> None:
        """Take a slot of `cluster`; ResourceExhausted when none is free. `leave` gives it
        back, maybe from another thread (a batch that moved from the loop to the executor)."""
        with self._lock:
            n = self._in_flight.get(cluster, 0)
            if 0 < self.max_per_cluster <= n:
                raise ResourceExhausted(
                    f"cluster {cluster!r} has {n} {self.what} queued or running "
                    f"(limit {self.max_per_cluster}, {self.flag}): retry later",
                    self.retry_after_seconds,
                )
            self._in_flight[cluster] = n + 1

    def leave(self, cluster: str) -> None:
        with self._lock:
            left = self._in_flight[cluster] - 1
            if left:
                self._in_flight[cluster] = left
            else:
                del self._in_flight[cluster]


class StreamAdmission:
    """Open ScheduleStream calls, in total and per cluster; a bound <= 0 disables it.

    Only the event loop calls it, but the lock keeps reads from other threads (tests, metrics)
    consistent."""

    def __init__(
        self, max_total: int, max_per_cluster: int, retry_after_seconds: float = 1.0
    ) -> None:
        self.max_total = max_total
        self.max_per_cluster = max_per_cluster
        self.retry_after_seconds = retry_after_seconds
        self._lock = threading.Lock()
        self._total = 0
        self._per_cluster: dict[str, int] = {}

    def open(self) -> None:
        """A stream starts; ResourceExhausted when the server has its limit open."""
        with self._lock:
            if 0 < self.max_total <= self._total:
                raise ResourceExhausted(
                    f"the server has {self._total} streams open (limit {self.max_total}, "
                    "--max-streams): retry later",
                    self.retry_after_seconds,
                )
            self._total += 1

    def join(self, cluster: str) -> None:
        """The stream sends a request for `cluster` for the first time."""
        with self._lock:
            n = self._per_cluster.get(cluster, 0)
            if 0 < self.max_per_cluster <= n:
                raise ResourceExhausted(
                    f"cluster {cluster!r} has {n} streams open (limit {self.max_per_cluster}, "
                    "--max-streams-per-cluster): retry later",
                    self.retry_after_seconds,
                )
            self._per_cluster[cluster] = n + 1

    def close(self, clusters: set[str]) -> None:
        """A stream that joined `clusters` ends."""
        with self._lock:
            self._total -= 1
            for c in clusters:
                left = self._per_cluster[c] - 1
                if left:
                    self._per_cluster[c] = left
                else:
                    del self._per_cluster[c]

    def open_streams(self, cluster: str | None = None) -> int:
        """Streams open in total, or that have sent a request for `cluster`."""
        with self._lock:
            return self._total if cluster is None else self._per_cluster.get(cluster, 0)
