"""What the NodeResourcesFit test modules share: resource constants, the plugin's filter/score
drivers and the scoring-strategy args (MostAllocated, a weighted packer, RequestedToCapacityRatio
shapes) the score, args and reference tests all use."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedsvc.framework import Code
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Pod
from schedsvc.plugins import node_resources_fit as fit
from tests import builders
from tests.builders import make_node, snapshot_of

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
