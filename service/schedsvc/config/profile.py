"""One entry of `profiles`: its plugins per point, weights, plugin args, batching."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from ..framework.feature import Features
from ..plugins.registry import Registry
from .gang_scheduling import check_gang_scheduling
from .plugin_sets import (
    check_known,
    check_pre_score,
    expand_points,
    merged_multipoint,
    point_sets,
    preemption,
    score_weights,
)
from .pod_group_post_filter import pod_group_post_filter
from .schema import DEFAULT_SCHEDULER_NAME, BatchingConfig, ProfileConfig

__all__ = ["parse_profile"]

_PROFILE_FIELDS = frozenset(
    {"schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore", "batching"}
)


def parse_profile(
    raw: Mapping[str, Any], idx: int, registry: Registry, global_args: Mapping[str, Any],
    features: Features,
) -> ProfileConfig:
    where = f"profiles[{idx}]"
    unknown = set(raw) - _PROFILE_FIELDS
    if unknown:
        raise ConfigError(where, f"unknown fields {sorted(unknown)}")
    name = raw.get("schedulerName", DEFAULT_SCHEDULER_NAME)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}.schedulerName", "must be a non-empty string")
    sets = point_sets(raw.get("plugins") or {}, registry, where)
    multipoint = merged_multipoint(sets, features, where)
    check_gang_scheduling(sets, multipoint, features, where)
    points = expand_points(sets, multipoint, registry, where)
    check_pre_score(points, name, where)
    weights = score_weights(sets, multipoint, points["score"], where)
    args = _plugin_args(raw.get("pluginConfig"), registry, global_args, where)
    pct = raw.get("percentageOfNodesToScore")
    if pct is not None and (not isinstance(pct, int) or not 0 <= pct <= 100):
        raise ConfigError(f"{where}.percentageOfNodesToScore", "must be an integer in [0, 100]")
    return ProfileConfig(
        scheduler_name=name,
        points=points,
        weights=weights,
        plugin_args=args,
        percentage_of_nodes_to_score=pct,
        batching=_parse_batching(raw.get("batching"), f"{where}.batching"),
        preemption=preemption(sets, multipoint, args),
        pod_group_post_filter=pod_group_post_filter(sets, multipoint, features, where),
        features=features,
    )


def _plugin_args(
    raw: Any, registry: Registry, global_args: Mapping[str, Any], where: str
) -> dict[str, dict[str, Any]]:
    """`pluginConfig`: each known plugin's args, at most once per profile."""
    args: dict[str, dict[str, Any]] = {k: dict(v) for k, v in global_args.items()}
    for i, pc in enumerate(raw or []):
        pw = f"{where}.pluginConfig[{i}]"
        if not isinstance(pc, Mapping) or not isinstance(pc.get("name"), str):
            raise ConfigError(f"{pw}.name", "required")
        if set(pc) - {"name", "args"}:
            raise ConfigError(pw, "must have only 'name' and 'args'")
        check_known(pc["name"], registry, f"{pw}.name")
        a = pc.get("args") or {}
        if not isinstance(a, Mapping):
            raise ConfigError(f"{pw}.args", "must be a mapping")
        a = {k: v for k, v in a.items() if k not in ("apiVersion", "kind")}
        if pc["name"] in args and pc["name"] not in global_args:
            raise ConfigError(f"{pw}.name", f"repeated pluginConfig for {pc['name']}")
        args[pc["name"]] = a
    return args


def _parse_batching(raw: Any, where: str) -> BatchingConfig:
    if raw is None:
        return BatchingConfig()
    fields = {"enabled", "rescore", "maxBatchAge", "softSpread"}
    if not isinstance(raw, Mapping) or set(raw) - fields:
        raise ConfigError(where, f"fields are {', '.join(sorted(fields))}")
    flags = {}
    for key, default in (("enabled", True), ("rescore", True), ("softSpread", True)):
        value = raw.get(key, default)
        if not isinstance(value, bool):
            raise ConfigError(f"{where}.{key}", "must be a boolean")
        flags[key] = value
    age = raw.get("maxBatchAge", "500ms")
    return BatchingConfig(
        flags["enabled"], flags["rescore"], _duration(age, f"{where}.maxBatchAge"),
        flags["softSpread"],
    )


_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
             "h": 3600.0}
_GO_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def _duration(raw: Any, where: str) -> float:
    """A Go duration string (time.ParseDuration: "500ms", "1m30s", "1h") or seconds."""
    if isinstance(raw, (int, float)) and not isinstance(raw, bool) and raw > 0:
        return float(raw)
    if isinstance(raw, str) and re.fullmatch(f"(?:{_GO_PART.pattern})+", raw):
        v = sum(float(n) * _GO_UNITS[u] for n, u in _GO_PART.findall(raw))
        if v > 0:
            return v
    raise ConfigError(where, f"invalid duration {raw!r}")
