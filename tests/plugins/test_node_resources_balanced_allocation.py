"""NodeResourcesBalancedAllocation: Skip for best-effort pods, the std formula, args.

Expected numbers are worked by hand from balanced_allocation.go (comments show the work); the
last test checks the vectorized plugin against a per-node scalar reference.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework import SKIP
from schedsvc.framework.podinfo import PodInfo, pod_info
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Container, Node, Pod
from schedsvc.plugins import node_resources_balanced_allocation as ba
from schedsvc.plugins.resource_scoring import is_scalar_resource_name
from tests import builders

GPU = "example.com/gpu"
Mi = 1024 * 1024


# ---- builders --------------------------------------------------------------------------------


def make_node(name: str, allocatable: Mapping[str, int]) -> Node:
    return Node(name=name, allocatable={"pods": 110, **allocatable})


def pod_requesting(requests: Mapping[str, int], uid: str = "p", containers: int = 1) -> Pod:
    conts = [Container(name="c0", requests=dict(requests))]
    conts += [Container(name=f"c{i}") for i in range(1, containers)]
    return Pod(uid=uid, containers=tuple(conts))


snapshot_with = builders.snapshot_of


def run_score(
    snap: Snapshot, pod: Pod, args: Mapping[str, Any] | None = None
) -> list[int] | None:
    """Normalized scores over every node, or None when PreScore says Skip."""
    return builders.run_score(ba.new(args), pod, snap)


# ---- score -----------------------------------------------------------------------------------

WITH_EPHEMERAL = {
    "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "ephemeral-storage"}]
}

CASES = [
    pytest.param(
        [make_node("n1", {"cpu": 4000, "memory": 10000}),
         make_node("n2", {"cpu": 6000, "memory": 10000})],
        [],
        pod_requesting({"cpu": 3000, "memory": 5000}),
        None,
        [87, 100],
        # n1: cpu 0.75, mem 0.5 -> std |0.75-0.5|/2 = 0.125 -> int(87.5) = 87
        # n2: 0.5, 0.5 -> std 0 -> 100
        id="differently sized nodes",
    ),
    pytest.param(
        [make_node("n", {"cpu": 2000, "memory": 10000})],
        [],
        pod_requesting({"cpu": 3000, "memory": 5000}),
        None,
        [75],
        # cpu 1.5 capped at 1, mem 0.5 -> std 0.25 -> 75
        id="a fraction above one is capped",
    ),
    pytest.param(
        [make_node("n", {"cpu": 10000, "memory": 20000})],
        [(pod_requesting({"cpu": 3000, "memory": 0}, uid="e"), "n")],
        pod_requesting({"cpu": 3000, "memory": 5000}),
        None,
        [82],
        # cpu (3000+3000)/10000 = 0.6, mem 5000/20000 = 0.25 -> std 0.175 -> int(82.5) = 82
        id="existing requests count",
    ),
    pytest.param(
        [make_node("n", {"cpu": 1000, "memory": 1000 * Mi})],
        [(Pod(uid="e", containers=(Container(name="c"),)), "n")],
        pod_requesting({"cpu": 500, "memory": 250 * Mi}),
        None,
        [87],
        # useRequested: the existing pod without requests counts 0, not 100m/200Mi
        # cpu 0.5, mem 0.25 -> std 0.125 -> 87 (with non-zero: 0.6, 0.45 -> 92)
        id="pods without requests count nothing, unlike NodeResourcesFit",
    ),
    pytest.param(
        [make_node("n", {"cpu": 1000, "memory": 1000 * Mi})],
        [],
        pod_requesting({"cpu": 500}, containers=3),
        None,
        [75],
        # the pod's own missing memory is 0 here: cpu 0.5, mem 0 -> std 0.25 -> 75
        id="the pod's missing requests count zero",
    ),
    pytest.param(
        [make_node("n", {"cpu": 4000, "memory": 10000})],
        [],
        Pod(uid="p", containers=(Container(name="c"),)),
        None,
        None,
        id="a best-effort pod is skipped",
    ),
    pytest.param(
        [make_node("n", {"cpu": 4000, "memory": 10000})],
        [],
        pod_requesting({"ephemeral-storage": 5}),
        None,
        None,
        # isBestEffortPod looks only at the configured resources (cpu, memory)
        id="a pod requesting only unscored resources is skipped",
    ),
    pytest.param(
        [make_node("n", {"cpu": 4000, "memory": 0})],
        [],
        pod_requesting({"cpu": 1000, "memory": 5000}),
        None,
        [100],
        # memory has no allocatable: skipped; one fraction -> std 0 -> 100
        id="a resource without allocatable is left out",
    ),
    pytest.param(
        [make_node("n", {"cpu": 4000, "memory": 10000, "ephemeral-storage": 4000})],
        [],
        pod_requesting({"cpu": 3000, "memory": 5000, "ephemeral-storage": 1000}),
        WITH_EPHEMERAL,
        [79],
        # fractions 0.75, 0.5, 0.25: mean 0.5, sum of squares 0.125, std sqrt(0.125/3) = 0.2041
        # -> int(79.58) = 79
        id="three resources use the population standard deviation",
    ),
    pytest.param(
        [make_node("n", {"cpu": 4000, "memory": 10000, GPU: 4})],
        [],
        pod_requesting({"cpu": 3000, "memory": 5000}),
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]},
        [87],
        # the pod does not request the gpu: skipped, back to two fractions -> 87
        id="an extended resource the pod does not request is left out",
    ),
    pytest.param(
        [make_node("n", {"cpu": 4000, "memory": 10000, GPU: 4})],
        [],
        pod_requesting({"cpu": 3000, "memory": 5000, GPU: 1}),
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]},
        [79],
        # 0.75, 0.5, 0.25 as above -> 79
        id="an extended resource the pod requests is included",
    ),
]


@pytest.mark.parametrize("nodes, placed, pod, args, want", CASES)
def test_score(
    nodes: list[Node],
    placed: list[tuple[Pod, str]],
    pod: Pod,
    args: Mapping[str, Any] | None,
    want: list[int] | None,
) -> None:
    assert run_score(snapshot_with(nodes, placed), pod, args) == want


# ---- args ------------------------------------------------------------------------------------


def test_default_args() -> None:
    args = ba.NodeResourcesBalancedAllocationArgs.parse(None)
    assert [(r.name, r.weight) for r in args.resources] == [("cpu", 1), ("memory", 1)]


ARG_ERRORS = [
    pytest.param({"resources": [{"name": "cpu", "weight": 2}]}, "resources[0].weight",
                 id="a weight other than one is rejected"),
    pytest.param({"resources": [{"name": "cpu"}, {"name": "cpu"}]}, "resources[1].name",
                 id="a duplicate resource is rejected"),
    pytest.param({"resources": [{"weight": 1}]}, "resources[0].name",
                 id="a resource without a name is rejected"),
    pytest.param({"resource": []}, "args.resource", id="an unknown key is rejected"),
    pytest.param({"resources": "cpu"}, "args.resources", id="resources must be a list"),
]


@pytest.mark.parametrize("args, field", ARG_ERRORS)
def test_args_errors(args: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as exc:
        ba.new(args)
    assert field in exc.value.field
    assert exc.value.field.startswith("pluginConfig[NodeResourcesBalancedAllocation].args")


def test_sign_reads_only_the_configured_requests() -> None:
    plugin = ba.new(None)
    a = pod_info(pod_requesting({"cpu": 100, "memory": 5}))
    b = pod_info(pod_requesting({"cpu": 100, "memory": 5}, containers=2))
    c = pod_info(pod_requesting({"cpu": 100, "memory": 6}))
    assert plugin.sign(a) == plugin.sign(b)  # no non-zero defaults in this plugin
    assert plugin.sign(a) != plugin.sign(c)


# ---- scalar reference ------------------------------------------------------------------------


def ref_score(
    resources: Sequence[str], node: Node, used: Mapping[str, int], info: PodInfo
) -> int | None:
    """balancedResourceScorer for one node in plain Python floats; None for Skip."""
    pod_req = [info.requests.get(r, 0) for r in resources]
    if not any(pod_req):
        return None
    fractions: list[float] = []
    for r, pr in zip(resources, pod_req, strict=True):
        if r not in ("cpu", "memory", "ephemeral-storage") and (
            not is_scalar_resource_name(r) or pr == 0
        ):
            continue
        alloc = node.allocatable.get(r, 0)
        if alloc == 0:
            continue
        fractions.append(min(float(used.get(r, 0) + pr) / float(alloc), 1.0))
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


def random_requests(rng: random.Random, resources: Sequence[str]) -> dict[str, int]:
    his = {"cpu": 3000, "memory": 4 << 30, "ephemeral-storage": 10 << 30, GPU: 3}
    return {r: rng.choice([0, rng.randint(1, his[r])]) for r in resources if rng.random() < 0.6}


@pytest.mark.parametrize("resources", [
    ["cpu", "memory"],
    ["cpu", "memory", "ephemeral-storage", GPU],
    ["memory", GPU],
])
def test_matches_scalar_reference_on_random_clusters(resources: list[str]) -> None:
    rng = random.Random(7)
    plugin = ba.new({"resources": [{"name": r} for r in resources]})
    all_res = ["cpu", "memory", "ephemeral-storage", GPU]
    for trial in range(40):
        nodes = [
            make_node(f"n{i}", {r: rng.choice([0, 1000, 3000, 8 << 30, 5]) for r in all_res
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
        want = [ref_score(resources, snap.node(int(r)), used[snap.node(int(r)).name], info)
                for r in rows]
        if got is None:
            assert all(w is None for w in want)
        else:
            assert got == want, (trial, info.requests)
