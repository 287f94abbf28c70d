"""KubeSchedulerConfiguration v1: profiles resolve as kube resolves them, and per-profile
weights change decisions the way kube's formulas say they must."""

from __future__ import annotations

from typing import Any

import pytest

from schedsvc.config import (
    DEFAULT_MULTIPOINT,
    DEFAULT_MULTIPOINT_1_35,
    DEFAULT_MULTIPOINT_1_37,
    parse_config,
)
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.errors import ConfigError
from schedsvc.framework.feature import EmulatedVersion, Features, parse_emulated_version
from tests.builders import node, pod

DEFAULT_SCORE = [
    "TaintToleration",
    "NodeAffinity",
    "NodeResourcesFit",
    "VolumeBinding",
    "PodTopologySpread",
    "InterPodAffinity",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
]


DEFAULT_WEIGHTS = {
    "TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
    "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1,
    "VolumeBinding": 1,
}
FILTERS_AFTER_THE_FIRST_TWO = [
    "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions",
    "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity",
]


def test_the_default_profile_is_kubes_v1_37_default() -> None:
    """v1.37.2's getDefaultPlugins: NodeName before NodeUnschedulable, NodeDeclaredFeatures
    appended by its (GA) gate; weights as in v1.35."""
    (p,) = parse_config({}).profiles
    assert p.scheduler_name == "default-scheduler"
    assert p.features == Features(EmulatedVersion.V1_37)
    assert list(p.points["filter"]) == [
        "NodeName", "NodeUnschedulable", *FILTERS_AFTER_THE_FIRST_TWO,
    ]
    assert list(p.points["score"]) == DEFAULT_SCORE
    assert dict(p.weights) == DEFAULT_WEIGHTS
    assert DEFAULT_MULTIPOINT is DEFAULT_MULTIPOINT_1_37
    assert len(DEFAULT_MULTIPOINT_1_37) == 19
    assert DEFAULT_MULTIPOINT_1_37[-1] == ("NodeDeclaredFeatures", 0)


def test_the_default_profile_under_1_35_is_kubes_v1_35_default() -> None:
    cfg = parse_config({}, emulated_version=EmulatedVersion.V1_35)
    (p,) = cfg.profiles
    assert cfg.emulated_version is EmulatedVersion.V1_35
    assert p.features == Features(EmulatedVersion.V1_35)
    assert list(p.points["filter"]) == [
        "NodeUnschedulable", "NodeName", *FILTERS_AFTER_THE_FIRST_TWO,
    ]
    assert list(p.points["score"]) == DEFAULT_SCORE
    assert dict(p.weights) == DEFAULT_WEIGHTS
    assert len(DEFAULT_MULTIPOINT_1_35) == 18
    assert "NodeDeclaredFeatures" not in dict(DEFAULT_MULTIPOINT_1_35)


@pytest.mark.parametrize(("text", "want"), [
    ("1.37", EmulatedVersion.V1_37), ("1.35", EmulatedVersion.V1_35),
    ("v1.35.4", EmulatedVersion.V1_35), (" 1.37 ", EmulatedVersion.V1_37),
])
def test_emulated_versions_we_reproduce(text: str, want: EmulatedVersion) -> None:
    assert parse_emulated_version(text) is want


@pytest.mark.parametrize("text", ["1.36", "1.34", "", "latest", "1.35.1", "2"])
def test_any_other_emulated_version_is_an_error_naming_the_flag(text: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_emulated_version(text)
    assert e.value.field == "--emulated-version"
    assert "1.35, 1.37" in str(e.value)


def test_a_re_configured_default_keeps_its_place_and_takes_the_new_weight() -> None:
    (p,) = parse_config({"profiles": [{"plugins": {"multiPoint": {"enabled": [
        {"name": "TaintToleration", "weight": 2},
        {"name": "NodeResourcesBalancedAllocation", "weight": 3},
    ]}, "score": {"disabled": [{"name": "InterPodAffinity"}]}}}]}).profiles
    assert list(p.points["score"]) == [n for n in DEFAULT_SCORE if n != "InterPodAffinity"]
    assert p.weights["TaintToleration"] == 2
    assert p.weights["NodeResourcesBalancedAllocation"] == 3
    assert "InterPodAffinity" in p.points["filter"]  # disabled for score only


def test_disabling_star_at_a_point_keeps_only_what_is_enabled_there() -> None:
    (p,) = parse_config({"profiles": [{"plugins": {"score": {
        "disabled": [{"name": "*"}], "enabled": [{"name": "ImageLocality", "weight": 5}],
    }}}]}).profiles
    assert list(p.points["score"]) == ["ImageLocality"]
    assert p.weights == {"ImageLocality": 5}


def test_a_plugin_enabled_at_a_point_overrides_its_multipoint_place() -> None:
    (p,) = parse_config({"profiles": [{"plugins": {"filter": {
        "enabled": [{"name": "NodeResourcesFit"}],
    }}}]}).profiles
    # part 1 of kube's expansion: explicitly re-configured plugins come first
    assert p.points["filter"][0] == "NodeResourcesFit"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        pytest.param({"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}, "apiVersion",
                     id="an old api version"),
        pytest.param({"profiles": [{"plugins": {"score": {"enabled": [{"name": "Magic"}]}}}]},
                     "profiles[0].plugins.score.enabled[0].name", id="an unknown plugin"),
        pytest.param({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit",
                                                      "args": {"scoringStrategy": {
                                                          "type": "Cheapest"}}}]}]},
                     "scoringStrategy", id="an unknown scoring strategy"),
        pytest.param({"profiles": [{"pluginConfig": [{"name": "InterPodAffinity",
                                                      "args": {"hardPodAffinityWeight": 500}}]}]},
                     "hardPodAffinityWeight", id="an out of range weight"),
        pytest.param({"profiles": [{}, {}]}, "profiles[1].schedulerName",
                     id="two profiles with one name"),
        pytest.param({"percentageOfNodesToScore": 150}, "percentageOfNodesToScore",
                     id="a percentage above 100"),
        pytest.param({"profiles": [{"plugins": {"filter": {"enabled": [
            {"name": "ImageLocality"}]}}}]}, "profiles[0].plugins.filter",
                     id="a score-only plugin enabled as a filter"),
        pytest.param({"extenders": [{"urlPrefix": "http://x"}]}, "extenders",
                     id="extenders"),
        pytest.param({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit",
                                                      "args": {"bogus": 1}}]}]},
                     "bogus", id="an unknown plugin argument"),
    ],
)
def test_what_we_cannot_honour_is_a_start_up_error_naming_the_field(
    raw: dict[str, Any], field: str
) -> None:
    with pytest.raises(ConfigError) as e:
        cfg = parse_config(raw)
        Engine(cfg).close()  # plugin args are validated when the profile is built
    assert field in str(e.value)


TWO_PROFILES = {
    "percentageOfNodesToScore": 100,
    "profiles": [
        {"schedulerName": "spreader"},
        {
            "schedulerName": "packer",
            "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]}}}],
            "plugins": {"multiPoint": {"enabled": [
                {"name": "NodeResourcesFit", "weight": 5}]}},
        },
    ],
}


def test_two_profiles_from_one_configuration_decide_differently() -> None:
    """busy has 3000m of 4000m used, idle nothing; the pod asks 500m cpu, 256Mi.

    spreader (LeastAllocated cpu+memory, weight 1): busy cpu (4000-3500)*100/4000 = 12,
    idle (4000-500)*100/4000 = 87, so idle wins on Fit, and BalancedAllocation agrees
    (busy's fractions are further apart). packer (MostAllocated cpu only, weight 5):
    busy 3500*100/4000 = 87 -> 435, idle 500*100/4000 = 12 -> 60; Balanced favours idle by
    at most 100, so busy wins by a margin no other plugin can close.
    """
    engine = Engine(parse_config(TWO_PROFILES), seed=1, batching_enabled=False)
    c = engine.cluster("t")
    c.update(SnapshotUpdate(
        upsert_nodes=[node("busy"), node("idle")],
        upsert_pods=[pod("load", cpu=3000, memory=None, node_name="busy")],
    ))
    try:
        spread, _ = c.schedule([pod("a", cpu=500, scheduler_name="spreader")], dry_run=True)
        pack, _ = c.schedule([pod("b", cpu=500, scheduler_name="packer")], dry_run=True)
        assert spread[0].node_name == "idle"
        assert pack[0].node_name == "busy"
        ex = c.explain(pod("c", cpu=500, scheduler_name="packer"))
        busy = next(n for n in ex.nodes if n.name == "busy")
        assert busy.scores["NodeResourcesFit"] == (87, 5)
    finally:
        engine.close()
