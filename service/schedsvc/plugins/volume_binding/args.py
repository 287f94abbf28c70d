"""VolumeBinding's args (kube's VolumeBindingArgs), defaulted and validated as
SetDefaults_VolumeBindingArgs and ValidateVolumeBindingArgs do under the release's
StorageCapacityScoring gate: the shape exists only when the gate is on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import ConfigError
from ...framework.feature import DEFAULT_FEATURES, Features
from ..resource_scoring import (
    MAX_CUSTOM_PRIORITY_SCORE,
    UtilizationShapePoint,
    parse_shape,
    reject_unknown_keys,
    validate_shape,
)

__all__ = [
    "NAME",
    "DEFAULT_BIND_TIMEOUT_SECONDS",
    "UtilizationShapePoint",
    "DEFAULT_SHAPE",
    "VolumeBindingArgs",
]

NAME = "VolumeBinding"
DEFAULT_BIND_TIMEOUT_SECONDS = 600
_FIELD = f"pluginConfig[{NAME}].args"


# SetDefaults_VolumeBindingArgs with the gate on: prefer the node with the most free space
DEFAULT_SHAPE = (UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0))


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    """`shape` is () exactly when the gate is off (kube leaves it nil)."""

    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: tuple[UtilizationShapePoint, ...] = DEFAULT_SHAPE
    scoring: bool = True  # the StorageCapacityScoring gate

    def __post_init__(self) -> None:
        if self.bind_timeout_seconds < 0:
            raise ConfigError(
                f"{_FIELD}.bindTimeoutSeconds",
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
        shape_field = f"{_FIELD}.shape"
        if not self.scoring:
            if self.shape:
                raise ConfigError(shape_field, "unexpected field `shape`, remove it or turn on "
                                  "the feature gate StorageCapacityScoring")
            return
        if not self.shape:
            raise ConfigError(shape_field, "at least one point must be specified")
        validate_shape(self.shape, shape_field)

    def scaled_shape(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(utilizations, scores ×10): what the scorer's broken line is built from."""
        us = tuple(p.utilization for p in self.shape)
        ss = tuple(p.score * (100 // MAX_CUSTOM_PRIORITY_SCORE) for p in self.shape)
        return us, ss

    @classmethod
    def parse(
        cls, args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
    ) -> VolumeBindingArgs:
        """The pluginConfig entry's args; a shape left out is defaulted only with the gate on."""
        scoring = features.storage_capacity_scoring
        if not args:
            return cls(shape=DEFAULT_SHAPE if scoring else (), scoring=scoring)
        reject_unknown_keys(args, ("apiVersion", "kind", "bindTimeoutSeconds", "shape"), _FIELD)
        kind = args.get("kind", "VolumeBindingArgs")
        if kind != "VolumeBindingArgs":
            raise ConfigError(f"{_FIELD}.kind", f"expected VolumeBindingArgs, got {kind!r}")
        timeout = args.get("bindTimeoutSeconds", DEFAULT_BIND_TIMEOUT_SECONDS)
        if isinstance(timeout, bool) or not isinstance(timeout, int):
            raise ConfigError(
                f"{_FIELD}.bindTimeoutSeconds", f"must be an integer, got {timeout!r}"
            )
        raw = args.get("shape")
        shape = parse_shape(raw, f"{_FIELD}.shape")
        if raw is None and scoring:
            shape = DEFAULT_SHAPE
        elif raw is not None and not scoring:
            raise ConfigError(f"{_FIELD}.shape", "unexpected field `shape`, remove it or turn on "
                              "the feature gate StorageCapacityScoring")
        elif raw is not None and not shape:  # an empty list is "set" but has no point
            raise ConfigError(f"{_FIELD}.shape", "at least one point must be specified")
        return cls(bind_timeout_seconds=timeout, shape=shape, scoring=scoring)
