"""PluginTraits.row_usage_only is a claim a fill's rounds rely on (rescoring keyed by a row's
usage columns): the plugins making it give rows equal in allocatable, requested and
nonzero_requested equal verdicts and raw scores, whatever else differs between them (labels,
taints, images, which pods make up the usage); and only they make it."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from schedsvc.framework import SKIP
from schedsvc.framework.podinfo import pod_info
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Container, ContainerImage, Node, Pod, Taint
from schedsvc.plugins import node_resources_balanced_allocation as balanced
from schedsvc.plugins import node_resources_fit as fit
from schedsvc.plugins.registry import in_tree_registry
from tests.builders.resource_args import GPU, STRATEGIES, STRATEGY_IDS

IN_TREE = (
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
    "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeZone",
    "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation",
    "ImageLocality", "VolumeBinding",
)


def test_only_the_resource_plugins_claim_to_read_only_their_rows_usage() -> None:
    registry = in_tree_registry()
    claiming = {n for n in IN_TREE if registry.plugin_class(n).traits.row_usage_only}
    assert claiming == {"NodeResourcesFit", "NodeResourcesBalancedAllocation"}


def _twins(rng: random.Random) -> tuple[Snapshot, list[tuple[int, int]]]:
    """Pairs of nodes with equal allocatable whose pods sum to equal usage (same count, the
    requests split differently), one of each pair labelled, tainted NoSchedule and holding
    an image the other lacks."""
    snap = Snapshot()
    pairs = []
    for i in range(rng.randint(1, 8)):
        alloc = {"cpu": rng.choice([1000, 4000]), "memory": rng.choice([2**31, 2**33]),
                 "pods": rng.choice([110, 3])}
        if rng.random() < 0.4:
            alloc[GPU] = rng.randint(1, 8)
        snap.upsert_node(Node(name=f"a{i}", allocatable=alloc, labels={"side": "a"},
                              taints=(Taint("t", "x", "NoSchedule"),),
                              images=(ContainerImage(("img:1",), 10**9),)))
        snap.upsert_node(Node(name=f"b{i}", allocatable=alloc, labels={"side": "b"}))
        for j in range(rng.randint(0, 2)):
            cpu, mem = rng.choice([100, 500]), rng.choice([2**26, 2**28])
            lo, hi = rng.randint(1, cpu - 1), rng.randint(1, mem - 1)
            for node, parts in ((f"a{i}", ((lo, hi), (cpu - lo, mem - hi))),
                                (f"b{i}", ((cpu - lo, mem - hi), (lo, hi)))):
                for k, (c, m) in enumerate(parts):
                    box = Container("c", requests={"cpu": c, "memory": m})
                    snap.add_pod(Pod(uid=f"{node}-{j}-{k}-{c}", containers=(box,)), node)
        a, b = snap.index[f"a{i}"], snap.index[f"b{i}"]
        for cols in (snap.allocatable, snap.requested, snap.nonzero_requested):
            assert cols[a].tolist() == cols[b].tolist()  # the premise: equal usage columns
        pairs.append((a, b))
    return snap, pairs


@pytest.mark.parametrize("args", STRATEGIES, ids=STRATEGY_IDS)
def test_rows_equal_in_usage_get_equal_verdicts_and_scores(args: dict[str, Any] | None) -> None:
    rng = random.Random(5)
    plugins = [fit.new(args), balanced.new(
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]} if args else None
    )]
    verdicts = set()
    for _ in range(150):
        snap, pairs = _twins(rng)
        req = {"cpu": rng.choice([1, 300, 3000]), "memory": rng.choice([1, 2**28, 2**32])}
        if rng.random() < 0.4:
            req[GPU] = rng.randint(1, 3)
        info = pod_info(Pod(uid="x", containers=(Container("c", requests=req),)))
        a = np.array([p[0] for p in pairs], dtype=np.intp)
        b = np.array([p[1] for p in pairs], dtype=np.intp)
        f = plugins[0]
        state = f.pre_filter(info, snap).state
        fa = f.filter(state, info, snap, a).feasible.tolist()
        assert fa == f.filter(state, info, snap, b).feasible.tolist()
        verdicts.update(fa)
        for pl in plugins:
            pre = pl.pre_score(info, snap, np.concatenate((a, b)))
            if pre is SKIP:
                continue
            assert pl.score(pre, info, snap, a).tolist() == pl.score(pre, info, snap, b).tolist()
    assert verdicts == {True, False}  # both verdicts were reached
