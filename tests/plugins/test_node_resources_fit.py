"""NodeResourcesFit: reasons and codes of Filter, the three scoring strategies, args.

Expected numbers are worked by hand from kube's formulas (fit.go, least_allocated.go,
most_allocated.go, requested_to_capacity_ratio.go, helper/shape_score.go); the work is in the
comments. The last test checks the vectorized plugin against a per-node scalar reference.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework import Code
from schedsvc.framework.podinfo import PodInfo, pod_info
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Container, Node, Pod
from schedsvc.plugins import node_resources_fit as fit
from schedsvc.plugins.resource_scoring import is_scalar_resource_name
from tests import builders
from tests.builders import (
    container,
    make_node,
    pod_requesting,
    pod_with_containers,
    snapshot_of,
)

GPU = "example.com/gpu"
Mi = 1024 * 1024


# ---- builders --------------------------------------------------------------------------------


snapshot_with = snapshot_of


def run_filter(
    snap: Snapshot, pod: Pod, args: Mapping[str, Any] | None = None
) -> tuple[list[list[str]], list[bool], list[bool]]:
    out = builders.run_filter(fit.new(args), pod, snap)
    assert out is not None
    res = out.result
    assert res.code == Code.UNSCHEDULABLE
    assert res.unresolvable is not None
    return out.reasons, out.feasible, res.unresolvable.tolist()


def run_score(snap: Snapshot, pod: Pod, args: Mapping[str, Any] | None = None) -> list[int]:
    out = builders.run_score(fit.new(args), pod, snap)
    assert out is not None
    return out


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


# ---- score -----------------------------------------------------------------------------------

MOST = {"scoringStrategy": {"type": "MostAllocated"}}
PACKER = {
    "scoringStrategy": {
        "type": "MostAllocated",
        "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}],
    }
}


def rtcr(shape: list[tuple[int, int]], resources: list[dict[str, Any]] | None = None) -> dict:
    strategy: dict[str, Any] = {
        "type": "RequestedToCapacityRatio",
        "requestedToCapacityRatio": {
            "shape": [{"utilization": u, "score": s} for u, s in shape]
        },
    }
    if resources is not None:
        strategy["resources"] = resources
    return {"scoringStrategy": strategy}


SHAPED = rtcr([(0, 10), (100, 0)])
TWO_NODES = [make_node("n1", cpu=4000, memory=10000), make_node("n2", cpu=6000, memory=10000)]

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


# ---- args ------------------------------------------------------------------------------------


def test_default_args() -> None:
    args = fit.NodeResourcesFitArgs.parse(None)
    assert args.strategy == fit.LEAST_ALLOCATED
    assert [(r.name, r.weight) for r in args.resources] == [("cpu", 1), ("memory", 1)]


def test_args_weight_zero_defaults_to_one_and_empty_resources_to_cpu_memory() -> None:
    a = fit.NodeResourcesFitArgs.parse(
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}}
    )
    assert [(r.name, r.weight) for r in a.resources] == [("cpu", 1)]
    b = fit.NodeResourcesFitArgs.parse({"scoringStrategy": {"type": "MostAllocated"}})
    assert [(r.name, r.weight) for r in b.resources] == [("cpu", 1), ("memory", 1)]


def test_args_accept_api_version_and_kind() -> None:
    """A kube config's args carry apiVersion and kind; they select nothing, so the args are
    kube's defaults (LeastAllocated over cpu and memory, weight 1 each)."""
    typed = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeResourcesFitArgs"}
    args = fit.NodeResourcesFitArgs.parse(typed)
    assert args == fit.NodeResourcesFitArgs.parse({})
    assert args.strategy == "LeastAllocated"
    assert [(r.name, r.weight) for r in args.resources] == [("cpu", 1), ("memory", 1)]
    fit.new(typed)  # and the plugin builds from them


ARG_ERRORS = [
    pytest.param({"bogus": 1}, "args.bogus", id="an unknown key is rejected"),
    pytest.param(
        {"scoringStrategy": {"type": "Fancy"}}, "scoringStrategy.type",
        id="an unknown strategy is rejected",
    ),
    pytest.param(
        {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 1}]}},
        "scoringStrategy.type",
        id="a strategy without a type is rejected",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "LeastAllocated", "resources": [
            {"name": "cpu", "weight": 101}]}},
        "scoringStrategy.resources[0].weight",
        id="a weight above 100 is rejected",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "LeastAllocated", "resources": [
            {"name": "cpu", "weight": -1}]}},
        "scoringStrategy.resources[0].weight",
        id="a negative weight is rejected",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "LeastAllocated", "resources": [
            {"name": "cpu", "weight": "2"}]}},
        "scoringStrategy.resources[0].weight",
        id="a weight that is not an integer is rejected",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
        "requestedToCapacityRatio.shape",
        id="the ratio strategy without a shape is rejected",
    ),
    pytest.param(
        rtcr([(50, 1), (50, 2)]), "shape[1].utilization",
        id="shape utilizations must increase",
    ),
    pytest.param(
        rtcr([(0, 1), (101, 2)]), "shape[1].utilization",
        id="a shape utilization above 100 is rejected",
    ),
    pytest.param(
        rtcr([(0, 11)]), "shape[0].score", id="a shape score above 10 is rejected",
    ),
    pytest.param(
        {"ignoredResourceGroups": ["example.com/gpu"]}, "ignoredResourceGroups[0]",
        id="an ignored resource group with a slash is rejected",
    ),
    pytest.param(
        {"ignoredResources": ["not a name"]}, "ignoredResources[0]",
        id="an ignored resource that is not a qualified name is rejected",
    ),
    pytest.param(
        {"ignoredResources": "example.com/gpu"}, "ignoredResources",
        id="ignored resources must be a list",
    ),
]


@pytest.mark.parametrize("args, field", ARG_ERRORS)
def test_args_errors(args: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as exc:
        fit.new(args)
    assert field in exc.value.field
    assert exc.value.field.startswith("pluginConfig[NodeResourcesFit].args")


# ---- sign ------------------------------------------------------------------------------------


def test_sign_equal_for_equal_requests_and_different_otherwise() -> None:
    plugin = fit.new(None)
    a = pod_info(pod_requesting("a", cpu=100, memory=5))
    b = pod_info(pod_requesting("b", memory=5, cpu=100))
    c = pod_info(pod_requesting("c", cpu=200, memory=5))
    # same requests but one more container without requests: non-zero scoring differs
    d = pod_info(pod_with_containers(container(cpu=100, memory=5), Container(name="x"), uid="d"))
    assert plugin.sign(a) == plugin.sign(b)
    assert plugin.sign(a) != plugin.sign(c)
    assert plugin.sign(a) != plugin.sign(d)


# ---- scalar reference ------------------------------------------------------------------------

STRATEGY_ARGS = [
    None,
    PACKER,
    SHAPED,
    rtcr([(0, 0), (20, 7), (60, 3), (100, 10)], [
        {"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1},
        {"name": "ephemeral-storage", "weight": 3}, {"name": GPU, "weight": 4}]),
    {"scoringStrategy": {"type": "LeastAllocated", "resources": [
        {"name": "cpu", "weight": 5}, {"name": GPU, "weight": 2}]},
     "ignoredResourceGroups": ["example.org"]},
]


def ref_filter(
    args: fit.NodeResourcesFitArgs, node: Node, used: dict[str, int], n_pods: int, info: PodInfo
) -> tuple[list[str], bool]:
    """fitsRequest for one node, straight from fit.go."""
    reasons: list[str] = []
    unresolvable = False
    if n_pods + 1 > node.allocatable.get("pods", 0):
        reasons.append("Too many pods")
    req = info.requests
    native = ["cpu", "memory", "ephemeral-storage"]
    for name in native + sorted(n for n in req if n not in native):
        q = req.get(name, 0)
        if q <= 0:
            continue
        if name not in native:
            if not is_scalar_resource_name(name):
                continue
            extended = "/" in name and "kubernetes.io/" not in name
            if extended and (
                name in args.ignored_resources
                or name.split("/")[0] in args.ignored_resource_groups
            ):
                continue
        alloc = node.allocatable.get(name, 0)
        if q > alloc - used.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or q > alloc
    return reasons, unresolvable


def ref_score(
    args: fit.NodeResourcesFitArgs, node: Node, used: dict[str, int], nonzero: dict[str, int],
    info: PodInfo,
) -> int:
    """resourceAllocationScorer.score + the strategy's scorer, one node, plain ints."""
    scores: list[tuple[int, int]] = []  # (resource score, weight)
    for spec in args.resources:
        pr = info.nonzero_requests.get(spec.name, 0)
        if spec.name in ("cpu", "memory"):
            alloc, req = node.allocatable.get(spec.name, 0), nonzero[spec.name] + pr
        elif spec.name == "ephemeral-storage":
            alloc, req = node.allocatable.get(spec.name, 0), used.get(spec.name, 0) + pr
        elif is_scalar_resource_name(spec.name) and pr != 0:
            alloc, req = node.allocatable.get(spec.name, 0), used.get(spec.name, 0) + pr
        else:
            continue
        if alloc == 0:
            continue
        if args.strategy == fit.LEAST_ALLOCATED:
            s = 0 if req > alloc else (alloc - req) * 100 // alloc
        elif args.strategy == fit.MOST_ALLOCATED:
            s = min(req, alloc) * 100 // alloc
        else:
            util = 100 if req > alloc else req * 100 // alloc
            s = ref_shape(args, util)
            if s <= 0:
                continue
        scores.append((s, spec.weight))
    wsum = sum(w for _, w in scores)
    if wsum == 0:
        return 0
    total = sum(s * w for s, w in scores)
    if args.strategy == fit.REQUESTED_TO_CAPACITY_RATIO:
        return int(total / wsum + 0.5)
    return total // wsum


def ref_shape(args: fit.NodeResourcesFitArgs, p: int) -> int:
    pts = [(pt.utilization, pt.score * 10) for pt in args.shape]
    for i, (u, s) in enumerate(pts):
        if p <= u:
            if i == 0:
                return s
            pu, ps = pts[i - 1]
            num = (s - ps) * (p - pu)
            return ps + int(num / (u - pu))  # toward zero, as Go
    return pts[-1][1]


def random_pod(rng: random.Random, uid: str) -> Pod:
    def reqs() -> dict[str, int]:
        r: dict[str, int] = {}
        for name, hi in (("cpu", 3000), ("memory", 4 << 30), ("ephemeral-storage", 10 << 30),
                         (GPU, 3), ("example.org/fpga", 2), ("hugepages-2Mi", 4)):
            if rng.random() < (0.7 if name in ("cpu", "memory") else 0.15):
                r[name] = rng.choice([0, rng.randint(1, hi)])
        return r

    conts = [Container(name=f"c{i}", requests=reqs()) for i in range(rng.randint(0, 3))]
    inits = [Container(name=f"i{i}", requests=reqs()) for i in range(rng.randint(0, 1))]
    overhead = {"cpu": rng.randint(0, 200)} if rng.random() < 0.1 else {}
    return Pod(uid=uid, containers=tuple(conts), init_containers=tuple(inits), overhead=overhead)


def random_node(rng: random.Random, name: str) -> Node:
    alloc = {"cpu": rng.choice([0, 1000, 2000, 4000, 8000]),
             "memory": rng.choice([0, 2 << 30, 4 << 30, 16 << 30]),
             "pods": rng.choice([1, 3, 110])}
    if rng.random() < 0.6:
        alloc["ephemeral-storage"] = rng.choice([0, 20 << 30])
    if rng.random() < 0.4:
        alloc[GPU] = rng.randint(0, 4)
    if rng.random() < 0.2:
        alloc["hugepages-2Mi"] = rng.randint(0, 8)
    return Node(name=name, allocatable=alloc)


@pytest.mark.parametrize("args_raw", STRATEGY_ARGS)
def test_matches_scalar_reference_on_random_clusters(args_raw: Mapping[str, Any] | None) -> None:
    rng = random.Random(20240517)
    plugin = fit.new(args_raw)
    args = plugin.args
    for trial in range(40):
        nodes = [random_node(rng, f"n{i}") for i in range(rng.randint(1, 12))]
        snap = snapshot_with(nodes)
        used = {n.name: {} for n in nodes}
        nonzero = {n.name: {"cpu": 0, "memory": 0} for n in nodes}
        count = {n.name: 0 for n in nodes}
        for k in range(rng.randint(0, 20)):
            p = random_pod(rng, f"t{trial}-{k}")
            where = rng.choice(nodes).name
            snap.add_pod(p, where)
            info = pod_info(p)
            count[where] += 1
            for r, q in info.requests.items():
                used[where][r] = used[where].get(r, 0) + q
            nonzero[where]["cpu"] += info.nonzero_cpu
            nonzero[where]["memory"] += info.nonzero_memory
        pod = random_pod(rng, f"incoming-{trial}")
        info = pod_info(pod)
        rows = snap.order
        res = plugin.filter(plugin.pre_filter(info, snap).state, info, snap, rows)
        scores = plugin.score(plugin.pre_score(info, snap, rows), info, snap, rows)
        assert res.unresolvable is not None
        for i, row in enumerate(rows):
            node = snap.node(int(row))
            want_reasons, want_unres = ref_filter(
                args, node, used[node.name], count[node.name], info
            )
            got = [r for r, m in res.reasons if m[i]]
            assert got == want_reasons, (trial, node, info.requests)
            assert bool(res.feasible[i]) == (not want_reasons)
            assert bool(res.unresolvable[i]) == want_unres
            want = ref_score(args, node, used[node.name], nonzero[node.name], info)
            assert int(scores[i]) == want, (trial, node, info.nonzero_requests)
