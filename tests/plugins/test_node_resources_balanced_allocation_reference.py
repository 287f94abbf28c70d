"""NodeResourcesBalancedAllocation against a per-node scalar reference: balancedResourceScore of
each release written out node by node, compared with the vectorized plugin on random clusters.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

import pytest

from schedsvc.framework import SKIP
from schedsvc.framework.feature import EmulatedVersion, Features
from schedsvc.framework.podinfo import PodInfo, pod_info
from schedsvc.model import Container, Node, Pod
from schedsvc.plugins import node_resources_balanced_allocation as ba
from schedsvc.plugins.resource_scoring import is_scalar_resource_name
from tests.builders import make_node
from tests.plugins.node_resources_balanced_allocation_cases import GPU, V135, V137, snapshot_with

# ---- scalar reference ------------------------------------------------------------------------

def ref_balance(fractions: list[float]) -> int:
    """balancedResourceScore: int((1 - std) * 100), float64 as Go sums it."""
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        total = 0.0
        for f in fractions:
            total = total + (f - mean) * (f - mean)
        std = math.sqrt(total / len(fractions))
    return int((1 - std) * 100.0)


def ref_score(
    resources: Sequence[str], node: Node, used: Mapping[str, int], info: PodInfo,
    features: Features = V137,
) -> int | None:
    """balancedResourceScorer for one node in plain Python floats; None for Skip. v1.35: the
    balance with the pod; v1.37: 50 + (50 + with - without) / 2 in Go's integers."""
    pod_req = [info.requests.get(r, 0) for r in resources]
    if not any(pod_req):
        return None
    with_pod: list[float] = []
    without_pod: list[float] = []
    for r, pr in zip(resources, pod_req, strict=True):
        if r not in ("cpu", "memory", "ephemeral-storage") and (
            not is_scalar_resource_name(r) or pr == 0
        ):
            continue
        alloc = node.allocatable.get(r, 0)
        if alloc == 0:
            continue
        with_pod.append(min(float(used.get(r, 0) + pr) / float(alloc), 1.0))
        without_pod.append(min(float(used.get(r, 0)) / float(alloc), 1.0))
    if features.emulated_version is EmulatedVersion.V1_35:
        return ref_balance(with_pod)
    delta = 50 + ref_balance(with_pod) - ref_balance(without_pod)
    return 50 + int(delta / 2)  # Go truncates toward zero


def random_requests(rng: random.Random, resources: Sequence[str]) -> dict[str, int]:
    his = {"cpu": 3000, "memory": 4 << 30, "ephemeral-storage": 10 << 30, GPU: 3}
    return {r: rng.choice([0, rng.randint(1, his[r])]) for r in resources if rng.random() < 0.6}


@pytest.mark.parametrize("features", [V135, V137], ids=["v1.35", "v1.37"])
@pytest.mark.parametrize("resources", [
    ["cpu", "memory"],
    ["cpu", "memory", "ephemeral-storage", GPU],
    ["memory", GPU],
])
def test_matches_scalar_reference_on_random_clusters(
    resources: list[str], features: Features
) -> None:
    rng = random.Random(7)
    plugin = ba.new({"resources": [{"name": r} for r in resources]}, features)
    all_res = ["cpu", "memory", "ephemeral-storage", GPU]
    for trial in range(40):
        nodes = [
            make_node(f"n{i}", **{r: rng.choice([0, 1000, 3000, 8 << 30, 5]) for r in all_res
                                if rng.random() < 0.85})
            for i in range(rng.randint(1, 10))
        ]
        snap = snapshot_with(nodes)
        used: dict[str, dict[str, int]] = {n.name: {} for n in nodes}
        for k in range(rng.randint(0, 15)):
            p = Pod(uid=f"t{trial}-{k}", containers=tuple(
                Container(name=f"c{j}", requests=random_requests(rng, all_res))
                for j in range(rng.randint(0, 2))))
            where = rng.choice(nodes).name
            snap.add_pod(p, where)
            for r, q in pod_info(p).requests.items():
                used[where][r] = used[where].get(r, 0) + q
        pod = Pod(uid=f"in{trial}", containers=(
            Container(name="c", requests=random_requests(rng, all_res)),))
        info = pod_info(pod)
        rows = snap.order
        state = plugin.pre_score(info, snap, rows)
        got = None if state is SKIP else plugin.score(state, info, snap, rows).tolist()
        want = [ref_score(resources, snap.node(int(r)), used[snap.node(int(r)).name], info,
                          features)
                for r in rows]
        # the one-row path batching rescores with agrees too
        if got is not None:
            assert [plugin.score_one(state, info, snap, int(r)) for r in rows] == got
        if got is None:
            assert all(w is None for w in want)
        else:
            assert got == want, (trial, info.requests)
