"""Plugin registry: kube name -> plugin class, one line per plugin (kube's plugins/registry.go).

Each entry names the module and the class ("module:Class"); the module's `new(args, features)`
builds the plugin. A plugin's extension points are derived from its class (framework/points.py),
so what the configuration may enable and what runs come from the same methods. Modules are
imported when a profile first asks for them, so a profile that does not use a plugin never pays
for it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigError
from ..framework import Plugin
from ..framework.feature import DEFAULT_FEATURES, Features
from ..framework.points import points_of

__all__ = ["Registry", "in_tree_registry", "NOOP_PLUGINS"]

# kube's PluginFactory: the plugin's args and the emulated release's features
Factory = Callable[[Mapping[str, Any] | None, Features], Plugin]

# Kube plugins that act on objects this service does not hold (devices, gates, the
# queue, preemption, binding): with none of those objects they never reject and score 0, so a
# configuration may name them and we honour it by doing nothing.
NOOP_PLUGINS = frozenset(
    {
        "PrioritySort",
        "SchedulingGates",
        "DynamicResources",
        "DefaultPreemption",
        "DefaultBinder",
        "NodeDeclaredFeatures",
        # PreEnqueue and Permit only: the pod group cycle (engine/pod_group_cycle.py) is its
        # behaviour; config/gang_scheduling.py holds it to the GenericWorkload gate
        "GangScheduling",
    }
)


class Registry:
    def __init__(self) -> None:
        self._specs: dict[str, tuple[str, str]] = {}  # name -> (module, class name)
        self._points: dict[str, frozenset[str]] = {}

    def register(self, name: str, spec: str) -> None:
        """`spec` is "package.module:Class"; the module exposes `new`, the class the points."""
        if name in self._specs or name in NOOP_PLUGINS:
            raise ValueError(f"plugin {name!r} is registered twice")
        module, sep, cls = spec.partition(":")
        if not sep or not module or not cls:
            raise ValueError(f"plugin {name!r}: {spec!r} is not 'module:Class'")
        self._specs[name] = (module, cls)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def names(self) -> list[str]:
        return sorted(self._specs)

    def plugin_class(self, name: str) -> type:
        spec = self._specs.get(name)
        if spec is None:
            raise ConfigError("plugins", f"unknown plugin {name!r}")
        cls: type = getattr(importlib.import_module(spec[0]), spec[1])
        return cls

    def points(self, name: str) -> frozenset[str]:
        """The extension points `name` implements (configuration names: "preFilter", ...),
        from its class's methods; none for the plugins we honour by doing nothing."""
        if name in NOOP_PLUGINS:
            return frozenset()
        points = self._points.get(name)
        if points is None:
            points = self._points[name] = points_of(self.plugin_class(name))
        return points

    def new(
        self, name: str, args: Mapping[str, Any] | None, features: Features = DEFAULT_FEATURES
    ) -> Plugin:
        cls = self.plugin_class(name)
        factory: Factory = importlib.import_module(self._specs[name][0]).new
        plugin = factory(args, features)
        if not isinstance(plugin, cls):  # the points were derived from `cls`: it must run
            raise TypeError(f"{name}'s factory built a {type(plugin).__name__}, not {cls.__name__}")
        return plugin


def in_tree_registry() -> Registry:
    r = Registry()
    r.register("NodeUnschedulable", "schedsvc.plugins.node_unschedulable:NodeUnschedulable")
    r.register("NodeName", "schedsvc.plugins.node_name:NodeName")
    r.register("TaintToleration", "schedsvc.plugins.taint_toleration:TaintToleration")
    r.register("NodeAffinity", "schedsvc.plugins.node_affinity:NodeAffinity")
    r.register("NodePorts", "schedsvc.plugins.node_ports:NodePorts")
    r.register("NodeResourcesFit", "schedsvc.plugins.node_resources_fit:NodeResourcesFit")
    r.register("VolumeRestrictions", "schedsvc.plugins.volume_restrictions:VolumeRestrictions")
    r.register("NodeVolumeLimits", "schedsvc.plugins.node_volume_limits:NodeVolumeLimits")
    r.register("VolumeZone", "schedsvc.plugins.volume_zone:VolumeZone")
    r.register("PodTopologySpread", "schedsvc.plugins.pod_topology_spread:PodTopologySpread")
    r.register("InterPodAffinity", "schedsvc.plugins.inter_pod_affinity:InterPodAffinity")
    r.register(
        "NodeResourcesBalancedAllocation",
        "schedsvc.plugins.node_resources_balanced_allocation:NodeResourcesBalancedAllocation",
    )
    r.register("ImageLocality", "schedsvc.plugins.image_locality:ImageLocality")
    r.register("VolumeBinding", "schedsvc.plugins.volume_binding:VolumeBinding")
    return r
