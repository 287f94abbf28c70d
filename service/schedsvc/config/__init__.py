"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), read as kube reads it.

Split as kube's apis/config and profile code is: the parsed types (schema), the default
profile of each release (defaults), the plugin sets and their expansion per extension point
(plugin_sets), one profile (profile) and the whole file (scheduler). Anything we cannot honour is
a ConfigError naming the field, at start-up.
"""

from __future__ import annotations

from .defaults import (
    DEFAULT_MULTIPOINT,
    DEFAULT_MULTIPOINT_1_35,
    DEFAULT_MULTIPOINT_1_37,
    default_multipoint,
)
from .scheduler import API_VERSION, default_config, load_config, parse_config
from .schema import (
    DEFAULT_PARALLELISM,
    DEFAULT_SCHEDULER_NAME,
    BatchingConfig,
    ProfileConfig,
    SchedulerConfig,
)

__all__ = [
    "API_VERSION",
    "DEFAULT_SCHEDULER_NAME",
    "DEFAULT_PARALLELISM",
    "DEFAULT_MULTIPOINT",
    "DEFAULT_MULTIPOINT_1_35",
    "DEFAULT_MULTIPOINT_1_37",
    "BatchingConfig",
    "ProfileConfig",
    "SchedulerConfig",
    "load_config",
    "parse_config",
    "default_config",
    "default_multipoint",
]
