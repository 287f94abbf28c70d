"""What the NodeResourcesBalancedAllocation test modules share: resource constants, the two
releases' feature sets, the score driver and the args that add ephemeral storage."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedsvc.framework.feature import EmulatedVersion, Features
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Pod
from schedsvc.plugins import node_resources_balanced_allocation as ba
from tests import builders

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


WITH_EPHEMERAL = {
    "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "ephemeral-storage"}]
}


Gi = 1024 * Mi
