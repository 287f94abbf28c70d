"""Which Schedule requests start on the event loop, and for how long (a slice).

Handing a request to an executor thread and its response back costs a few thread switches,
more than a batch of hinted pods costs to schedule; a batch that fits a short slice is cheapest
scheduled right on the loop. The loop also answers health, reflection and every other call, so
a slice is bounded three ways:

- in time: `slice_seconds`, after which the rest of the batch moves to the executor
  (schedule_call.py keeps the cluster across the move);
- per cluster, by what its pods recently cost: a cluster with a pod slower than a slice (a
  full cycle on many nodes, a preemption) or a rejected request whose conversion alone was, in
  the last SLOW_MEMORY_SECONDS, never starts on the loop, nor one the loop has not yet seen a
  request of, nor one grown by more than GROWTH since, nor a request whose conversion alone
  would outlast it (guessed from the cluster's last request, and watched while it converts:
  the clock is read before each pod, and a pod the caches have not seen that is larger than
  schedule_call.LOOP_MAX_MISS_BYTES is not converted on the loop at all, so a conversion past
  the slice moves to a thread);
- per loop iteration: one slice at a time, and the next only after the loop has run what was
  ready meanwhile, so a health check waits behind at most one slice per iteration however many
  streams are busy.
"""

from __future__ import annotations

import asyncio
import math
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from ..engine.scheduler import Cluster
from .schedule_call import ScheduleCall

__all__ = ["InlinePolicy"]

# a cluster with a pod slower than a slice (a preemption, a full cycle on many nodes) keeps
# its batches off the loop this long after that pod: such pods come in runs (pods that fit
# nowhere, a snapshot change that ended every hint), and one of them stalls the loop at most
# once per this long, not once per few requests
SLOW_MEMORY_SECONDS = 10.0
# a cluster grown by more than this fraction since its cost was measured is measured again on
# a worker thread: a full cycle's cost grows with its nodes
GROWTH = 0.125


@dataclass(slots=True)
class _Cost:
    slow_until: float  # on the policy's clock
    nodes: int  # the cluster's nodes when measured
    convert_seconds_per_pod: float


class InlinePolicy:
    """Touched on the event loop only."""

    def __init__(
        self, slice_seconds: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.slice_seconds = slice_seconds
        self.clock = clock
        self._free = True
        self.end = math.inf  # the current slice's end on the perf_counter clock
        self.slices = 0  # requests begun on the loop (metrics, tests and benchmarks read it)
        self.rests = 0  # of those, requests whose rest moved to a worker thread
        # weak: a deleted cluster (or a read-only request's throwaway one) takes its entry along
        self._costs: weakref.WeakKeyDictionary[Cluster, _Cost] = weakref.WeakKeyDictionary()

    def begin(self, cluster: Cluster | None, pods: int) -> Callable[[], bool] | None:
        """The slice's end (asked before each pod: true once its time is up) when a request
        of `pods` pods for `cluster` may start on the loop now, or None: run it on the
        executor."""
        if self.slice_seconds <= 0 or not self._free or cluster is None:
            return None
        cost = self._costs.get(cluster)
        if cost is None or self.clock() < cost.slow_until:
            return None
        if cluster.num_nodes() > cost.nodes * (1 + GROWTH):
            return None  # read without the lock: a stale count only delays the slices
        if pods * cost.convert_seconds_per_pod > self.slice_seconds:
            return None
        self._free = False
        asyncio.get_running_loop().call_soon(self._release)
        self.slices += 1
        end = self.end = time.perf_counter() + self.slice_seconds
        return lambda: time.perf_counter() >= end

    def past_end(self) -> bool:
        """Whether the slice begun last is over (asked while a request converts on the loop)."""
        return time.perf_counter() >= self.end

    def _release(self) -> None:
        self._free = True

    def rejected(self, cluster: Cluster | None, seconds: float, pods: int) -> None:
        """A request of `cluster` refused while converting, after `seconds`: its conversion
        cost counts as an accepted one's does, so a client repeating a slow bad request does
        not get the loop each time. It measured no scheduling, so a cluster not measured yet
        stays so (off the loop)."""
        old = self._costs.get(cluster) if cluster is not None else None
        if old is None:
            # a cluster not measured yet stays off the loop until a request of it is: this one
            # says nothing of what its pods cost to schedule
            return
        now = self.clock()
        slow_until = now + SLOW_MEMORY_SECONDS if seconds > self.slice_seconds else now
        old.slow_until = max(slow_until, old.slow_until)
        old.convert_seconds_per_pod = max(seconds / max(1, pods), old.convert_seconds_per_pod)

    def record(self, call: ScheduleCall) -> None:
        """What a finished request cost, wherever it ran."""
        now = self.clock()
        slow_until = now + SLOW_MEMORY_SECONDS if call.max_pod_seconds > self.slice_seconds else now
        old = self._costs.get(call.cluster)
        cost = _Cost(
            max(slow_until, old.slow_until) if old is not None else slow_until,
            call.cluster.num_nodes(),
            call.convert_seconds / max(1, len(call.pods)),
        )
        self._costs[call.cluster] = cost
