"""NodeResourcesBalancedAllocation scores: Skip for best-effort pods, the std formula under v1.35
and the change-in-balance formula under v1.37 (the default release).

Expected numbers are worked by hand from balanced_allocation.go of each release (comments show
the work).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from schedsvc.model import Container, Node, Pod
from schedsvc.plugins import node_resources_balanced_allocation as ba
from tests import builders
from tests.builders import make_node, pod_requesting
from tests.plugins.node_resources_balanced_allocation_cases import (
    GPU,
    V135,
    V137,
    WITH_EPHEMERAL,
    Gi,
    Mi,
    run_score,
    snapshot_with,
)

# ---- score under v1.35: the balance with the pod ---------------------------------------------

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
