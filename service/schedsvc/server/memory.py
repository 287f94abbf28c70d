"""A server-wide memory budget: refuse work that would grow the process past it.

Every tenant's state lives in one process, so without a bound a few valid requests can grow it
until an allocation fails (MemoryError, or the kernel's OOM killer) and every tenant loses.
Before a request converts anything, `MemoryBudget.admit` compares the process's memory plus
what the request may add (its serialized size times GROWTH_FACTOR, measured) with the budget,
and refuses with ResourceExhausted (RESOURCE_EXHAUSTED with a retry delay) instead.

Two measures, each against its own limit, both from one read of /proc/self/statm:
- resident set (RSS) against `rss_bytes`: what a cgroup or the machine runs out of;
- virtual size against `vm_bytes`, only when RLIMIT_AS is set: that limit counts address space,
  which glibc's per-thread arenas and thread stacks make far larger than RSS (a fresh server
  has ~770 MB of it for ~70 MB resident).

The check must cost nothing on the Schedule hot path: the reading is cached for
REFRESH_SECONDS, and while the headroom exceeds the worst a request may add (the largest
message times GROWTH_FACTOR) a request is admitted on that cached reading alone, without
computing its size. Nearer the limit every request reads /proc afresh, computes its size and
reserves its estimate until it ends, so concurrent requests cannot all pass on one reading.
"""

from __future__ import annotations

import logging
import os
import resource
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from google.protobuf.message import Message

from ..errors import ResourceExhausted

__all__ = [
    "DEFAULT_FRACTION",
    "GROWTH_FACTOR",
    "MemoryBudget",
    "EXPLAIN_BYTES_PER_NODE",
    "MemoryLimits",
    "estimate",
    "memory_limits",
]

log = logging.getLogger("schedsvc.server")

# the share of the detected limit the budget allows: the rest absorbs what admission cannot
# foresee (transient arrays of a cycle, responses, messages being received)
DEFAULT_FRACTION = 0.8
# RSS growth per serialized request byte, measured (bench-free, /tmp script in the issue-30
# report): nodes 16-31x (columns, indexes), bound pods 15-22x, PodDisruptionBudgets 7-10x;
# the largest, rounded up, for all
GROWTH_FACTOR = 32
# an Explain's answer and its temporaries, per node of the cluster (a verdict, reasons and a
# score per plugin; ~1 KB measured, doubled)
EXPLAIN_BYTES_PER_NODE = 2048
# how long a reading of /proc/self/statm serves while the headroom is wide
REFRESH_SECONDS = 0.010
# retry delay of a refusal: memory frees when other tenants' requests end or clusters shrink
RETRY_AFTER_SECONDS = 2.0
_UNLIMITED = 1 << 60  # cgroup v1 writes "no limit" as a number near 2^63
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    """The budget: resident bytes and address-space bytes, 0 for none; `source` says where
    they came from (logged at start)."""

    rss_bytes: int = 0
    vm_bytes: int = 0
    source: str = "disabled"

    @property
    def enabled(self) -> bool:
        return self.rss_bytes > 0 or self.vm_bytes > 0


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    if not text.isdigit():
        return None  # cgroup v2 writes "max" for no limit
    n = int(text)
    return n if 0 < n < _UNLIMITED else None


def _detected_rss_limit() -> tuple[int, str]:
    """The smallest of the cgroup's memory limit (v2, then v1) and physical memory."""
    found: list[tuple[int, str]] = []
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        n = _read_int(path)
        if n is not None:
            found.append((n, path))
    try:
        found.append((os.sysconf("SC_PHYS_PAGES") * _PAGE, "physical memory"))
    except (OSError, ValueError):
        pass
    return min(found) if found else (0, "none found")


def _detected_vm_limit() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    return 0 if soft == resource.RLIM_INFINITY or soft <= 0 else soft


def memory_limits(max_memory_mib: float | None, fraction: float = DEFAULT_FRACTION) -> MemoryLimits:
    """The budget for `--max-memory-mib`: None derives it (`fraction` of the cgroup limit or
    physical memory for RSS, of RLIMIT_AS for address space), 0 disables it, a number is the
    RSS budget in MiB (RLIMIT_AS, a hard fact of the process, still bounds address space)."""
    if max_memory_mib is not None and max_memory_mib <= 0:
        return MemoryLimits()
    vm = int(_detected_vm_limit() * fraction)
    if max_memory_mib is not None:
        rss, source = int(max_memory_mib * (1 << 20)), "--max-memory-mib"
    else:
        total, origin = _detected_rss_limit()
        rss, source = int(total * fraction), f"{fraction:.0%} of {origin}"
    if vm:
        source += f"; address space {fraction:.0%} of RLIMIT_AS"
    return MemoryLimits(rss, vm, source)


class _Statm:
    """(resident, virtual) bytes of this process: one pread of a file kept open (~4 µs;
    opening it each time costs ~20)."""

    def __init__(self) -> None:
        self._fd = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)

    def __call__(self) -> tuple[int, int]:
        size, resident = os.pread(self._fd, 128, 0).split()[:2]
        return int(resident) * _PAGE, int(size) * _PAGE


def estimate(message: Message, per_node: int = 0, nodes: int = 0) -> int:
    """What a request may add: its serialized size times GROWTH_FACTOR (computing the size
    costs ~0.3 µs per pod, so it is only asked near the limit), plus `per_node` bytes for
    each of `nodes` (an Explain's answer has a verdict per node of its cluster)."""
    return message.ByteSize() * GROWTH_FACTOR + per_node * nodes


class MemoryBudget:
    """The server-wide budget. Thread-safe; `admit` is called on the event loop and on worker
    threads alike, and costs a clock read and two comparisons while the headroom is wide."""

    def __init__(
        self, limits: MemoryLimits, worst_request_bytes: int = 64 << 20,
        read: Callable[[], tuple[int, int]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`worst_request_bytes`: the largest request the server accepts (its message size)."""
        self.limits = limits
        self.worst = worst_request_bytes * GROWTH_FACTOR
        self._read = read or (_Statm() if limits.enabled else (lambda: (0, 0)))
        self._clock = clock
        self._lock = threading.Lock()
        self._rss = self._vm = 0
        self._read_at = -float("inf")
        self._reserved = 0  # estimates of admitted requests near the limit, until they end
        self.refusals = 0
        if limits.enabled:
            log.info(
                "memory budget: %d MiB resident, %d MiB address space (%s)",
                limits.rss_bytes >> 20, limits.vm_bytes >> 20, limits.source,
            )

    def _refresh(self, now: float) -> None:
        self._rss, self._vm = self._read()
        self._read_at = now

    def roomy(self) -> bool:
        """Whether any request fits on the cached reading: admit needs no size then."""
        lim = self.limits
        if not lim.enabled:
            return True
        now = self._clock()
        if now - self._read_at > REFRESH_SECONDS:
            with self._lock:
                self._refresh(now)
        extra = self._reserved + self.worst
        return (lim.rss_bytes <= 0 or self._rss + extra <= lim.rss_bytes) and (
            lim.vm_bytes <= 0 or self._vm + extra <= lim.vm_bytes
        )

    def admit(self, what: str, need: Callable[[], int]) -> int:
        """Admit `what`, a request expected to add `need()` bytes (asked only near the limit;
        `estimate` gives it for a message). Returns the bytes reserved, to `release` when
        the request ends; ResourceExhausted when the process would pass the budget."""
        if self.roomy():
            return 0
        want = need()
        lim = self.limits
        with self._lock:
            self._refresh(self._clock())
            total = self._reserved + want
            over = [
                f"{label} {(have + total) >> 20} MiB > {limit >> 20} MiB"
                for label, have, limit in (
                    ("resident", self._rss, lim.rss_bytes),
                    ("address space", self._vm, lim.vm_bytes),
                )
                if limit > 0 and have + total > limit
            ]
            if over:
                self.refusals += 1
                raise ResourceExhausted(
                    f"{what} would take the server past its memory budget ({', '.join(over)} "
                    f"with this request's estimated {want >> 20} MiB; --max-memory-mib, "
                    f"{lim.source}): retry later or send smaller requests",
                    RETRY_AFTER_SECONDS,
                )
            self._reserved += want
        return want

    def release(self, reserved: int) -> None:
        if reserved:
            with self._lock:
                self._reserved -= reserved

    def counts(self) -> dict[str, int]:
        """For metrics (the process's own RSS and address space are prometheus-client's
        process_resident_memory_bytes and process_virtual_memory_bytes)."""
        return {
            "memory_budget_bytes": self.limits.rss_bytes,
            "memory_budget_address_space_bytes": self.limits.vm_bytes,
            "memory_reserved_bytes": self._reserved,
            "memory_refusals": self.refusals,
        }
