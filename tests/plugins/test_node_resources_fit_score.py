"""NodeResourcesFit Score: the three scoring strategies (LeastAllocated, MostAllocated,
RequestedToCapacityRatio) from a table, and existing pods' non-zero requests.

Expected numbers are worked by hand from kube's formulas (fit.go, least_allocated.go,
most_allocated.go, requested_to_capacity_ratio.go, helper/shape_score.go); the work is in the
comments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from schedsvc.model import Container, Node, Pod
from tests.builders import make_node, pod_requesting, pod_with_containers
from tests.plugins.node_resources_fit_cases import (
    MOST,
    PACKER,
    SHAPED,
    TWO_NODES,
    Mi,
    rtcr,
    run_score,
    snapshot_with,
)

SCORE_CASES = [
    pytest.param(
        TWO_NODES, [], pod_requesting(cpu=3000, memory=5000), None, [37, 50],
        # n1: cpu (4000-3000)*100/4000 = 25, mem (10000-5000)*100/10000 = 50 -> 75/2 = 37
        # n2: cpu (6000-3000)*100/6000 = 50, mem 50 -> 50
        id="least allocated on differently sized nodes",
    ),
    pytest.param(
        [make_node("n", cpu=4000, memory=10000)],
        [(pod_requesting("e", cpu=3000, memory=0), "n")],
        pod_requesting(cpu=3000, memory=5000),
        None,
        [25],
        # cpu 3000 + 3000 = 6000 > 4000 -> 0; mem 0 + 5000 -> 50; (0 + 50) / 2 = 25
        id="least allocated scores an overcommitted resource 0",
    ),
    pytest.param(
        [make_node("n", cpu=4000, memory=1000 * Mi)],
        [(pod_with_containers(Container(name="c"), uid="e"), "n")],
        pod_with_containers(Container(name="c")),
        None,
        [77],
        # non-zero requests: existing 100m/200Mi, pod 100m/200Mi
        # cpu (4000-200)*100/4000 = 95; mem (1000-400)*100/1000 = 60; (95+60)/2 = 77
        id="least allocated counts 100m and 200Mi for containers without requests",
    ),
    pytest.param(
        TWO_NODES, [], pod_requesting(cpu=3000, memory=5000), MOST, [62, 50],
        # n1: cpu 3000*100/4000 = 75, mem 50 -> 125/2 = 62; n2: 50, 50 -> 50
        id="most allocated on differently sized nodes",
    ),
    pytest.param(
        [make_node("n", cpu=4000, memory=10000)],
        [(pod_requesting("e", cpu=3000, memory=0), "n")],
        pod_requesting(cpu=3000, memory=5000),
        MOST,
        [75],
        # cpu min(6000, 4000)*100/4000 = 100, mem 50 -> 75
        id="most allocated caps the requested at the capacity",
    ),
    pytest.param(
        TWO_NODES, [], pod_requesting(cpu=3000, memory=5000), PACKER, [68, 50],
        # n1: (75*3 + 50*1) / 4 = 275/4 = 68; n2: (50*3 + 50) / 4 = 50
        id="most allocated with cpu weighted three times memory",
    ),
    pytest.param(
        TWO_NODES, [], pod_requesting(cpu=3000, memory=5000), SHAPED, [38, 50],
        # shape (0,100),(100,0): n1 cpu util 75 -> 100 - 100*75/100 = 25, mem util 50 -> 50
        # round((25 + 50) / 2) = round(37.5) = 38 (half away from zero); n2: 50
        id="requested to capacity ratio rounds the weighted mean",
    ),
    pytest.param(
        [make_node("n", cpu=1000, memory=10000)],
        [],
        pod_requesting(cpu=70, memory=10000),
        rtcr([(0, 10), (30, 0)]),
        [77],
        # shape (0,100),(30,0): cpu util 70*100/1000 = 7 -> 100 + (0-100)*(7-0)/30
        # = 100 + trunc(-23.3) = 77 (Go truncates toward zero; flooring would give 76);
        # mem util 100 -> past the last point -> 0, which does not count: 77/1 = 77
        id="requested to capacity ratio truncates toward zero on a falling segment",
    ),
    pytest.param(
        [make_node("n", cpu=1000, memory=10000)],
        [],
        pod_requesting(cpu=0, memory=5000),
        rtcr([(0, 0), (100, 10)]),
        [50],
        # cpu: explicit 0 request, util 0 -> score 0, dropped with its weight; mem util 50 -> 50
        id="requested to capacity ratio drops resources scoring zero and their weights",
    ),
    pytest.param(
        [make_node("n", cpu=1000, memory=10000)],
        [(pod_requesting("e", cpu=900, memory=0), "n")],
        pod_requesting(cpu=200, memory=2500),
        rtcr([(0, 0), (50, 4), (100, 10)]),
        [60],
        # shape (0,0),(50,40),(100,100); the existing pod sets memory 0 explicitly (no 200Mi)
        # cpu 1100 > 1000 -> f(100) = 100; mem util 25 -> 0 + (40-0)*(25-0)/50 = 20
        # round((100 + 20) / 2) = 60
        id="requested to capacity ratio scores an overcommitted resource at full utilization",
    ),
    pytest.param(
        [make_node("gpu", cpu=1000, memory=1000, example_com__gpu=4),
         make_node("plain", cpu=1000, memory=1000)],
        [],
        pod_requesting(cpu=500, memory=500),
        {"scoringStrategy": {"type": "LeastAllocated", "resources": [
            {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
            {"name": "example.com/gpu", "weight": 5}]}},
        [50, 50],
        # the pod does not request the gpu: it is skipped on every node, 50 on cpu and memory
        id="an extended resource the pod does not request is not scored",
    ),
    pytest.param(
        [make_node("gpu", cpu=1000, memory=1000, example_com__gpu=4),
         make_node("plain", cpu=1000, memory=1000)],
        [],
        pod_requesting(cpu=500, memory=500, example_com__gpu=1),
        {"scoringStrategy": {"type": "LeastAllocated", "resources": [
            {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
            {"name": "example.com/gpu", "weight": 2}]}},
        [62, 50],
        # gpu node: (50 + 50 + 75*2) / 4 = 250/4 = 62; plain: no gpu allocatable -> (50+50)/2
        id="an extended resource the pod requests is scored where nodes have it",
    ),
    pytest.param(
        [make_node("n", cpu=1000, memory=1000)],
        [],
        pod_requesting(cpu=500, memory=500),
        {"scoringStrategy": {"type": "LeastAllocated", "resources": [
            {"name": "ephemeral-storage", "weight": 1}]}},
        [0],
        # the only resource has no allocatable: weight sum 0 -> 0
        id="a node with none of the scored resources scores zero",
    ),
]


@pytest.mark.parametrize("nodes, placed, pod, args, want", SCORE_CASES)
def test_score(
    nodes: list[Node],
    placed: list[tuple[Pod, str]],
    pod: Pod,
    args: Mapping[str, Any] | None,
    want: list[int],
) -> None:
    assert run_score(snapshot_with(nodes, placed), pod, args) == want


def test_score_uses_non_zero_requests_of_existing_pods() -> None:
    # The node's NonZeroRequested counts 100m for the existing pod without requests; Requested
    # would count 0. cpu: (1000 - 100 - 400)*100/1000 = 50; memory (1000Mi - 200Mi - 300Mi)
    # *100/1000Mi = 50 -> 50. With Requested it would be cpu 60, memory 70.
    snap = snapshot_with(
        [make_node("n", cpu=1000, memory=1000 * Mi)],
        [(pod_with_containers(Container(name="c"), uid="e"), "n")],
    )
    assert run_score(snap, pod_requesting(cpu=400, memory=300 * Mi)) == [50]
