"""NodeResourcesBalancedAllocation: favour nodes whose resource fractions stay close together.

kube's noderesources/balanced_allocation.go. Unlike NodeResourcesFit's scoring it reads the
plain requests (useRequested: no 100m/200Mi defaults) of the pod and of the node, and PreScore
returns Skip for a pod that requests none of the configured resources (kubernetes#129138), so
such a pod scores 0 here on every node. The balance of a node is int((1 - std) * 100) over the
fractions requested/allocatable, each capped at 1. kube v1.35 scores the balance with the pod;
v1.37 scores the change the pod makes, 50 + (50 + balanceWithPod - balanceWithoutPod) / 2
(around 75 when the pod barely changes it, towards 100 when it improves it), which the
emulated version selects. There is no NormalizeScore.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..framework import SKIP, PluginTraits, Rows, Skip
from ..framework.feature import DEFAULT_FEATURES, Features
from ..framework.podinfo import PodInfo
from ..framework.snapshot import IntArray, Snapshot
from .resource_scoring import (
    DEFAULT_RESOURCES,
    ResourceSpec,
    balanced_allocation,
    balanced_allocation_change,
    gather,
    parse_resources,
    reject_unknown_keys,
)
from .resource_scoring_one import (
    balanced_allocation_change_one,
    balanced_allocation_one,
    gather_one,
)

__all__ = ["NAME", "NodeResourcesBalancedAllocationArgs", "NodeResourcesBalancedAllocation", "new"]

NAME = "NodeResourcesBalancedAllocation"

_FIELD = f"pluginConfig[{NAME}].args"


@dataclass(frozen=True, slots=True)
class NodeResourcesBalancedAllocationArgs:
    """kube's NodeResourcesBalancedAllocationArgs after defaulting; every weight must be 1."""

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES

    def __post_init__(self) -> None:
        """ValidateNodeResourcesBalancedAllocationArgs."""
        seen: set[str] = set()
        for i, r in enumerate(self.resources):
            f = f"{_FIELD}.resources[{i}]"
            if r.name in seen:
                raise ConfigError(f"{f}.name", f'Duplicate value: "{r.name}"')
            seen.add(r.name)
            if r.weight != 1:
                raise ConfigError(f"{f}.weight", "must be 1")

    @classmethod
    def parse(cls, args: Mapping[str, Any] | None) -> NodeResourcesBalancedAllocationArgs:
        if not args:
            return cls()
        reject_unknown_keys(args, ("apiVersion", "kind", "resources"), _FIELD)
        kind = args.get("kind", "NodeResourcesBalancedAllocationArgs")
        if kind != "NodeResourcesBalancedAllocationArgs":
            raise ConfigError(
                f"{_FIELD}.kind", f"expected NodeResourcesBalancedAllocationArgs, got {kind!r}"
            )
        return cls(resources=parse_resources(args.get("resources"), f"{_FIELD}.resources"))


class NodeResourcesBalancedAllocation:
    name = NAME
    traits = PluginTraits(
        normalize_is_identity=True,  # kube has no NormalizeScore for it
        pre_score_assume_stable=True,  # reads only the pod
        row_usage_only=True,  # allocatable, requested, nonzero_requested of the row
    )

    def __init__(
        self, args: NodeResourcesBalancedAllocationArgs, features: Features = DEFAULT_FEATURES
    ) -> None:
        self.args = args
        # v1.37: the change in balance the pod makes; v1.35: the balance with the pod
        self.scores_change = features.balanced_allocation_scores_change

    def _pod_requests(self, pod: PodInfo) -> tuple[int, ...]:
        req = pod.requests  # useRequested: no non-zero defaults
        return tuple(req.get(r.name, 0) for r in self.args.resources)

    def pre_score(self, pod: PodInfo, snap: Snapshot, rows: Rows) -> tuple[int, ...] | Skip:
        requests = self._pod_requests(pod)
        if not any(requests):  # isBestEffortPod over the configured resources
            return SKIP
        return requests

    def score(
        self, state: tuple[int, ...] | None, pod: PodInfo, snap: Snapshot, rows: Rows
    ) -> IntArray:
        """state None: preScore is disabled; kube's Score then computes the requests itself
        and scores a pod requesting none of the resources 0 (what PreScore's Skip gives)."""
        if len(rows) == 1:  # batching's rescore of one node: the scalar path
            return np.array([self.score_one(state, pod, snap, int(rows[0]))], dtype=np.int64)
        if state is None:
            state = self._pod_requests(pod)
            if not any(state):
                return np.zeros(len(rows), dtype=np.int64)
        alloc, req = gather(snap, rows, self.args.resources, state, use_requested=True)
        if self.scores_change:
            return balanced_allocation_change(alloc, req, state)
        return balanced_allocation(alloc, req)

    def score_one(
        self, state: tuple[int, ...] | None, pod: PodInfo, snap: Snapshot, row: int
    ) -> int:
        if state is None:  # preScore disabled, as in score
            state = self._pod_requests(pod)
            if not any(state):
                return 0
        a, r = gather_one(snap, row, self.args.resources, state, use_requested=True)
        if self.scores_change:
            return balanced_allocation_change_one(a, r, state)
        return balanced_allocation_one(a, r)

    def normalize(self, state: Any, pod: PodInfo, scores: IntArray) -> IntArray:
        return scores  # kube's BalancedAllocation has no ScoreExtensions

    def sign(self, pod: PodInfo) -> bytes | None:
        """Score reads only the pod's requests of the configured resources."""
        return b"".join(
            f"{r.name}={v};".encode()
            for r, v in zip(self.args.resources, self._pod_requests(pod), strict=True)
        )


def new(
    args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
) -> NodeResourcesBalancedAllocation:
    return NodeResourcesBalancedAllocation(
        NodeResourcesBalancedAllocationArgs.parse(args), features
    )

