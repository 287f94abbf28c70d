"""The configuration as the engine reads it, once parsed: immutable, validated."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..framework.feature import DEFAULT_EMULATED_VERSION, EmulatedVersion, Features
from ..plugins.default_preemption import DefaultPreemptionArgs

__all__ = [
    "DEFAULT_SCHEDULER_NAME",
    "DEFAULT_PARALLELISM",
    "BatchingConfig",
    "ProfileConfig",
    "SchedulerConfig",
]

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PARALLELISM = 16


@dataclass(frozen=True, slots=True)
class BatchingConfig:
    """Opportunistic batching per profile (our extension: `profiles[].batching`)."""

    enabled: bool = True
    rescore: bool = True
    max_batch_age_seconds: float = 0.5
    # beyond kube: batch pods whose only cross-node scoring is soft topology spreading (their
    # own ScheduleAnyway constraints or the defaults), scored per window from counts each
    # placement moves (exact, see engine/window_cache.py); false turns it off
    soft_spread: bool = True


@dataclass(frozen=True, slots=True)
class ProfileConfig:
    scheduler_name: str
    # per extension point, plugin names in run order
    points: Mapping[str, tuple[str, ...]]
    weights: Mapping[str, int]
    plugin_args: Mapping[str, Mapping[str, Any]]
    percentage_of_nodes_to_score: int | None = None
    batching: BatchingConfig = field(default_factory=BatchingConfig)
    # DefaultPreemption's args when the profile's postFilter runs it; None when disabled
    preemption: DefaultPreemptionArgs | None = None
    # GenericWorkload: the PodGroupPostFilter plugins in run order (config/pod_group_post_filter)
    pod_group_post_filter: tuple[str, ...] = ()
    # the emulated kube-scheduler release, for the plugins and preemption (--emulated-version)
    features: Features = field(default_factory=Features)


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    profiles: tuple[ProfileConfig, ...]
    parallelism: int = DEFAULT_PARALLELISM
    percentage_of_nodes_to_score: int = 0  # 0 = adaptive
    # the kube-scheduler release whose decisions we reproduce (--emulated-version); every
    # profile carries it in its `features`
    emulated_version: EmulatedVersion = DEFAULT_EMULATED_VERSION
