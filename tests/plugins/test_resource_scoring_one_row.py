"""The scalar one-row path of NodeResourcesFit and BalancedAllocation (used when batching
rescores a single node) gives exactly what the vectorized kernels give for that row."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from schedsvc.framework.podinfo import pod_info
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Container, Node, Pod
from schedsvc.plugins import node_resources_balanced_allocation as balanced
from schedsvc.plugins import node_resources_fit as fit
from tests.builders.resource_args import GPU, STRATEGIES, STRATEGY_IDS


def random_cluster(rng: random.Random) -> Snapshot:
    snap = Snapshot()
    for i in range(rng.randint(2, 30)):
        alloc = {"cpu": rng.choice([0, 500, 4000, 64000]), "memory": rng.choice([0, 2**30, 2**40]),
                 "pods": rng.choice([110, 110, 3, 1])}
        if rng.random() < 0.5:
            alloc["ephemeral-storage"] = rng.choice([0, 10**9])
        if rng.random() < 0.4:
            alloc[GPU] = rng.randint(0, 8)
        snap.upsert_node(Node(name=f"n{i}", allocatable=alloc))
    for j in range(rng.randint(0, 60)):
        req = {k: rng.choice([0, 1, 250, 10**6, 3 * 2**29]) for k in ("cpu", "memory")
               if rng.random() < 0.7}
        if rng.random() < 0.3:
            req[GPU] = rng.randint(1, 3)
        snap.add_pod(Pod(uid=f"p{j}", containers=(Container("c", requests=req),)),
                     f"n{rng.randrange(snap.num_nodes)}")
    return snap


@pytest.mark.parametrize("args", STRATEGIES, ids=STRATEGY_IDS)
def test_one_row_scores_equal_the_vectorized_scores(args: dict[str, Any] | None) -> None:
    rng = random.Random(17)
    plugins = [fit.new(args), balanced.new(
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]} if args else None
    )]
    for _ in range(200):
        snap = random_cluster(rng)
        req = {"cpu": rng.choice([1, 100, 3000]), "memory": rng.choice([1, 2**28, 2**35])}
        if rng.random() < 0.5:
            req[GPU] = rng.randint(1, 2)
        if rng.random() < 0.3:
            req["ephemeral-storage"] = 10**8
        info = pod_info(Pod(uid="x", containers=(Container("c", requests=req),)))
        rows = snap.order
        for pl in plugins:
            state = pl.pre_score(info, snap, rows)
            if not isinstance(state, tuple):
                continue
            whole = pl.score(state, info, snap, rows)
            ones = [int(pl.score(state, info, snap, np.array([r], dtype=np.intp))[0])
                    for r in rows.tolist()]
            assert ones == whole.tolist(), pl.name


@pytest.mark.parametrize("args", [None, {"ignoredResources": [GPU]}], ids=["default", "ignored"])
def test_one_row_filter_agrees_with_the_vectorized_filter(args: dict[str, Any] | None) -> None:
    rng = random.Random(23)
    plugin = fit.new(args)
    verdicts = set()
    for _ in range(200):
        snap = random_cluster(rng)
        req = {k: rng.choice([0, 1, 500, 3000, 2**30]) for k in ("cpu", "memory")
               if rng.random() < 0.8}
        if rng.random() < 0.4:
            req[GPU] = rng.randint(1, 4)
        if rng.random() < 0.2:
            req["ephemeral-storage"] = rng.choice([1, 10**9])
        info = pod_info(Pod(uid="x", containers=(Container("c", requests=req),)))
        state = plugin.pre_filter(info, snap).state
        rows = snap.order
        whole = plugin.filter(state, info, snap, rows).feasible.tolist()
        ones = [plugin.filter_one(state, info, snap, r) for r in rows.tolist()]
        assert ones == whole
        verdicts.update(whole)
    assert verdicts == {True, False}  # both verdicts were reached
