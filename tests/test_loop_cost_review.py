"""The event loop bounded by request cost, attacked (review of issue 30, defects 2 and 7)."""

from __future__ import annotations

import asyncio

from schedsvc.config import default_config
from schedsvc.engine.scheduler import Engine
from schedsvc.server.inline import InlinePolicy

SLICE = 0.01


def test_a_rejected_request_does_not_make_an_unmeasured_cluster_start_on_the_loop() -> None:
    """A cluster the loop has not yet seen a request of never starts on it: its first pod may
    be a full cycle or a preemption over every node, far longer than a slice. A request
    refused while converting (a pod without a uid, a duplicate uid, admission full) measured
    none of that, yet `rejected` left an entry saying "fast": the next request, a slow pod,
    then ran on the loop."""
    engine = Engine(default_config(), seed=1)
    c = engine.cluster("c")
    now = [100.0]

    async def run() -> None:
        p = InlinePolicy(SLICE, clock=lambda: now[0])
        assert p.begin(c, 1) is None  # never seen: on a worker
        p.rejected(c, SLICE / 100, 1)  # refused fast, e.g. pods[0] had no uid
        assert p.begin(c, 1) is None  # still never seen scheduling: still on a worker
        p.rejected(c, 3 * SLICE, 1)  # refused slow: kept off the loop, and after that too
        now[0] += 3600
        assert p.begin(c, 1) is None

    asyncio.run(run())
