"""The default profile's multiPoint plugin set of each emulated release (getDefaultPlugins)."""

from __future__ import annotations

from ..framework.feature import EmulatedVersion, Features

__all__ = [
    "DEFAULT_MULTIPOINT_1_35",
    "DEFAULT_MULTIPOINT_1_37",
    "DEFAULT_MULTIPOINT",
    "default_multipoint",
]

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
    """The default profile's multiPoint set of the emulated release; with GenericWorkload on,
    v1.37.2's applyFeatureGates appends GangScheduling (config/gang_scheduling.py)."""
    if features.emulated_version is EmulatedVersion.V1_35:
        return DEFAULT_MULTIPOINT_1_35
    if features.generic_workload:
        return (*DEFAULT_MULTIPOINT_1_37, ("GangScheduling", 0))
    return DEFAULT_MULTIPOINT_1_37
