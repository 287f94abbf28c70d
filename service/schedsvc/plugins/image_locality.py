"""ImageLocality: favour nodes that already hold the pod's container images.

kube's image_locality.go: each init and regular container whose image (normalized with
':latest', then looked up among the names nodes report) the node holds adds
int64(float64(size) * numNodesWithImage / totalNumNodes), size being the one first reported
for that name in the cluster (kube's cache imageStates); the sum is clamped to
[23MiB, 1000MiB * numContainers] and scaled to 0..100 with integer division. No NormalizeScore.
Reads node images and the node count only: static.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..framework import MAX_NODE_SCORE, PluginTraits, Rows
from ..framework.feature import DEFAULT_FEATURES, Features
from ..framework.podinfo import PodInfo
from ..framework.snapshot import IntArray, Snapshot, normalized_image_name

__all__ = [
    "NAME",
    "MB",
    "MIN_THRESHOLD",
    "MAX_CONTAINER_THRESHOLD",
    "ImageLocality",
    "calculate_priority",
    "new",
]

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def _images(pod: PodInfo) -> list[str]:
    """Normalized images of init containers then containers (repeats count again, as in kube)."""
    p = pod.pod
    return [normalized_image_name(c.image) for c in (*p.init_containers, *p.containers)]


def calculate_priority(sum_scores: IntArray, num_containers: int) -> IntArray:
    """calculatePriority: clamp, then MaxNodeScore * (sum - min) / (max - min), integer."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = np.where(
        sum_scores < MIN_THRESHOLD,
        np.int64(MIN_THRESHOLD),
        np.where(sum_scores > max_threshold, np.int64(max_threshold), sum_scores),
    )
    # The numerator is >= 0 and, with any container, the denominator > 0: // is Go's /.
    # With no container the numerator is 0 and Go gives 0, as // does.
    out: IntArray = MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)
    return out


class ImageLocality:
    name = NAME
    traits = PluginTraits(
        score_is_static=True,
        normalize_is_identity=True,  # kube has no NormalizeScore for it
    )

    def score(self, state: Any, pod: PodInfo, snap: Snapshot, rows: Rows) -> IntArray:
        images = _images(pod)
        total = snap.num_nodes
        acc = np.zeros(len(rows), dtype=np.int64)
        if total > 0:
            for name in images:
                num_nodes = snap.image_num_nodes.get(name, 0)
                if num_nodes <= 0:
                    continue
                spread = float(num_nodes) / float(total)
                # scaledImageScore: int64(float64(size) * spread), one size per image name
                scaled = int(float(snap.image_size[name]) * spread)
                acc += snap.image_rows[name][rows] * np.int64(scaled)
        return calculate_priority(acc, len(images))

    def normalize(self, state: Any, pod: PodInfo, scores: IntArray) -> IntArray:
        return scores

    def sign(self, pod: PodInfo) -> bytes | None:
        return json.dumps(sorted(_images(pod)), separators=(",", ":")).encode()


def new(
    args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
) -> ImageLocality:
    if args:
        raise ConfigError(f"pluginConfig[{NAME}].args", "takes no arguments")
    return ImageLocality()
