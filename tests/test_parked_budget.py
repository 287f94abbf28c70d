"""The server-wide budget of parked batch states (batching/parked.py ParkedBudget): every cluster
and profile of a server parks within one bound, a profile over it evicts its own oldest and then
parks nothing, a deleted cluster gives its bytes back, and placements never depend on it.
"""

from __future__ import annotations

import dataclasses
import gc
from typing import Any

import numpy as np
import pytest

from schedsvc.config import parse_config
from schedsvc.engine.batching import parked
from schedsvc.engine.batching.window_cache import WindowCache
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from tests.batching_play import ZONE_KEY, config, deployment
from tests.builders import node, pod


def _cache(sig: bytes) -> WindowCache:
    """A cache of 8000 bytes (1000 positions)."""
    base = WindowCache.pending_for(sig, 0.0)
    return dataclasses.replace(base, pending=False, position=np.zeros(1000, dtype=np.intp))


def test_profiles_share_the_budget_and_a_gone_one_gives_its_bytes_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parked, "MAX_PARKED_BYTES", 1 << 30)  # only the server's budget binds
    budget = parked.ParkedBudget(20_000)
    a, b = parked.ParkedStates(budget), parked.ParkedStates(budget)
    a.park(_cache(b"a1"), set())
    a.park(_cache(b"a2"), set())
    assert budget.total == 16_000
    b.park(_cache(b"b1"), set())  # a holds the rest, and b has nothing of its own to evict
    assert b"b1" not in b and budget.total == 16_000
    a.park(_cache(b"a3"), set())  # a evicts its own oldest to stay within
    assert [s in a for s in (b"a1", b"a2", b"a3")] == [False, True, True]
    assert budget.total == 16_000
    assert a.resume(b"a2", np.ones(1000, dtype=np.bool_)) is not None
    assert budget.total == 8_000
    b.park(_cache(b"b1"), set())
    assert b"b1" in b and budget.total == 16_000
    del a  # a deleted cluster's profile
    gc.collect()
    assert budget.total == 8_000
    b.drop(b"b1")
    assert budget.total == 0
    b.park(_cache(b"b2"), set())
    b.clear()
    assert budget.total == 0


def _interleaved() -> tuple[list[Any], list[list[Any]]]:
    """150 zoned nodes; three Deployments in runs of six, twice round."""
    cluster = [node(f"n{i}", labels={ZONE_KEY: "abc"[i % 3]}) for i in range(150)]
    runs = [[pod(f"p{r}{k}{j}", **deployment(k)) for j in range(6)]
            for r in range(2) for k in range(3)]
    return cluster, runs


def _play(engine: Engine, name: str) -> list[tuple[str, str, float]]:
    cluster, runs = _interleaved()
    c = engine.cluster(name)
    c.update(SnapshotUpdate(upsert_nodes=cluster))
    out = []
    for run in runs:
        placed, _ = c.schedule(run)
        out += [(p.pod_uid, p.node_name, p.score) for p in placed]
    return out


def _resumed(engine: Engine, name: str) -> int:
    return sum(b.resumed_runs for b in engine.cluster(name).batches.values())


def test_placements_do_not_depend_on_the_budget() -> None:
    off = Engine(parse_config(config(None)), seed=7, batching_enabled=False)
    roomy = Engine(parse_config(config(None)), seed=7)
    none = Engine(parse_config(config(None)), seed=7, max_parked_bytes=1)
    try:
        want = _play(off, "x")
        assert _play(roomy, "x") == want
        assert _play(none, "x") == want
        assert _resumed(roomy, "x") == 3  # the second round resumed every Deployment
        assert _resumed(none, "x") == 0  # nothing fit: every run started afresh
        assert none.parked_budget.total == 0
    finally:
        for e in (off, roomy, none):
            e.close()


def test_a_cluster_that_parks_leaves_less_to_others_until_it_is_deleted() -> None:
    probe = Engine(parse_config(config(None)), seed=7)
    try:
        _play(probe, "x")
        held = probe.parked_budget.total  # what one cluster's run leaves parked
    finally:
        probe.close()
    assert held > 0
    engine = Engine(parse_config(config(None)), seed=7, max_parked_bytes=held)
    try:
        _play(engine, "x")
        assert engine.parked_budget.total == held
        _play(engine, "y")  # x holds the budget: y parks nothing
        assert _resumed(engine, "y") == 0
        assert engine.parked_budget.total == held
        assert engine.delete_cluster("x")
        gc.collect()
        assert engine.parked_budget.total == 0
        _play(engine, "z")  # the bytes x gave back let z park and resume
        assert _resumed(engine, "z") == 3
        assert engine.parked_budget.total <= held
    finally:
        engine.close()
