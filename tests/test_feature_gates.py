"""--feature-gates for gang scheduling (feature_gates.py, config/gang_scheduling.py): the gates
kube v1.37.2 knows with its defaults (pkg/features/kube_features.go), the unmodelled ones
refused on, GenericWorkload refused under 1.35, the gates carried by every profile's Features,
and the GangScheduling plugin kept as kube's applyFeatureGates leaves it (which mixes kube
accepts was measured with the oracle's `plugins` mode; see config/gang_scheduling.py)."""

from __future__ import annotations

from typing import Any

import pytest

from schedsvc.cli import build_parser, main, scheduler_config
from schedsvc.config import parse_config
from schedsvc.config.defaults import DEFAULT_MULTIPOINT_1_37, default_multipoint
from schedsvc.errors import ConfigError
from schedsvc.feature_gates import parse_feature_gates
from schedsvc.framework.feature import EmulatedVersion, Features

V135, V137 = EmulatedVersion.V1_35, EmulatedVersion.V1_37
ON = Features(gates=(("GenericWorkload", True),))


def test_the_defaults_are_kube_v1_37_2s() -> None:
    assert parse_feature_gates("") == {
        "OpportunisticBatching": True, "GenericWorkload": False,
        "TopologyAwareWorkloadScheduling": False, "CompositePodGroup": False,
        "PodGroupPreemptionPolicy": False, "DRAWorkloadResourceClaims": False,
        "WorkloadWithJob": False,
    }
    # v1.35.4 has neither the 1.36 nor the 1.37 gates
    assert parse_feature_gates("", V135) == {
        "OpportunisticBatching": True, "GenericWorkload": False,
    }


@pytest.mark.parametrize("gate", [
    "TopologyAwareWorkloadScheduling", "CompositePodGroup", "PodGroupPreemptionPolicy",
    "DRAWorkloadResourceClaims",
])
def test_an_unmodelled_gate_may_be_named_off_but_not_on(gate: str) -> None:
    assert parse_feature_gates(f"GenericWorkload=true,{gate}=false")[gate] is False
    with pytest.raises(ConfigError, match=f"{gate}=true is not supported"):
        parse_feature_gates(f"GenericWorkload=true,{gate}=true")


def test_workload_with_job_needs_generic_workload_as_kubes_dependencies_say() -> None:
    """WorkloadWithJob is the Job controller's: the scheduler decides alike with it on."""
    assert parse_feature_gates("GenericWorkload=true,WorkloadWithJob=true")["WorkloadWithJob"]
    with pytest.raises(ConfigError, match=r"WorkloadWithJob is enabled, but depends on "
                       r"features that are disabled: \[GenericWorkload\]"):
        parse_feature_gates("WorkloadWithJob=true")


def test_generic_workload_is_refused_under_1_35_and_later_gates_are_unknown_there() -> None:
    assert parse_feature_gates("GenericWorkload=false", V135)["GenericWorkload"] is False
    with pytest.raises(ConfigError, match="not supported with --emulated-version 1.35"):
        parse_feature_gates("GenericWorkload=true", V135)
    with pytest.raises(ConfigError, match="unknown feature gate 'CompositePodGroup'"):
        parse_feature_gates("CompositePodGroup=false", V135)
    with pytest.raises(ConfigError, match="unknown feature gate 'GangScheduling'"):
        parse_feature_gates("GangScheduling=true")  # removed in 1.37


def _profiles(argv: list[str]) -> list[Features]:
    cfg = scheduler_config(build_parser().parse_args(["serve", *argv]))
    return [p.features for p in cfg.profiles]


def test_the_gate_reaches_every_profile(tmp_path: Any) -> None:
    cfg_file = tmp_path / "cfg.yaml"
    cfg_file.write_text("profiles:\n- schedulerName: a\n- schedulerName: b\n")
    feats = _profiles(["--config", str(cfg_file), "--feature-gates", "GenericWorkload=true"])
    assert [f.generic_workload for f in feats] == [True, True]
    assert not any(f.generic_workload for f in _profiles([]))
    # a default server's profiles carry no gates: its configuration is kube's default one
    assert [f.gates for f in _profiles([])] == [()]


def test_the_environment_variable_still_sets_the_gates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEDSVC_FEATURE_GATES", "GenericWorkload=true")
    assert [f.generic_workload for f in _profiles([])] == [True]
    assert [f.generic_workload for f in _profiles(["--feature-gates", ""])] == [False]


def test_a_refused_gate_is_a_start_up_error(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["serve", "--address", "127.0.0.1:0", "--emulated-version", "1.35",
            "--feature-gates", "GenericWorkload=true"]
    assert main(argv) == 2
    assert "configuration error: --feature-gates: GenericWorkload=true" in capsys.readouterr().err


# ---- the GangScheduling plugin ---------------------------------------------------------------

def _config(plugins: dict[str, Any], features: Features) -> None:
    parse_config({"profiles": [{"plugins": plugins}]}, features=features)


def test_generic_workload_adds_gang_scheduling_last_to_the_default_multipoint() -> None:
    assert default_multipoint(ON) == (*DEFAULT_MULTIPOINT_1_37, ("GangScheduling", 0))
    assert default_multipoint(Features()) == DEFAULT_MULTIPOINT_1_37


@pytest.mark.parametrize("plugins", [
    {"multiPoint": {"enabled": [{"name": "GangScheduling"}]}},
    {"preEnqueue": {"enabled": [{"name": "GangScheduling"}]},
     "permit": {"enabled": [{"name": "GangScheduling"}]}},
    {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "GangScheduling"},
                                                             {"name": "NodeResourcesFit"}]}},
], ids=["re-enabled in multiPoint", "enabled at its points", "the only default kept"])
def test_gang_scheduling_as_kube_leaves_it_with_the_gate_on_is_accepted(
    plugins: dict[str, Any]
) -> None:
    _config(plugins, ON)


@pytest.mark.parametrize(("plugins", "point"), [
    ({"multiPoint": {"disabled": [{"name": "GangScheduling"}]}}, "preEnqueue"),
    ({"permit": {"disabled": [{"name": "*"}]}}, "permit"),
    ({"multiPoint": {"disabled": [{"name": "*"}]}}, "preEnqueue"),
], ids=["disabled by name", "permit disabled whole", "every default disabled"])
def test_gang_scheduling_turned_off_with_the_gate_on_is_refused(
    plugins: dict[str, Any], point: str
) -> None:
    with pytest.raises(ConfigError, match="GangScheduling must stay enabled") as exc:
        _config(plugins, ON)
    assert exc.value.args[0].startswith(f"profiles[0].plugins.{point}")


@pytest.mark.parametrize("plugins", [
    {"multiPoint": {"enabled": [{"name": "GangScheduling"}]}},
    {"permit": {"enabled": [{"name": "GangScheduling"}]}},
])
def test_gang_scheduling_enabled_with_the_gate_off_is_refused(plugins: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="GangScheduling needs --feature-gates GenericWorkload"):
        _config(plugins, Features())
    # disabling it with the gate off changes nothing in kube: accepted
    _config({"multiPoint": {"disabled": [{"name": "GangScheduling"}]}}, Features())
