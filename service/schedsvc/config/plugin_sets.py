"""A profile's `plugins`: kube's plugin sets per extension point, merged and expanded.

The user's multiPoint set is merged into the default one (a re-configured default keeps its
place), then each extension point is expanded from multiPoint, honouring per-point `disabled`
(incl. "*") and per-point `enabled` overrides. Which points a plugin implements comes from the
registry, which reads it off the plugin's class.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from ..framework.feature import Features
from ..framework.points import POINT_NAMES
from ..plugins.default_preemption import DefaultPreemptionArgs
from ..plugins.registry import NOOP_PLUGINS, Registry
from .defaults import default_multipoint

__all__ = [
    "POINTS",
    "OTHER_POINTS",
    "SCORE_NEEDS_PRE_SCORE",
    "PluginSets",
    "check_known",
    "point_sets",
    "merged_multipoint",
    "expand_points",
    "check_pre_score",
    "score_weights",
    "preemption",
]

# the points we run, by their configuration names, in cycle order
POINTS = POINT_NAMES
# kube's other points: only the plugins we honour by doing nothing may be enabled there
OTHER_POINTS = (
    "preEnqueue",
    "queueSort",
    "postFilter",
    "podGroupPostFilter",
    "permit",
    "preBind",
    "bind",
    "postBind",
)
# kube's Score of these fails (`reading "PreScore<name>" from cycleState`) without their PreScore
SCORE_NEEDS_PRE_SCORE = ("TaintToleration", "PodTopologySpread", "InterPodAffinity")

# per point (and "multiPoint"): the enabled plugins with their weights, the disabled names
PluginSets = dict[str, tuple[list[tuple[str, int]], set[str]]]


def _plugin_list(raw: Any, where: str) -> list[tuple[str, int]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ConfigError(where, "must be a list")
    out = []
    for i, p in enumerate(raw):
        if not isinstance(p, Mapping) or not isinstance(p.get("name"), str):
            raise ConfigError(f"{where}[{i}].name", "required")
        unknown = set(p) - {"name", "weight"}
        if unknown:
            raise ConfigError(f"{where}[{i}]", f"unknown fields {sorted(unknown)}")
        w = p.get("weight", 0)
        if not isinstance(w, int) or isinstance(w, bool) or w < 0:
            raise ConfigError(f"{where}[{i}].weight", "must be a non-negative integer")
        out.append((p["name"], w))
    return out


def _merge_plugin_set(
    default: list[tuple[str, int]], enabled: list[tuple[str, int]], disabled: set[str]
) -> list[tuple[str, int]]:
    """kube's mergePluginSet: re-configured defaults keep their place, the rest append."""
    custom = {name: i for i, (name, _) in enumerate(enabled)}
    replaced: set[int] = set()
    out: list[tuple[str, int]] = []
    if "*" not in disabled:
        for name, w in default:
            if name in disabled:
                continue
            if name in custom:
                idx = custom[name]
                replaced.add(idx)
                out.append(enabled[idx])
            else:
                out.append((name, w))
    out.extend(p for i, p in enumerate(enabled) if i not in replaced)
    return out


def check_known(name: str, registry: Registry, where: str) -> None:
    if name not in registry and name not in NOOP_PLUGINS:
        raise ConfigError(where, f"unknown plugin {name!r}")


def point_sets(plugins: Any, registry: Registry, where: str) -> PluginSets:
    """Each point's set as written under `plugins`, its names checked against the registry."""
    if not isinstance(plugins, Mapping):
        raise ConfigError(f"{where}.plugins", "must be a mapping")
    for point in plugins:
        if point not in POINTS and point not in OTHER_POINTS and point != "multiPoint":
            raise ConfigError(f"{where}.plugins.{point}", "unknown extension point")
    sets: PluginSets = {}
    for point, spec in plugins.items():
        pw = f"{where}.plugins.{point}"
        if spec is None:
            spec = {}
        if not isinstance(spec, Mapping) or set(spec) - {"enabled", "disabled"}:
            raise ConfigError(pw, "must have only 'enabled' and 'disabled'")
        enabled = _plugin_list(spec.get("enabled"), f"{pw}.enabled")
        disabled = {n for n, _ in _plugin_list(spec.get("disabled"), f"{pw}.disabled")}
        for i, (n, _) in enumerate(enabled):
            check_known(n, registry, f"{pw}.enabled[{i}].name")
            if point in OTHER_POINTS and n not in NOOP_PLUGINS:
                raise ConfigError(f"{pw}.enabled[{i}]", f"{n} does not implement {point}")
        for n in disabled:
            if n != "*":
                check_known(n, registry, f"{pw}.disabled")
        sets[point] = (enabled, disabled)
    return sets


def merged_multipoint(sets: PluginSets, features: Features, where: str) -> list[tuple[str, int]]:
    """The release's default multiPoint set with the user's merged in; a name at most once."""
    mp_enabled, mp_disabled = sets.get("multiPoint", ([], set()))
    multipoint = _merge_plugin_set(list(default_multipoint(features)), mp_enabled, mp_disabled)
    seen: set[str] = set()
    for n, _ in multipoint:
        if n in seen:
            raise ConfigError(f"{where}.plugins.multiPoint", f"plugin {n!r} registered twice")
        seen.add(n)
    return multipoint


def expand_points(
    sets: PluginSets, multipoint: list[tuple[str, int]], registry: Registry, where: str
) -> dict[str, tuple[str, ...]]:
    """Per point we run, the plugins in run order (kube's expandMultiPointPlugins): explicit
    overrides of multiPoint plugins first, then multiPoint's, then the other explicit ones."""
    points: dict[str, tuple[str, ...]] = {}
    for point in POINTS:
        enabled, disabled = sets.get(point, ([], set()))
        explicit = [n for n, _ in enabled]
        for n in explicit:
            if n not in NOOP_PLUGINS and point not in registry.points(n):
                raise ConfigError(f"{where}.plugins.{point}", f"{n} does not implement {point}")
        if "*" in disabled:
            order = [n for n in explicit if n not in NOOP_PLUGINS]
        else:
            override = [n for n, _ in multipoint if n in explicit]
            override_sorted = [n for n in explicit if n in override]
            mp = [
                n
                for n, _ in multipoint
                if point in registry.points(n) and n not in disabled and n not in explicit
            ]
            rest = [n for n in explicit if n not in override]
            order = [n for n in override_sorted + mp + rest if n not in NOOP_PLUGINS]
        points[point] = tuple(dict.fromkeys(order))
    return points


def check_pre_score(points: Mapping[str, tuple[str, ...]], profile: str, where: str) -> None:
    """Refuse a score plugin whose preScore alone is disabled: kube would fail every pod that
    reaches Score with an error, so the profile could place none of them (docs/differences.md)."""
    for n in SCORE_NEEDS_PRE_SCORE:
        if n in points["score"] and n not in points["preScore"]:
            raise ConfigError(f"{where}.plugins.preScore", (
                f"profile {profile!r} disables the preScore extension point of {n} while its "
                f"score stays enabled: kube-scheduler would fail every pod it scores with "
                f'error reading "PreScore{n}" from cycleState; disable {n} at score too, '
                "or keep its preScore"))


def score_weights(
    sets: PluginSets, multipoint: list[tuple[str, int]], scored: tuple[str, ...], where: str
) -> dict[str, int]:
    """Each score plugin's weight: the score point's, else multiPoint's; 0 or unset is 1."""
    weights: dict[str, int] = {}
    for n, w in multipoint:
        weights[n] = w or 1
    for n, w in sets.get("score", ([], set()))[0]:
        weights[n] = w or 1
    out = {n: weights.get(n, 1) for n in scored}
    if sum(out.values()) > 2**31:
        raise ConfigError(f"{where}.plugins.score", "total score weight overflows")
    return out


def preemption(
    sets: PluginSets,
    multipoint: list[tuple[str, int]],
    args: Mapping[str, Mapping[str, Any]],
) -> DefaultPreemptionArgs | None:
    """DefaultPreemption runs as the postFilter when multiPoint has it and postFilter does not
    disable it, or when postFilter enables it; its args are validated either way."""
    name = "DefaultPreemption"
    parsed = DefaultPreemptionArgs.parse(args.get(name))
    enabled, disabled = sets.get("postFilter", ([], set()))
    if any(n == name for n, _ in enabled):
        return parsed
    if "*" in disabled or name in disabled:
        return None
    return parsed if any(n == name for n, _ in multipoint) else None
