"""NodeResourcesFit's args (kube's NodeResourcesFitArgs, defaulted and validated as
SetDefaults_NodeResourcesFitArgs and ValidateNodeResourcesFitArgs do)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import ConfigError
from ...names import is_qualified_name
from ..resource_scoring import (
    DEFAULT_RESOURCES,
    ResourceSpec,
    UtilizationShapePoint,
    parse_resources,
    parse_shape,
    reject_unknown_keys,
    validate_shape,
)

__all__ = [
    "NAME",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "UtilizationShapePoint",
    "NodeResourcesFitArgs",
]

NAME = "NodeResourcesFit"

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
_STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

_FIELD = f"pluginConfig[{NAME}].args"


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    """kube's NodeResourcesFitArgs after defaulting (v1 SetDefaults_NodeResourcesFitArgs)."""

    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()
    strategy: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    shape: tuple[UtilizationShapePoint, ...] = ()

    def __post_init__(self) -> None:
        """ValidateNodeResourcesFitArgs, plus the shape NewFit needs for the ratio strategy."""
        for i, res in enumerate(sorted(self.ignored_resources)):
            if not is_qualified_name(res):
                raise ConfigError(f"{_FIELD}.ignoredResources[{i}]", f"invalid name {res!r}")
        for i, group in enumerate(sorted(self.ignored_resource_groups)):
            f = f"{_FIELD}.ignoredResourceGroups[{i}]"
            if "/" in group:
                raise ConfigError(f, "resource group name can't contain '/'")
            if not is_qualified_name(group):
                raise ConfigError(f, f"invalid name {group!r}")
        sf = f"{_FIELD}.scoringStrategy"
        if self.strategy not in _STRATEGIES:
            supported = ", ".join(f'"{s}"' for s in _STRATEGIES)
            raise ConfigError(
                f"{sf}.type", f'Unsupported value: "{self.strategy}": supported values: {supported}'
            )
        for i, r in enumerate(self.resources):
            if r.weight <= 0 or r.weight > 100:
                raise ConfigError(
                    f"{sf}.resources[{i}].weight",
                    f"resource weight of {r.name} not in valid range (0, 100]",
                )
        shape_field = f"{sf}.requestedToCapacityRatio.shape"
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO and not self.shape:
            raise ConfigError(shape_field, "at least one point must be specified")
        validate_shape(self.shape, shape_field)

    @classmethod
    def parse(cls, args: Mapping[str, Any] | None) -> NodeResourcesFitArgs:
        """From `pluginConfig[].args` (camelCase, as in the YAML)."""
        if not args:
            return cls()
        reject_unknown_keys(
            args,
            ("apiVersion", "kind", "ignoredResources", "ignoredResourceGroups", "scoringStrategy"),
            _FIELD,
        )
        kind = args.get("kind", "NodeResourcesFitArgs")
        if kind != "NodeResourcesFitArgs":
            raise ConfigError(f"{_FIELD}.kind", f"expected NodeResourcesFitArgs, got {kind!r}")
        ignored = _string_list(args.get("ignoredResources"), f"{_FIELD}.ignoredResources")
        groups = _string_list(args.get("ignoredResourceGroups"), f"{_FIELD}.ignoredResourceGroups")
        strategy = args.get("scoringStrategy")
        if strategy is None:
            return cls(
                ignored_resources=frozenset(ignored), ignored_resource_groups=frozenset(groups)
            )
        sf = f"{_FIELD}.scoringStrategy"
        if not isinstance(strategy, Mapping):
            raise ConfigError(sf, f"must be an object, got {strategy!r}")
        reject_unknown_keys(strategy, ("type", "resources", "requestedToCapacityRatio"), sf)
        stype = strategy.get("type", "")
        if not isinstance(stype, str):
            raise ConfigError(f"{sf}.type", f"must be a string, got {stype!r}")
        resources = parse_resources(strategy.get("resources"), f"{sf}.resources")
        shape: tuple[UtilizationShapePoint, ...] = ()
        rtcr = strategy.get("requestedToCapacityRatio")
        if rtcr is not None:
            rf = f"{sf}.requestedToCapacityRatio"
            if not isinstance(rtcr, Mapping):
                raise ConfigError(rf, f"must be an object, got {rtcr!r}")
            reject_unknown_keys(rtcr, ("shape",), rf)
            shape = parse_shape(rtcr.get("shape"), f"{rf}.shape")
        return cls(
            ignored_resources=frozenset(ignored),
            ignored_resource_groups=frozenset(groups),
            strategy=stype,
            resources=resources,
            shape=shape,
        )


def _string_list(value: Any, field: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(field, f"must be a list of strings, got {value!r}")
    return list(value)
