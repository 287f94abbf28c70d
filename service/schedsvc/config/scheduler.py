"""The whole KubeSchedulerConfiguration: its top-level fields and its profiles."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from ..errors import ConfigError
from ..framework.feature import DEFAULT_EMULATED_VERSION, EmulatedVersion, Features
from ..plugins.registry import Registry, in_tree_registry
from .profile import parse_profile
from .schema import DEFAULT_PARALLELISM, ProfileConfig, SchedulerConfig

__all__ = ["API_VERSION", "parse_config", "load_config", "default_config"]

API_VERSION = "kubescheduler.config.k8s.io/v1"

# Fields kube has that do not change a placement decision here are accepted as is.
_IGNORED = frozenset(
    {
        "apiVersion",
        "kind",
        "leaderElection",
        "clientConnection",
        "healthzBindAddress",
        "metricsBindAddress",
        "enableProfiling",
        "enableContentionProfiling",
        "podInitialBackoffSeconds",
        "podMaxBackoffSeconds",
        "delayCacheUntilActive",
    }
)
_KNOWN = frozenset({"parallelism", "percentageOfNodesToScore", "profiles", "extenders"}) | _IGNORED


def parse_config(
    raw: Mapping[str, Any],
    registry: Registry | None = None,
    emulated_version: EmulatedVersion = DEFAULT_EMULATED_VERSION,
    features: Features | None = None,
) -> SchedulerConfig:
    """The configuration as kube-scheduler `emulated_version` reads it (its default
    profile's plugins and their order differ between releases); `features`, of that release,
    may set feature gates (tools/conformance_volumes)."""
    registry = registry or in_tree_registry()
    if not isinstance(raw, Mapping):
        raise ConfigError("", "configuration must be a mapping")
    api = raw.get("apiVersion", API_VERSION)
    if api != API_VERSION:
        raise ConfigError("apiVersion", f"only {API_VERSION} is supported, got {api!r}")
    if raw.get("kind", "KubeSchedulerConfiguration") != "KubeSchedulerConfiguration":
        raise ConfigError("kind", "must be KubeSchedulerConfiguration")
    unknown = set(raw) - _KNOWN
    if unknown:
        raise ConfigError(sorted(unknown)[0], "unknown field")
    if raw.get("extenders"):
        raise ConfigError("extenders", "scheduler extenders are not supported")
    par = raw.get("parallelism", DEFAULT_PARALLELISM)
    if not isinstance(par, int) or isinstance(par, bool) or par < 1:
        raise ConfigError("parallelism", "must be a positive integer")
    pct = raw.get("percentageOfNodesToScore", 0)
    if pct is None:
        pct = 0
    if not isinstance(pct, int) or not 0 <= pct <= 100:
        raise ConfigError("percentageOfNodesToScore", "must be an integer in [0, 100]")
    if features is None:
        features = Features(emulated_version)
    elif features.emulated_version is not emulated_version:
        raise ValueError(f"features of {features.emulated_version}, not {emulated_version}")
    profiles = _profiles(raw.get("profiles") or [{}], registry, features)
    return SchedulerConfig(profiles, par, pct, emulated_version)


def _profiles(
    raw_profiles: Any, registry: Registry, features: Features
) -> tuple[ProfileConfig, ...]:
    if not isinstance(raw_profiles, list):
        raise ConfigError("profiles", "must be a list")
    profiles = []
    names: set[str] = set()
    for i, p in enumerate(raw_profiles):
        if not isinstance(p, Mapping):
            raise ConfigError(f"profiles[{i}]", "must be a mapping")
        prof = parse_profile(p, i, registry, {}, features)
        if prof.scheduler_name in names:
            raise ConfigError(f"profiles[{i}].schedulerName", "duplicate scheduler name")
        names.add(prof.scheduler_name)
        profiles.append(prof)
    return tuple(profiles)


def load_config(
    path: str,
    emulated_version: EmulatedVersion = DEFAULT_EMULATED_VERSION,
    features: Features | None = None,
) -> SchedulerConfig:
    """The YAML file at `path`; `features` (of `emulated_version`) carry --feature-gates."""
    try:
        with open(path, encoding="utf-8") as f:
            raw = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError("config", str(exc)) from exc
    return parse_config(raw or {}, emulated_version=emulated_version, features=features)


def default_config(
    emulated_version: EmulatedVersion = DEFAULT_EMULATED_VERSION,
    features: Features | None = None,
) -> SchedulerConfig:
    return parse_config({}, emulated_version=emulated_version, features=features)
