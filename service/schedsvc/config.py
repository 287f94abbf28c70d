"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), read as kube reads it.

Profiles resolve their plugins the way kube does: the user's multiPoint set is merged into the
default one (a re-configured default keeps its place), then each extension point is expanded
from multiPoint, honouring per-point `disabled` (incl. "*") and per-point `enabled` overrides.
Anything we cannot honour is a ConfigError naming the field, at start-up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import ConfigError
from .framework.feature import DEFAULT_EMULATED_VERSION, EmulatedVersion, Features
from .plugins.default_preemption import DefaultPreemptionArgs
from .plugins.registry import NOOP_PLUGINS, Registry, in_tree_registry

__all__ = [
    "DEFAULT_SCHEDULER_NAME",
    "DEFAULT_PARALLELISM",
    "BatchingConfig",
    "ProfileConfig",
    "SchedulerConfig",
    "load_config",
    "parse_config",
    "default_config",
    "default_multipoint",
]

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PARALLELISM = 16
API_VERSION = "kubescheduler.config.k8s.io/v1"

# kube v1.35.4 getDefaultPlugins(): the default profile's multiPoint set, in order, with
# weights (DynamicResources, which applyFeatureGates inserts, is a no-op here and left out).
DEFAULT_MULTIPOINT_1_35: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)


def _node_name_first(plugins: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    out = list(plugins)
    i, j = out.index(("NodeUnschedulable", 0)), out.index(("NodeName", 0))
    out[i], out[j] = out[j], out[i]
    return tuple(out)


# kube v1.37.2: NodeName runs before NodeUnschedulable, and the NodeDeclaredFeatures gate (GA)
# appends its plugin (a no-op here: the client refuses the pod fields it reads).
DEFAULT_MULTIPOINT_1_37: tuple[tuple[str, int], ...] = (
    *_node_name_first(DEFAULT_MULTIPOINT_1_35),
    ("NodeDeclaredFeatures", 0),
)
# the default release's
DEFAULT_MULTIPOINT = DEFAULT_MULTIPOINT_1_37


def default_multipoint(features: Features) -> tuple[tuple[str, int], ...]:
    """The default profile's multiPoint set of the emulated release."""
    if features.emulated_version is EmulatedVersion.V1_35:
        return DEFAULT_MULTIPOINT_1_35
    return DEFAULT_MULTIPOINT_1_37

# Which of our extension points each in-tree plugin implements.
IMPLEMENTS: dict[str, frozenset[str]] = {
    "NodeUnschedulable": frozenset({"filter"}),
    "NodeName": frozenset({"filter"}),
    "TaintToleration": frozenset({"filter", "preScore", "score"}),
    "NodeAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodePorts": frozenset({"preFilter", "filter"}),
    "NodeResourcesFit": frozenset({"preFilter", "filter", "preScore", "score"}),
    "PodTopologySpread": frozenset({"preFilter", "filter", "preScore", "score"}),
    "InterPodAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "ImageLocality": frozenset({"score"}),
}
POINTS = ("preFilter", "filter", "preScore", "score")
# kube's Score of these fails (`reading "PreScore<name>" from cycleState`) without their PreScore
SCORE_NEEDS_PRE_SCORE = ("TaintToleration", "PodTopologySpread", "InterPodAffinity")
OTHER_POINTS = (
    "preEnqueue",
    "queueSort",
    "postFilter",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)


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


def _check_known(name: str, registry: Registry, where: str) -> None:
    if name not in registry and name not in NOOP_PLUGINS:
        raise ConfigError(where, f"unknown plugin {name!r}")


def _parse_profile(
    raw: Mapping[str, Any], idx: int, registry: Registry, global_args: Mapping[str, Any],
    features: Features,
) -> ProfileConfig:
    where = f"profiles[{idx}]"
    known = {"schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore", "batching"}
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(where, f"unknown fields {sorted(unknown)}")
    name = raw.get("schedulerName", DEFAULT_SCHEDULER_NAME)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}.schedulerName", "must be a non-empty string")
    plugins = raw.get("plugins") or {}
    if not isinstance(plugins, Mapping):
        raise ConfigError(f"{where}.plugins", "must be a mapping")
    for point in plugins:
        if point not in POINTS and point not in OTHER_POINTS and point != "multiPoint":
            raise ConfigError(f"{where}.plugins.{point}", "unknown extension point")
    sets: dict[str, tuple[list[tuple[str, int]], set[str]]] = {}
    for point, spec in plugins.items():
        pw = f"{where}.plugins.{point}"
        if spec is None:
            spec = {}
        if not isinstance(spec, Mapping) or set(spec) - {"enabled", "disabled"}:
            raise ConfigError(pw, "must have only 'enabled' and 'disabled'")
        enabled = _plugin_list(spec.get("enabled"), f"{pw}.enabled")
        disabled = {n for n, _ in _plugin_list(spec.get("disabled"), f"{pw}.disabled")}
        for i, (n, _) in enumerate(enabled):
            _check_known(n, registry, f"{pw}.enabled[{i}].name")
            if point in OTHER_POINTS and n not in NOOP_PLUGINS:
                raise ConfigError(f"{pw}.enabled[{i}]", f"{n} does not implement {point}")
        for n in disabled:
            if n != "*":
                _check_known(n, registry, f"{pw}.disabled")
        sets[point] = (enabled, disabled)

    mp_enabled, mp_disabled = sets.get("multiPoint", ([], set()))
    multipoint = _merge_plugin_set(list(default_multipoint(features)), mp_enabled, mp_disabled)
    seen: set[str] = set()
    for n, _ in multipoint:
        if n in seen:
            raise ConfigError(f"{where}.plugins.multiPoint", f"plugin {n!r} registered twice")
        seen.add(n)

    points: dict[str, tuple[str, ...]] = {}
    for point in POINTS:
        enabled, disabled = sets.get(point, ([], set()))
        explicit = [n for n, _ in enabled]
        for n in explicit:
            if n not in NOOP_PLUGINS and point not in IMPLEMENTS.get(n, frozenset()):
                raise ConfigError(f"{where}.plugins.{point}", f"{n} does not implement {point}")
        if "*" in disabled:
            order = [n for n in explicit if n not in NOOP_PLUGINS]
        else:
            override = [n for n, _ in multipoint if n in explicit]
            override_sorted = [n for n in explicit if n in override]
            mp = [
                n
                for n, _ in multipoint
                if point in IMPLEMENTS.get(n, frozenset())
                and n not in disabled
                and n not in explicit
            ]
            rest = [n for n in explicit if n not in override]
            order = [n for n in override_sorted + mp + rest if n not in NOOP_PLUGINS]
        points[point] = tuple(dict.fromkeys(order))

    _check_pre_score(points, name, where)
    weights: dict[str, int] = {}
    for n, w in multipoint:
        weights[n] = w or 1
    for n, w in sets.get("score", ([], set()))[0]:
        weights[n] = w or 1
    score_weights = {n: weights.get(n, 1) for n in points["score"]}
    if sum(score_weights.values()) > 2**31:
        raise ConfigError(f"{where}.plugins.score", "total score weight overflows")

    args: dict[str, dict[str, Any]] = {k: dict(v) for k, v in global_args.items()}
    for i, pc in enumerate(raw.get("pluginConfig") or []):
        pw = f"{where}.pluginConfig[{i}]"
        if not isinstance(pc, Mapping) or not isinstance(pc.get("name"), str):
            raise ConfigError(f"{pw}.name", "required")
        if set(pc) - {"name", "args"}:
            raise ConfigError(pw, "must have only 'name' and 'args'")
        _check_known(pc["name"], registry, f"{pw}.name")
        a = pc.get("args") or {}
        if not isinstance(a, Mapping):
            raise ConfigError(f"{pw}.args", "must be a mapping")
        a = {k: v for k, v in a.items() if k not in ("apiVersion", "kind")}
        if pc["name"] in args and pc["name"] not in global_args:
            raise ConfigError(f"{pw}.name", f"repeated pluginConfig for {pc['name']}")
        args[pc["name"]] = a

    pct = raw.get("percentageOfNodesToScore")
    if pct is not None and (not isinstance(pct, int) or not 0 <= pct <= 100):
        raise ConfigError(f"{where}.percentageOfNodesToScore", "must be an integer in [0, 100]")

    return ProfileConfig(
        scheduler_name=name,
        points=points,
        weights=score_weights,
        plugin_args=args,
        percentage_of_nodes_to_score=pct,
        batching=_parse_batching(raw.get("batching"), f"{where}.batching"),
        preemption=_preemption(sets, multipoint, args),
        features=features,
    )


def _check_pre_score(points: Mapping[str, tuple[str, ...]], profile: str, where: str) -> None:
    """Refuse a score plugin whose preScore alone is disabled: kube would fail every pod that
    reaches Score with an error, so the profile could place none of them (docs/differences.md)."""
    for n in SCORE_NEEDS_PRE_SCORE:
        if n in points["score"] and n not in points["preScore"]:
            raise ConfigError(f"{where}.plugins.preScore", (
                f"profile {profile!r} disables the preScore extension point of {n} while its "
                f"score stays enabled: kube-scheduler would fail every pod it scores with "
                f'error reading "PreScore{n}" from cycleState; disable {n} at score too, '
                "or keep its preScore"))


def _preemption(
    sets: Mapping[str, tuple[list[tuple[str, int]], set[str]]],
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


def parse_config(
    raw: Mapping[str, Any],
    registry: Registry | None = None,
    emulated_version: EmulatedVersion = DEFAULT_EMULATED_VERSION,
) -> SchedulerConfig:
    """The configuration as kube-scheduler `emulated_version` reads it (its default
    profile's plugins and their order differ between releases)."""
    registry = registry or in_tree_registry()
    features = Features(emulated_version)
    if not isinstance(raw, Mapping):
        raise ConfigError("", "configuration must be a mapping")
    api = raw.get("apiVersion", API_VERSION)
    if api != API_VERSION:
        raise ConfigError("apiVersion", f"only {API_VERSION} is supported, got {api!r}")
    if raw.get("kind", "KubeSchedulerConfiguration") != "KubeSchedulerConfiguration":
        raise ConfigError("kind", "must be KubeSchedulerConfiguration")
    # Fields kube has that do not change a placement decision here are accepted as is.
    ignored = {
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
    known = {"parallelism", "percentageOfNodesToScore", "profiles", "extenders"} | ignored
    unknown = set(raw) - known
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
    raw_profiles = raw.get("profiles") or [{}]
    if not isinstance(raw_profiles, list):
        raise ConfigError("profiles", "must be a list")
    profiles = []
    names: set[str] = set()
    for i, p in enumerate(raw_profiles):
        if not isinstance(p, Mapping):
            raise ConfigError(f"profiles[{i}]", "must be a mapping")
        prof = _parse_profile(p, i, registry, {}, features)
        if prof.scheduler_name in names:
            raise ConfigError(f"profiles[{i}].schedulerName", "duplicate scheduler name")
        names.add(prof.scheduler_name)
        profiles.append(prof)
    return SchedulerConfig(tuple(profiles), par, pct, emulated_version)


def load_config(
    path: str, emulated_version: EmulatedVersion = DEFAULT_EMULATED_VERSION
) -> SchedulerConfig:
    try:
        with open(path, encoding="utf-8") as f:
            raw = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError("config", str(exc)) from exc
    return parse_config(raw or {}, emulated_version=emulated_version)


def default_config(
    emulated_version: EmulatedVersion = DEFAULT_EMULATED_VERSION,
) -> SchedulerConfig:
    return parse_config({}, emulated_version=emulated_version)
