"""A profile's PodGroupPostFilter plugins (kube v1.37.2, GenericWorkload): its own extension
point, `plugins.podGroupPostFilter`, filled from multiPoint as every point is
(expandMultiPointPlugins). So disabling DefaultPreemption at `postFilter` leaves workload-aware
preemption on, and disabling it at `podGroupPostFilter` (or in multiPoint) turns it off.

Two plugins implement it: DynamicResources, which 1.37's applyFeatureGates puts in the default
multiPoint just before DefaultPreemption (our default set leaves it out: it has nothing to do
here but PodGroupPostFilter's message), and DefaultPreemption.
"""

from __future__ import annotations

from ..errors import ConfigError
from ..framework.feature import Features
from .plugin_sets import PluginSets

__all__ = ["DYNAMIC_RESOURCES", "DEFAULT_PREEMPTION", "pod_group_post_filter"]

DYNAMIC_RESOURCES = "DynamicResources"
DEFAULT_PREEMPTION = "DefaultPreemption"
_IMPLEMENTERS = (DYNAMIC_RESOURCES, DEFAULT_PREEMPTION)  # in the default multiPoint's order


def _in_multipoint(sets: PluginSets, multipoint: list[tuple[str, int]]) -> dict[str, bool]:
    mp_enabled, mp_disabled = sets.get("multiPoint", ([], set()))
    dra = any(n == DYNAMIC_RESOURCES for n, _ in mp_enabled) or not (
        "*" in mp_disabled or DYNAMIC_RESOURCES in mp_disabled
    )
    return {
        DYNAMIC_RESOURCES: dra,
        DEFAULT_PREEMPTION: any(n == DEFAULT_PREEMPTION for n, _ in multipoint),
    }


def pod_group_post_filter(
    sets: PluginSets, multipoint: list[tuple[str, int]], features: Features, where: str
) -> tuple[str, ...]:
    """The profile's PodGroupPostFilter plugins in run order (none without GenericWorkload)."""
    enabled, disabled = sets.get("podGroupPostFilter", ([], set()))
    explicit = [n for n, _ in enabled]
    for i, n in enumerate(explicit):
        if n not in _IMPLEMENTERS:
            raise ConfigError(
                f"{where}.plugins.podGroupPostFilter.enabled[{i}]",
                f"{n} does not implement PodGroupPostFilter",
            )
    if not features.generic_workload:
        return ()
    in_mp = _in_multipoint(sets, multipoint)
    if "*" in disabled:
        order = explicit
    else:
        override = [n for n in explicit if in_mp[n]]
        mp = [n for n in _IMPLEMENTERS if in_mp[n] and n not in disabled and n not in explicit]
        rest = [n for n in explicit if not in_mp[n]]
        order = override + mp + rest
    return tuple(dict.fromkeys(order))
