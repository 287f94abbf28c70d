"""NodeResourcesFit scoring strategies the resource plugins' tests run under (args as a
KubeSchedulerConfiguration gives them; None: kube's defaults), over cpu, memory, ephemeral
storage and an extended resource."""

from __future__ import annotations

from typing import Any

__all__ = ["GPU", "STRATEGIES", "STRATEGY_IDS"]

GPU = "example.com/gpu"
STRATEGIES: list[dict[str, Any] | None] = [
    None,
    {"scoringStrategy": {"type": "MostAllocated",
                         "resources": [{"name": "cpu", "weight": 3}, {"name": "memory"}]}},
    {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                         "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}],
                         "requestedToCapacityRatio": {"shape": [
                             {"utilization": 0, "score": 10}, {"utilization": 40, "score": 3},
                             {"utilization": 100, "score": 0}]}}},
    {"scoringStrategy": {"type": "LeastAllocated",
                         "resources": [{"name": "cpu"}, {"name": "ephemeral-storage"},
                                       {"name": GPU, "weight": 2}]}},
]
STRATEGY_IDS = ["least", "most", "ratio", "least-3"]
