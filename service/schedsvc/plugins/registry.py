"""Plugin registry: kube name -> constructor, one line per plugin (kube's plugins/registry.go).

Modules are imported when a profile first asks for them, so a profile that does not use a
plugin never pays for it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigError
from ..framework import Plugin
from ..framework.feature import DEFAULT_FEATURES, Features

__all__ = ["Registry", "in_tree_registry", "NOOP_PLUGINS"]

# kube's PluginFactory: the plugin's args and the emulated release's features
Factory = Callable[[Mapping[str, Any] | None, Features], Plugin]

# Kube plugins that act on objects this service does not hold (volumes, claims, gates, the
# queue, preemption, binding): with none of those objects they never reject and score 0, so a
# configuration may name them and we honour it by doing nothing.
NOOP_PLUGINS = frozenset(
    {
        "PrioritySort",
        "SchedulingGates",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "DynamicResources",
        "DefaultPreemption",
        "DefaultBinder",
        "NodeDeclaredFeatures",
    }
)


class Registry:
    def __init__(self) -> None:
        self._factories: dict[str, str] = {}

    def register(self, name: str, module: str) -> None:
        if name in self._factories or name in NOOP_PLUGINS:
            raise ValueError(f"plugin {name!r} is registered twice")
        self._factories[name] = module

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def names(self) -> list[str]:
        return sorted(self._factories)

    def new(
        self, name: str, args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
    ) -> Plugin:
        module = self._factories.get(name)
        if module is None:
            raise ConfigError("plugins", f"unknown plugin {name!r}")
        factory: Factory = importlib.import_module(module).new
        return factory(args, features)


def in_tree_registry() -> Registry:
    r = Registry()
    r.register("NodeUnschedulable", "schedsvc.plugins.node_unschedulable")
    r.register("NodeName", "schedsvc.plugins.node_name")
    r.register("TaintToleration", "schedsvc.plugins.taint_toleration")
    r.register("NodeAffinity", "schedsvc.plugins.node_affinity")
    r.register("NodePorts", "schedsvc.plugins.node_ports")
    r.register("NodeResourcesFit", "schedsvc.plugins.node_resources_fit")
    r.register("PodTopologySpread", "schedsvc.plugins.pod_topology_spread")
    r.register("InterPodAffinity", "schedsvc.plugins.inter_pod_affinity")
    r.register(
        "NodeResourcesBalancedAllocation", "schedsvc.plugins.node_resources_balanced_allocation"
    )
    r.register("ImageLocality", "schedsvc.plugins.image_locality")
    return r
