"""PodTopologySpread's arguments and constants (kube's PodTopologySpreadArgs, its defaults and
validation)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import ConfigError
from ...model import LabelSelector, TopologySpreadConstraint
from ...names import is_qualified_name

__all__ = [
    "NAME",
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "DO_NOT_SCHEDULE",
    "SCHEDULE_ANYWAY",
    "HONOR",
    "IGNORE",
    "SYSTEM_DEFAULTING",
    "LIST_DEFAULTING",
    "LABEL_HOSTNAME",
    "LABEL_TOPOLOGY_ZONE",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "MAX_INT32",
    "PodTopologySpreadArgs",
]

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"

# plugin.go systemDefaultConstraints, in kube's order.
SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(
        max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
    TopologySpreadConstraint(
        max_skew=5, topology_key=LABEL_TOPOLOGY_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
)

MAX_INT32 = 2**31 - 1
_DO_NOT_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    """pluginConfig args: `defaultConstraints` and `defaultingType` (System or List)."""

    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING

    def __post_init__(self) -> None:
        base = f"pluginConfig[{NAME}].args"
        if self.defaulting_type not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            raise ConfigError(
                f"{base}.defaultingType",
                f'unsupported value "{self.defaulting_type}": supported values: "System", "List"',
            )
        if self.defaulting_type == SYSTEM_DEFAULTING and self.default_constraints:
            raise ConfigError(
                f"{base}.defaultingType", "must be List when .defaultConstraints are not empty"
            )
        seen: set[tuple[str, str]] = set()
        for i, c in enumerate(self.default_constraints):
            p = f"{base}.defaultConstraints[{i}]"
            if c.max_skew <= 0:
                raise ConfigError(f"{p}.maxSkew", "not in valid range (0, inf)")
            if not c.topology_key:
                raise ConfigError(f"{p}.topologyKey", "can not be empty")
            if not is_qualified_name(c.topology_key):
                raise ConfigError(f"{p}.topologyKey", "must be a valid label name")
            if c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
                raise ConfigError(
                    f"{p}.whenUnsatisfiable",
                    'supported values: "DoNotSchedule", "ScheduleAnyway"',
                )
            if c.label_selector is not None:
                raise ConfigError(
                    f"{p}.labelSelector",
                    "constraint must not define a selector, as they deduced for each pod",
                )
            if c.min_domains is not None and c.min_domains <= 0:
                raise ConfigError(f"{p}.minDomains", "must be greater than 0")
            for fname, v in (
                ("nodeAffinityPolicy", c.node_affinity_policy),
                ("nodeTaintsPolicy", c.node_taints_policy),
            ):
                if v not in (HONOR, IGNORE):
                    raise ConfigError(f"{p}.{fname}", 'supported values: "Honor", "Ignore"')
            pair = (c.topology_key, c.when_unsatisfiable)
            if pair in seen:
                raise ConfigError(
                    p, f"duplicate value {{{c.topology_key}, {c.when_unsatisfiable}}}"
                )
            seen.add(pair)


    @classmethod
    def parse(cls, args: Mapping[str, Any] | None) -> PodTopologySpreadArgs:
        """From a profile's pluginConfig args (kube's defaults for what is absent)."""
        base = f"pluginConfig[{NAME}].args"
        if not args:
            return cls()
        for k in args:
            if k not in ("defaultConstraints", "defaultingType", "apiVersion", "kind"):
                raise ConfigError(f"{base}.{k}", "unknown field")
        kind = args.get("kind")
        if kind is not None and kind != "PodTopologySpreadArgs":
            raise ConfigError(f"{base}.kind", f'expected "PodTopologySpreadArgs", got "{kind}"')
        raw_list = args.get("defaultConstraints") or []
        if not isinstance(raw_list, list):
            raise ConfigError(f"{base}.defaultConstraints", "must be a list")
        dtype = args.get("defaultingType") or SYSTEM_DEFAULTING
        if not isinstance(dtype, str):
            raise ConfigError(f"{base}.defaultingType", "must be a string")
        constraints = tuple(
            _parse_constraint(c, f"{base}.defaultConstraints[{i}]") for i, c in enumerate(raw_list)
        )
        return cls(default_constraints=constraints, defaulting_type=dtype)

def _parse_constraint(raw: Any, path: str) -> TopologySpreadConstraint:
    if not isinstance(raw, Mapping):
        raise ConfigError(path, "must be a mapping")
    known = {
        "maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
        "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys",
    }
    for k in raw:
        if k not in known:
            raise ConfigError(f"{path}.{k}", "unknown field")

    def integer(name: str, default: int | None) -> int | None:
        v = raw.get(name, default)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise ConfigError(f"{path}.{name}", "must be an integer")
        return v

    def string(name: str, default: str) -> str:
        v = raw.get(name, default)
        if not isinstance(v, str):
            raise ConfigError(f"{path}.{name}", "must be a string")
        return v

    keys = raw.get("matchLabelKeys", [])
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ConfigError(f"{path}.matchLabelKeys", "must be a list of strings")
    max_skew = integer("maxSkew", 0)
    assert max_skew is not None
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=string("topologyKey", ""),
        when_unsatisfiable=string("whenUnsatisfiable", ""),
        # any selector is refused by validation; keep a marker so it reports the field
        label_selector=LabelSelector() if raw.get("labelSelector") is not None else None,
        min_domains=integer("minDomains", None),
        node_affinity_policy=string("nodeAffinityPolicy", HONOR),
        node_taints_policy=string("nodeTaintsPolicy", IGNORE),
        match_label_keys=tuple(keys),
    )
