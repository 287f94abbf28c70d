"""The registry derives each plugin's extension points from its class's methods (the protocols
of framework/interface.py), and the in-tree plugins' points are kube's."""

from __future__ import annotations

from typing import Any

import pytest

from schedsvc.config import parse_config
from schedsvc.errors import ConfigError
from schedsvc.framework import NO_TRAITS, FilterResult
from schedsvc.framework.points import POINT_NAMES, points_of
from schedsvc.plugins.registry import NOOP_PLUGINS, Registry, in_tree_registry

# Read from kube-scheduler v1.37.2's pkg/scheduler/framework/plugins/*: the `var _ fwk.XPlugin
# = &Plugin{}` assertions of each in-tree plugin we run, at the points we run.
KUBE_1_37_POINTS: dict[str, frozenset[str]] = {
    "NodeUnschedulable": frozenset({"preFilter", "filter"}),
    "NodeName": frozenset({"preFilter", "filter"}),
    "TaintToleration": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodeAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodePorts": frozenset({"preFilter", "filter"}),
    "NodeResourcesFit": frozenset({"preFilter", "filter", "preScore", "score"}),
    "VolumeRestrictions": frozenset({"preFilter", "filter"}),
    "NodeVolumeLimits": frozenset({"preFilter", "filter"}),
    "VolumeZone": frozenset({"preFilter", "filter"}),
    "PodTopologySpread": frozenset({"preFilter", "filter", "preScore", "score"}),
    "InterPodAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "ImageLocality": frozenset({"score"}),
    "VolumeBinding": frozenset({"preFilter", "filter", "preScore", "score", "reserve"}),
}
# v1.37 added these PreFilters; v1.35.4 has none of them. NodeUnschedulable's and
# TaintToleration's skip only a pod whose resize is deferred (a gate off by default) and succeed
# otherwise; NodeName's narrows a pod with spec.nodeName to that node. We keep v1.35's points
# for them (docs/differences.md, "Not carried over").
NOT_CARRIED_OVER_1_37: dict[str, frozenset[str]] = {
    "NodeUnschedulable": frozenset({"preFilter"}),
    "NodeName": frozenset({"preFilter"}),
    "TaintToleration": frozenset({"preFilter"}),
}


def test_every_in_tree_plugin_implements_kubes_points() -> None:
    registry = in_tree_registry()
    assert set(registry.names()) == set(KUBE_1_37_POINTS)
    derived = {name: registry.points(name) for name in registry.names()}
    expected = {
        name: points - NOT_CARRIED_OVER_1_37.get(name, frozenset())
        for name, points in KUBE_1_37_POINTS.items()
    }
    assert derived == expected


def test_the_plugins_honoured_by_doing_nothing_implement_no_point() -> None:
    registry = in_tree_registry()
    assert all(registry.points(name) == frozenset() for name in NOOP_PLUGINS)


class _Filter:
    name = "Filter"
    traits = NO_TRAITS

    def filter(self, state: Any, pod: Any, snap: Any, rows: Any) -> FilterResult:
        raise NotImplementedError


class _ScoreWithoutNormalize(_Filter):
    def score(self, state: Any, pod: Any, snap: Any, rows: Any) -> Any:
        raise NotImplementedError


class _Score(_ScoreWithoutNormalize):
    def normalize(self, state: Any, pod: Any, scores: Any) -> Any:
        raise NotImplementedError


class _ScoreAttribute(_Filter):
    score = 3  # an attribute of that name is no method
    normalize = 4


@pytest.mark.parametrize(
    ("cls", "points"),
    [
        pytest.param(_Filter, {"filter"}, id="a class with filter alone is a Filter plugin only"),
        pytest.param(
            _ScoreWithoutNormalize, {"filter"},
            id="score without normalize is not a Score plugin: ScorePlugin has both",
        ),
        pytest.param(_Score, {"filter", "score"}, id="score and normalize make a Score plugin"),
        pytest.param(_ScoreAttribute, {"filter"}, id="attributes named like methods count not"),
    ],
)
def test_a_plugins_points_come_from_its_methods(cls: type, points: set[str]) -> None:
    assert points_of(cls) == points


def _registry_with(cls: type) -> Registry:
    registry = Registry()
    registry.register("NodeName", f"{__name__}:{cls.__name__}")
    return registry


def new(args: Any, features: Any) -> Any:
    """The factory the test registry imports from this module: a plain _Filter."""
    return _Filter()


def test_a_profile_may_enable_a_plugin_only_where_its_class_has_the_methods() -> None:
    cfg = {"profiles": [{"plugins": {
        "multiPoint": {"disabled": [{"name": "*"}]},
        "score": {"enabled": [{"name": "NodeName"}]},
    }}]}
    with pytest.raises(ConfigError, match="NodeName does not implement score"):
        parse_config(cfg, _registry_with(_Filter))
    profile = parse_config(cfg, _registry_with(_Score)).profiles[0]
    assert profile.points["score"] == ("NodeName",)


def test_multipoint_expands_a_plugin_to_the_points_its_class_implements() -> None:
    profile = parse_config({"profiles": [{"plugins": {
        "multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeName"}]},
    }}]}, _registry_with(_Score)).profiles[0]
    assert {p for p in POINT_NAMES if profile.points[p]} == {"filter", "score"}


def test_a_factory_must_build_the_class_the_points_were_read_from() -> None:
    with pytest.raises(TypeError, match="built a _Filter, not _Score"):
        _registry_with(_Score).new("NodeName", None)


def test_a_registration_names_module_and_class() -> None:
    with pytest.raises(ValueError, match="not 'module:Class'"):
        Registry().register("X", "schedsvc.plugins.node_name")
    registry = in_tree_registry()
    with pytest.raises(ValueError, match="registered twice"):
        registry.register("NodeName", "schedsvc.plugins.node_name:NodeName")
    with pytest.raises(ConfigError, match="unknown plugin"):
        registry.points("Bogus")
