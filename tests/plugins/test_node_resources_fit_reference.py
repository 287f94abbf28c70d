"""NodeResourcesFit against a per-node scalar reference: kube's fit and scoring formulas written
out node by node, compared with the vectorized plugin on random clusters for each strategy.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest

from schedsvc.framework.podinfo import PodInfo, pod_info
from schedsvc.model import Container, Node, Pod
from schedsvc.plugins import node_resources_fit as fit
from schedsvc.plugins.resource_scoring import is_scalar_resource_name
from tests.plugins.node_resources_fit_cases import GPU, PACKER, SHAPED, rtcr, snapshot_with

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
