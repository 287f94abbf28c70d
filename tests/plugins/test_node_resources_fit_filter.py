"""NodeResourcesFit Filter: the reasons and codes (unresolvable or not) per node, from a table.

Expected numbers are worked by hand from kube's formulas (fit.go, least_allocated.go,
most_allocated.go, requested_to_capacity_ratio.go, helper/shape_score.go); the work is in the
comments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from schedsvc.model import Container, Node, Pod
from tests.builders import container, make_node, pod_requesting, pod_with_containers
from tests.plugins.node_resources_fit_cases import run_filter, snapshot_with

# ---- filter ----------------------------------------------------------------------------------

FILTER_CASES = [
    pytest.param(
        [make_node("n", cpu=10, memory=20)],
        [(pod_requesting("e", cpu=10, memory=20), "n")],
        pod_with_containers(Container(name="c")),
        None,
        [[]],
        [False],
        id="a pod requesting nothing fits a full node while there is room for one more pod",
    ),
    pytest.param(
        [make_node("n", cpu=10, memory=20, pods=1)],
        [(pod_requesting("e", cpu=1), "n")],
        pod_with_containers(Container(name="c")),
        None,
        [["Too many pods"]],
        [False],
        id="a pod requesting nothing fails only on the pod count",
    ),
    pytest.param(
        [make_node("n", cpu=10, memory=20)],
        [(pod_requesting("e", cpu=10, memory=20), "n")],
        pod_requesting(cpu=1, memory=1),
        None,
        [["Insufficient cpu", "Insufficient memory"]],
        [False],
        id="too many resources fails with both cpu and memory, cpu first",
    ),
    pytest.param(
        [make_node("n", cpu=10, memory=20)],
        [(pod_requesting("e", cpu=8, memory=19), "n")],
        pod_with_containers(container(cpu=1, memory=1), init=[container(cpu=3, memory=1)]),
        None,
        [["Insufficient cpu"]],
        [False],
        # max(1, 3) = 3 cpu > 10 - 8 = 2; memory max(1, 1) = 1 <= 1
        id="an init container larger than the containers sets the cpu request",
    ),
    pytest.param(
        [make_node("n", cpu=10, memory=20)],
        [(pod_requesting("e", cpu=5, memory=5), "n")],
        pod_with_containers(container(cpu=5, memory=5), overhead={"cpu": 1}),
        None,
        [["Insufficient cpu"]],
        [False],
        # 5 + overhead 1 = 6 > 10 - 5
        id="overhead is added to the requests",
    ),
    pytest.param(
        [make_node("n", cpu=10, memory=20)],
        [(pod_requesting("e", cpu=10, memory=10), "n")],
        pod_requesting(cpu=0, memory=10),
        None,
        [[]],
        [False],
        id="an explicit zero request is not checked",
    ),
    pytest.param(
        [make_node("n", cpu=10, memory=20, ephemeral_storage=100)],
        [(pod_requesting("e", ephemeral_storage=60), "n")],
        pod_requesting(ephemeral_storage=50),
        None,
        [["Insufficient ephemeral-storage"]],
        [False],
        id="ephemeral storage is checked like cpu and memory",
    ),
    pytest.param(
        [make_node("n", cpu=10, memory=20)],
        [],
        pod_requesting(cpu=1, example_com__gpu=1),
        None,
        [["Insufficient example.com/gpu"]],
        [True],
        # no node has the resource: allocatable 0 < 1, so also unresolvable
        id="an extended resource no node has fails everywhere",
    ),
    pytest.param(
        [make_node("n", cpu=10, memory=20, example_com__gpu=2)],
        [(pod_requesting("e", example_com__gpu=1), "n")],
        pod_requesting(example_com__gpu=2),
        None,
        [["Insufficient example.com/gpu"]],
        [False],
        id="an extended resource is checked against what is left",
    ),
    pytest.param(
        [make_node("n", cpu=10, memory=20)],
        [],
        pod_requesting(cpu=1, example_com__gpu=1),
        {"ignoredResources": ["example.com/gpu"]},
        [[]],
        [False],
        id="an ignored extended resource is not checked",
    ),
    pytest.param(
        [make_node("n", cpu=10, memory=20)],
        [],
        pod_requesting(cpu=1, example_com__gpu=1),
        {"ignoredResourceGroups": ["example.com"]},
        [[]],
        [False],
        id="an extended resource in an ignored group is not checked",
    ),
    pytest.param(
        [make_node("n", cpu=10, memory=20)],
        [],
        pod_requesting(hugepages_2Mi=1),
        {"ignoredResources": ["hugepages-2Mi"]},
        [["Insufficient hugepages-2Mi"]],
        [True],
        id="ignoring applies only to extended resources, not hugepages",
    ),
    pytest.param(
        [make_node("n", cpu=4, memory=4, pods=1, ephemeral_storage=4)],
        [(pod_requesting("e", cpu=2, memory=2, ephemeral_storage=2), "n")],
        pod_requesting(cpu=3, memory=3, ephemeral_storage=3, example_com__b=1, example_com__a=1),
        None,
        [
            [
                "Too many pods",
                "Insufficient cpu",
                "Insufficient memory",
                "Insufficient ephemeral-storage",
                "Insufficient example.com/a",
                "Insufficient example.com/b",
            ]
        ],
        [True],
        id="reasons come in kube's order, scalar resources by name",
    ),
    pytest.param(
        [make_node("small", cpu=2, memory=20), make_node("busy", cpu=8, memory=20)],
        [(pod_requesting("e", cpu=6), "busy")],
        pod_requesting(cpu=3),
        None,
        [["Insufficient cpu"], ["Insufficient cpu"]],
        [True, False],
        # small: 3 > 2 allocatable, preemption cannot help; busy: 3 > 8 - 6 but 3 <= 8
        id="a request larger than the whole allocatable is unresolvable",
    ),
    pytest.param(
        [make_node("n", cpu=10, memory=20)],
        [],
        pod_requesting(foo=5, cpu=1),
        None,
        [[]],
        [False],
        id="a resource name that is neither native nor scalar is ignored",
    ),
]


@pytest.mark.parametrize(
    "nodes, placed, pod, args, want_reasons, want_unresolvable", FILTER_CASES
)
def test_filter(
    nodes: list[Node],
    placed: list[tuple[Pod, str]],
    pod: Pod,
    args: Mapping[str, Any] | None,
    want_reasons: list[list[str]],
    want_unresolvable: list[bool],
) -> None:
    snap = snapshot_with(nodes, placed)
    reasons, feasible, unresolvable = run_filter(snap, pod, args)
    assert reasons == want_reasons
    assert feasible == [not r for r in want_reasons]
    assert unresolvable == want_unresolvable
