"""A one-line progress bar on a terminal, redrawn in place; silent when output is not a TTY."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """Counts decided pods against a total; thread-safe, redraws at most 10 times a second."""

    def __init__(
        self, total: int, label: str = "", stream: TextIO | None = None, enabled: bool | None = None
    ) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total = max(total, 1)
        self.label = label
        self.done = 0
        self._lock = threading.Lock()
        self._start = time.perf_counter()
        self._last_draw = 0.0
        self._window: list[tuple[float, int]] = []  # (time, done): pods/s over the last ~2 s

    def phase(self, label: str) -> None:
        with self._lock:
            self.label = label
        self._draw(force=True)

    def advance(self, n: int) -> None:
        with self._lock:
            self.done += n
        self._draw()

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        with self._lock:
            if not force and now - self._last_draw < 0.1:
                return
            self._last_draw = now
            self._window.append((now, self.done))
            while len(self._window) > 2 and now - self._window[0][0] > 2.0:
                self._window.pop(0)
            t0, d0 = self._window[0]
            rate = (self.done - d0) / (now - t0) if now > t0 else 0.0
            frac = min(self.done / self.total, 1.0)
            width = 30
            bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
            line = (
                f"\r{self.label:<18.18} [{bar}] {self.done:>7}/{self.total:<7} "
                f"{rate:>8.0f} pods/s {now - self._start:>6.1f}s"
            )
        self.stream.write(line)
        self.stream.flush()

    def close(self) -> None:
        """Erase the line, so the report that follows starts clean."""
        if self.enabled:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()
