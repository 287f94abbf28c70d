"""NodeResourcesBalancedAllocation: Skip for best-effort pods, the std formula under v1.35 and
the change-in-balance formula under v1.37, args.

Expected numbers are worked by hand from balanced_allocation.go of each release (comments show
the work); the last test checks the vectorized plugin against a per-node scalar reference.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework import SKIP
from schedsvc.framework.feature import EmulatedVersion, Features
from schedsvc.framework.podinfo import PodInfo, pod_info
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Container, Node, Pod
from schedsvc.plugins import node_resources_balanced_allocation as ba
from schedsvc.plugins.resource_scoring import is_scalar_resource_name
from tests import builders
from tests.builders import make_node, pod_requesting

GPU = "example.com/gpu"
Mi = 1024 * 1024


# ---- builders --------------------------------------------------------------------------------


snapshot_with = builders.snapshot_of


V135 = Features(EmulatedVersion.V1_35)
V137 = Features(EmulatedVersion.V1_37)


def run_score(
    snap: Snapshot, pod: Pod, args: Mapping[str, Any] | None = None,
    features: Features = V137,
) -> list[int] | None:
    """Normalized scores over every node, or None when PreScore says Skip."""
    return builders.run_score(ba.new(args, features), pod, snap)


# ---- score under v1.35: the balance with the pod ---------------------------------------------

WITH_EPHEMERAL = {
    "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "ephemeral-storage"}]
}

CASES = [
    pytest.param(
        [make_node("n1", **{"cpu": 4000, "memory": 10000}),
         make_node("n2", **{"cpu": 6000, "memory": 10000})],
        [],
        pod_requesting(**{"cpu": 3000, "memory": 5000}),
        None,
        [87, 100],
        # n1: cpu 0.75, mem 0.5 -> std |0.75-0.5|/2 = 0.125 -> int(87.5) = 87
        # n2: 0.5, 0.5 -> std 0 -> 100
        id="differently sized nodes",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 2000, "memory": 10000})],
        [],
        pod_requesting(**{"cpu": 3000, "memory": 5000}),
        None,
        [75],
        # cpu 1.5 capped at 1, mem 0.5 -> std 0.25 -> 75
        id="a fraction above one is capped",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 10000, "memory": 20000})],
        [(pod_requesting(**{"cpu": 3000, "memory": 0}, uid="e"), "n")],
        pod_requesting(**{"cpu": 3000, "memory": 5000}),
        None,
        [82],
        # cpu (3000+3000)/10000 = 0.6, mem 5000/20000 = 0.25 -> std 0.175 -> int(82.5) = 82
        id="existing requests count",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 1000, "memory": 1000 * Mi})],
        [(Pod(uid="e", containers=(Container(name="c"),)), "n")],
        pod_requesting(**{"cpu": 500, "memory": 250 * Mi}),
        None,
        [87],
        # useRequested: the existing pod without requests counts 0, not 100m/200Mi
        # cpu 0.5, mem 0.25 -> std 0.125 -> 87 (with non-zero: 0.6, 0.45 -> 92)
        id="pods without requests count nothing, unlike NodeResourcesFit",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 1000, "memory": 1000 * Mi})],
        [],
        pod_requesting(**{"cpu": 500}, containers=3),
        None,
        [75],
        # the pod's own missing memory is 0 here: cpu 0.5, mem 0 -> std 0.25 -> 75
        id="the pod's missing requests count zero",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 10000})],
        [],
        Pod(uid="p", containers=(Container(name="c"),)),
        None,
        None,
        id="a best-effort pod is skipped",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 10000})],
        [],
        pod_requesting(**{"ephemeral-storage": 5}),
        None,
        None,
        # isBestEffortPod looks only at the configured resources (cpu, memory)
        id="a pod requesting only unscored resources is skipped",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 0})],
        [],
        pod_requesting(**{"cpu": 1000, "memory": 5000}),
        None,
        [100],
        # memory has no allocatable: skipped; one fraction -> std 0 -> 100
        id="a resource without allocatable is left out",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 10000, "ephemeral-storage": 4000})],
        [],
        pod_requesting(**{"cpu": 3000, "memory": 5000, "ephemeral-storage": 1000}),
        WITH_EPHEMERAL,
        [79],
        # fractions 0.75, 0.5, 0.25: mean 0.5, sum of squares 0.125, std sqrt(0.125/3) = 0.2041
        # -> int(79.58) = 79
        id="three resources use the population standard deviation",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 10000, GPU: 4})],
        [],
        pod_requesting(**{"cpu": 3000, "memory": 5000}),
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]},
        [87],
        # the pod does not request the gpu: skipped, back to two fractions -> 87
        id="an extended resource the pod does not request is left out",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 10000, GPU: 4})],
        [],
        pod_requesting(**{"cpu": 3000, "memory": 5000, GPU: 1}),
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]},
        [79],
        # 0.75, 0.5, 0.25 as above -> 79
        id="an extended resource the pod requests is included",
    ),
]


@pytest.mark.parametrize("nodes, placed, pod, args, want", CASES)
def test_score_v1_35(
    nodes: list[Node],
    placed: list[tuple[Pod, str]],
    pod: Pod,
    args: Mapping[str, Any] | None,
    want: list[int] | None,
) -> None:
    assert run_score(snapshot_with(nodes, placed), pod, args, V135) == want


# ---- score under v1.37: 50 + (50 + withPod - withoutPod) / 2 ---------------------------------
# balance(x) is v1.35's score over fractions x; "without" is the node's requests without the
# pod, over the same resources (a scalar resource only when the pod requests it).

Gi = 1024 * Mi
CASES_1_37 = [
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 8 * Gi})],
        [],
        pod_requesting(**{"cpu": 2000, "memory": 1 * Gi}),
        None,
        [65],
        # FINDINGS.md's example: with 0.5, 0.125 -> std 0.1875 -> 81; without 0, 0 -> 100
        # -> 50 + (50 + 81 - 100) / 2 = 50 + 31 / 2 = 65 (v1.35: 81)
        id="an empty node: the worked example of the oracle",
    ),
    pytest.param(
        [make_node("n1", **{"cpu": 4000, "memory": 10000}),
         make_node("n2", **{"cpu": 6000, "memory": 10000})],
        [],
        pod_requesting(**{"cpu": 3000, "memory": 5000}),
        None,
        [68, 75],
        # n1: with 87 (as under v1.35), without 100 -> 50 + 37 / 2 = 68
        # n2: with 100, without 100 -> 50 + 50 / 2 = 75: an unchanged balance scores 75
        id="differently sized nodes",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 2000, "memory": 10000})],
        [],
        pod_requesting(**{"cpu": 3000, "memory": 5000}),
        None,
        [62],
        # with: cpu capped at 1, mem 0.5 -> 75; without 100 -> 50 + 25 / 2 = 62
        id="a fraction above one is capped",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 10000, "memory": 20000})],
        [(pod_requesting(**{"cpu": 3000, "memory": 0}, uid="e"), "n")],
        pod_requesting(**{"cpu": 3000, "memory": 5000}),
        None,
        [73],
        # with: 0.6, 0.25 -> 82; without: 0.3, 0 -> std 0.15 -> 85 -> 50 + 47 / 2 = 73
        id="the node's own requests count in both terms",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 8 * Gi})],
        [(pod_requesting(**{"cpu": 2000, "memory": 0}, uid="e"), "n")],
        pod_requesting(**{"memory": 4 * Gi}),
        None,
        [87],
        # without: 0.5, 0 -> 75; with: 0.5, 0.5 -> 100 -> 50 + (50 + 100 - 75) / 2 = 87
        id="a pod that improves the balance scores above 75",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 8 * Gi})],
        [],
        pod_requesting(**{"cpu": 4000}),
        None,
        [50],
        # with: 1, 0 -> 50; without 100 -> 50 + (50 + 50 - 100) / 2 = 50, the floor
        id="the worst change scores 50",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 1000, "memory": 1000 * Mi})],
        [(Pod(uid="e", containers=(Container(name="c"),)), "n")],
        pod_requesting(**{"cpu": 500, "memory": 250 * Mi}),
        None,
        [68],
        # useRequested in both terms: with 0.5, 0.25 -> 87; without 0, 0 -> 100 -> 68
        id="pods without requests count nothing in either term",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 2000, "memory": 2000})],
        [(pod_requesting(**{"cpu": 3000, "memory": 1000}, uid="e"), "n")],
        pod_requesting(**{"cpu": 1000, "memory": 500}),
        None,
        [81],
        # over-committed: without cpu 1.5 capped at 1, mem 0.5 -> 75; with cpu 2 capped at 1,
        # mem 0.75 -> 87 -> 50 + (50 + 87 - 75) / 2 = 50 + 31 = 81
        id="both terms cap their fractions",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 10000})],
        [],
        Pod(uid="p", containers=(Container(name="c"),)),
        None,
        None,
        id="a best-effort pod is still skipped",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 0})],
        [],
        pod_requesting(**{"cpu": 1000, "memory": 5000}),
        None,
        [75],
        # memory has no allocatable: left out of both; one fraction -> 100 and 100 -> 75
        id="a resource without allocatable is left out of both terms",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 10000, "ephemeral-storage": 4000})],
        [(pod_requesting(**{"ephemeral-storage": 2000}, uid="e"), "n")],
        pod_requesting(**{"cpu": 3000, "memory": 5000, "ephemeral-storage": 1000}),
        WITH_EPHEMERAL,
        [81],
        # with: 0.75, 0.5, 0.75 -> mean 2/3, squares 1/144 + 1/36 + 1/144 = 1/24,
        # std sqrt(1/72) = 0.1179 -> 88; without: 0, 0, 0.5 -> mean 1/6, squares
        # 1/36 + 1/36 + 1/9 = 1/6, std sqrt(1/18) = 0.2357 -> 76
        # -> 50 + (50 + 88 - 76) / 2 = 50 + 31 = 81
        id="three resources: the population standard deviation in both terms",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 10000, GPU: 4})],
        [(pod_requesting(**{GPU: 2}, uid="e"), "n")],
        pod_requesting(**{"cpu": 3000, "memory": 5000}),
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]},
        [68],
        # the pod does not request the gpu: left out of both terms (the node's 2 gpus do not
        # count either) -> as "differently sized nodes" n1: 68
        id="an extended resource the pod does not request is left out of both terms",
    ),
    pytest.param(
        [make_node("n", **{"cpu": 4000, "memory": 10000, GPU: 4})],
        [(pod_requesting(**{GPU: 2}, uid="e"), "n")],
        pod_requesting(**{"cpu": 2000, "memory": 5000, GPU: 1}),
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]},
        [81],
        # with: 0.5, 0.5, 0.75 -> std sqrt(1/72) = 0.1179 -> 88; without: 0, 0, 0.5 ->
        # std sqrt(1/18) = 0.2357 -> 76 -> 50 + (50 + 88 - 76) / 2 = 50 + 31 = 81
        id="an extended resource the pod requests counts the node's use without the pod",
    ),
]


@pytest.mark.parametrize("nodes, placed, pod, args, want", CASES_1_37)
def test_score_v1_37(
    nodes: list[Node],
    placed: list[tuple[Pod, str]],
    pod: Pod,
    args: Mapping[str, Any] | None,
    want: list[int] | None,
) -> None:
    assert run_score(snapshot_with(nodes, placed), pod, args, V137) == want


def test_the_default_release_scores_the_change() -> None:
    snap = snapshot_with([make_node("n", **{"cpu": 4000, "memory": 8 * Gi})])
    pod = pod_requesting(**{"cpu": 2000, "memory": 1 * Gi})
    assert builders.run_score(ba.new(None), pod, snap) == [65]


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
    a = pod_info(pod_requesting(**{"cpu": 100, "memory": 5}))
    b = pod_info(pod_requesting(**{"cpu": 100, "memory": 5}, containers=2))
    c = pod_info(pod_requesting(**{"cpu": 100, "memory": 6}))
    assert plugin.sign(a) == plugin.sign(b)  # no non-zero defaults in this plugin
    assert plugin.sign(a) != plugin.sign(c)


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
