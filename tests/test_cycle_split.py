"""The cycle as kube splits it (engine/schedule_one.py, schedule_pod.py): one record per pod
in the batch state and in the observer, and a cycle that runs on what it is handed (a
CycleEnv and a CycleCursor) without reaching into the cluster."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from schedsvc.config import parse_config
from schedsvc.engine.batching import OpportunisticBatch
from schedsvc.engine.cycle_context import CycleCursor, CycleRecord
from schedsvc.engine.observer import NullObserver
from schedsvc.engine.schedule_one import schedule_one
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.model import Container, Node, Outcome, Pod

PROFILE = "default-scheduler"


def _nodes(n: int) -> list[Node]:
    return [
        Node(name=f"n{i}", labels={"kubernetes.io/hostname": f"n{i}"},
             allocatable={"cpu": 4000, "memory": 16 << 30, "pods": 110})
        for i in range(n)
    ]


def _pods(prefix: str, count: int, cpu: int, scheduler: str = PROFILE) -> list[Pod]:
    token = object()  # one shape: a run of equal pods, as the server's conversion cache marks
    base = Pod(uid="x", scheduler_name=scheduler,
               containers=(Container(name="c", requests={"cpu": cpu}),))
    return [dataclasses.replace(base, uid=f"{prefix}{i}", name=f"{prefix}{i}", shape=token)
            for i in range(count)]


class _Scheduled(NullObserver):
    def __init__(self) -> None:
        self.results: list[str] = []

    def cycle(self, rec: CycleRecord) -> None:
        if rec.result:
            self.results.append(rec.result)


def _count_records(batch: OpportunisticBatch, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The batch state's StoreScheduleResults calls, in order, by the path of the result."""
    calls: list[str] = []
    real = batch.store_result

    def wrapped(*a: Any, **k: Any) -> Any:
        calls.append(a[3].path.name)
        return real(*a, **k)

    monkeypatch.setattr(batch, "store_result", wrapped)
    return calls


@pytest.mark.parametrize("nodes", [0, 1, 6], ids=["no nodes", "one node", "six nodes"])
def test_each_pod_with_a_profile_is_recorded_once_in_the_batch_state_and_the_observer(
    nodes: int, monkeypatch: pytest.MonkeyPatch,
) -> None:
    obs = _Scheduled()
    engine = Engine(parse_config({"profiles": [{"schedulerName": PROFILE}]}), seed=3,
                    observer=obs)
    c = engine.cluster("x")
    if nodes:
        c.update(SnapshotUpdate(upsert_nodes=_nodes(nodes)))
    calls = _count_records(c.batches[PROFILE], monkeypatch)
    # a run that hints, pods too big for any node, and a pod no profile serves
    pods = _pods("a", 8, 500) + _pods("b", 2, 9000) + _pods("c", 1, 100, "nobody")
    out, _ = c.schedule(pods)
    served = [p for p in out if p.outcome is not Outcome.REJECTED]
    assert len(served) == 10
    assert len(calls) == len(served)
    assert len(obs.results) == len(served)
    assert obs.results.count("scheduled") == sum(p.outcome is Outcome.SCHEDULED for p in out)
    if nodes == 6:
        assert calls.count("HINT") == sum(p.batched for p in out) > 0
    assert calls.count("FAILED") == sum(p.outcome is Outcome.UNSCHEDULABLE for p in out)


def test_the_cycle_runs_on_the_cursor_it_is_handed() -> None:
    """Two cursors over one snapshot, as dry runs: each counts its own cycles and moves its
    own start index; the cluster's cursor is untouched."""
    engine = Engine(
        parse_config({"profiles": [{"schedulerName": PROFILE,
                                    "batching": {"enabled": False}}],
                      "percentageOfNodesToScore": 1}), seed=3,
    )
    c = engine.cluster("x")
    c.update(SnapshotUpdate(upsert_nodes=_nodes(300)))
    env = c._env()
    mine, other = CycleCursor(np.random.default_rng(1)), CycleCursor(np.random.default_rng(1))
    pods = _pods("p", 2, 100)
    got = [schedule_one(env, mine, p, True) for p in pods]
    assert [p.cycle for p in got] == [1, 2]
    assert mine.cycle == 2 and mine.next_start_index == 200  # 100 nodes visited per cycle
    assert schedule_one(env, other, pods[0], True).cycle == 1
    assert other.next_start_index == 100
    assert c.cursor.cycle == 0 and c.cursor.next_start_index == 0
