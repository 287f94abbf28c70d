"""Pauses the event loop waits out that are not its own work: the collector's full passes and
a large request's long turns with the GIL.

CPython's full (generation 2) collection walks every tracked object with the GIL held; beside
a 10,000-node snapshot that took 50-110 ms, and a health check arriving then waited for all
of it. A snapshot is long-lived by construction, so after each committed change the objects
alive are frozen (`gc.freeze`) and later passes walk only what came after. Snapshots hold no
reference cycles (their listeners hold them weakly, tests/test_pauses.py), so a replaced one is
still freed by reference counting while frozen; a cycle frozen by accident is reclaimed by one
full pass once the frozen set has doubled, which bounds what it can keep.

A thread that wants the GIL waits up to the switch interval (5 ms) for the holder to drop it,
and the loop takes it several times per request. While a large request (one decoded off the
loop, over 256 KiB) is worked on a thread, the interval is 1 ms; with none in flight it is
back to what it was. Made process-wide and permanent, 2 ms cost streams of small requests
25-35 % of their throughput (bench/AB-old-new.md): their threads and the loop trade the GIL
all the time, and each trade has a cost.
"""

from __future__ import annotations

import gc
import sys
import threading
from types import TracebackType

__all__ = ["HeapPolicy", "ShortTurns"]

# below this many frozen objects no full pass is forced: a small heap's passes are short anyway
FLOOR_OBJECTS = 200_000


class HeapPolicy:
    """Freezes the heap after a committed snapshot change; one full pass when it has doubled."""

    def __init__(self, floor: int = FLOOR_OBJECTS) -> None:
        self._floor = floor
        self._limit = floor
        self._lock = threading.Lock()
        self.full_passes = 0

    def settle(self) -> None:
        """On the thread that committed the change, after it committed."""
        with self._lock:
            gc.collect(1)  # young garbage is not frozen with the snapshot
            gc.freeze()
            if gc.get_freeze_count() <= self._limit:
                return
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self.full_passes += 1
            self._limit = max(self._floor, 2 * gc.get_freeze_count())


class ShortTurns:
    """A context manager: a short GIL switch interval while at least one holder is inside."""

    def __init__(self, seconds: float = 0.001) -> None:
        self._seconds = seconds
        self._inside = 0
        self._saved = 0.0
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        with self._lock:
            if self._inside == 0:
                self._saved = sys.getswitchinterval()
                sys.setswitchinterval(self._seconds)
            self._inside += 1

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._lock:
            self._inside -= 1
            if self._inside == 0:
                sys.setswitchinterval(self._saved)
