"""UpdateSnapshot, Explain and Simulate: admitted per cluster, then within the memory budget.

Both take their cluster's lock, so a burst of them on one cluster waits in that cluster's line
like Schedule requests do, each waiting one holding a worker thread. Without a bound, 200
Explains on one big cluster held every `--max-workers` thread and another tenant's one-node
update waited seconds behind them. So they take a slot of the same per-cluster counter
Schedule uses (admission.Admission, `--max-queue-per-cluster`), on the event loop before they
are handed to a thread, and a request past the bound is refused there with RESOURCE_EXHAUSTED
and a retry delay. The slot is given back on the thread that ran the work, or on the loop when
the call ended before its work started.

The memory budget (memory.py) is asked on the worker thread: near the limit it computes the
request's size, which for a large message takes milliseconds the event loop cannot spare.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..engine.scheduler import Engine
from ..v1 import schedule_pb2 as pb
from .memory import EXPLAIN_BYTES_PER_NODE, MemoryBudget, estimate
from .simulation_limits import fork_bytes, simulation_size

__all__ = ["gated", "need_of"]

T = TypeVar("T")


def need_of(engine: Engine, name: str, request: Any) -> Callable[[], int]:
    """What `request` for cluster `name` may add to memory (asked only near the budget)."""
    if isinstance(request, pb.ExplainRequest):

        def explain_need() -> int:
            cluster = engine.find(name)
            nodes = cluster.num_nodes() if cluster is not None else 0
            return estimate(request, EXPLAIN_BYTES_PER_NODE, nodes)

        return explain_need
    if isinstance(request, pb.SimulateRequest):

        def simulate_need() -> int:
            cluster = engine.find(name)
            nodes = cluster.num_nodes() if cluster is not None else 0
            return estimate(request) + fork_bytes(nodes, simulation_size(request.steps))

        return simulate_need
    return lambda: estimate(request)


def gated(
    fn: Callable[[Any], T], leave: Callable[[], None],
    memory: MemoryBudget, what: str, need: Callable[[], int],
) -> Callable[[Any], T]:
    """`fn` for a request already admitted to its cluster: on its thread, it asks the
    memory budget first, and gives back the reservation and the slot (`leave`) when it ends."""

    def run(request: Any) -> T:
        try:
            reserved = memory.admit(what, need)
            try:
                return fn(request)
            finally:
                memory.release(reserved)
        finally:
            leave()

    return run
