"""`--emulated-version`: v1.37.2's decisions by default, v1.35.4's under 1.35.

Each difference of tools/kube-oracle/FINDINGS.md that we model, shown on a small cluster under
both releases (BalancedAllocation's formula has its own table tests in
tests/plugins/test_node_resources_balanced_allocation_score.py; the recorded cases of both releases
run in tests/test_conformance.py), and the flag itself.
"""

from __future__ import annotations

import pytest

from schedsvc.cli import build_parser, main, scheduler_config
from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.framework.feature import DEFAULT_EMULATED_VERSION, EmulatedVersion
from schedsvc.model import Outcome
from tests.builders import node, pod

V135, V137 = EmulatedVersion.V1_35, EmulatedVersion.V1_37


def _engine(version: EmulatedVersion) -> Engine:
    return Engine(parse_config({}, emulated_version=version), seed=1, batching_enabled=False)


# ---- filter order ----------------------------------------------------------------------------


@pytest.mark.parametrize(("version", "plugin", "reason"), [
    pytest.param(V137, "NodeName", "node(s) didn't match the requested node name",
                 id="v1.37 runs NodeName first"),
    pytest.param(V135, "NodeUnschedulable", "node(s) were unschedulable",
                 id="v1.35 runs NodeUnschedulable first"),
])
def test_a_node_failing_both_first_filters_reports_the_first_in_the_releases_order(
    version: EmulatedVersion, plugin: str, reason: str
) -> None:
    engine = _engine(version)
    try:
        c = engine.cluster("t")
        c.update(SnapshotUpdate(upsert_nodes=[node("cordoned", unschedulable=True), node("b")]))
        ex = c.explain(pod("p", node_name="b"))
        got = {n.name: n for n in ex.nodes}
        assert (got["cordoned"].plugin, got["cordoned"].reasons) == (plugin, (reason,))
        assert got["b"].feasible
    finally:
        engine.close()


# ---- DefaultPreemption's message ---------------------------------------------------------------

FIT_ERROR = "0/2 nodes are available: 2 Insufficient cpu."


@pytest.mark.parametrize(("version", "suffix"), [
    pytest.param(V137, " preemption: found a potential placement for pod on node a, "
                 "preempting 1 victims", id="v1.37 says where and how many victims"),
    pytest.param(V135, "", id="v1.35 says nothing when it nominates"),
])
def test_a_nomination_is_reported_as_the_release_reports_it(
    version: EmulatedVersion, suffix: str
) -> None:
    engine = Engine(parse_config({}, emulated_version=version), seed=1)
    try:
        c = engine.cluster("t")
        c.update(SnapshotUpdate(
            upsert_nodes=[node("a", cpu=1000), node("b", cpu=1000)],
            upsert_pods=[
                pod("low", cpu=800, priority=0, node_name="a"),
                pod("mid", cpu=800, priority=50, node_name="b"),
            ],
        ))
        high = pod("high", cpu=500, priority=100)
        ex = c.explain(high)
        assert ex.message == FIT_ERROR + suffix
        assert ex.nominated_node == "a"
        (p,), _ = c.schedule([high])
        assert (p.outcome, p.nominated_node_name) == (Outcome.UNSCHEDULABLE, "a")
        assert [v.uid for v in p.victims] == ["low"]
        assert p.message == FIT_ERROR + suffix
    finally:
        engine.close()


def test_kube_counts_victims_without_a_singular() -> None:
    from schedsvc.engine.preemption.evaluator import placement_message
    from schedsvc.framework.feature import Features

    assert placement_message(Features(V137), "n6", 1) == (
        "preemption: found a potential placement for pod on node n6, preempting 1 victims"
    )
    assert placement_message(Features(V137), "n", 3).endswith("preempting 3 victims")
    assert placement_message(Features(V135), "n6", 1) == ""


def test_no_nomination_keeps_the_same_message_in_both_releases() -> None:
    for version in (V135, V137):
        engine = _engine(version)
        try:
            c = engine.cluster("t")
            c.update(SnapshotUpdate(upsert_nodes=[node("a", cpu=1000)]))
            ex = c.explain(pod("big", cpu=2000, priority=100))  # beyond allocatable
            assert ex.message == (
                "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
                "available: 1 Preemption is not helpful for scheduling."
            ), version
        finally:
            engine.close()


# ---- the flag --------------------------------------------------------------------------------


def test_the_default_is_v1_37() -> None:
    assert DEFAULT_EMULATED_VERSION is V137
    args = build_parser().parse_args(["serve"])
    cfg = scheduler_config(args)
    assert cfg.emulated_version is V137
    assert all(p.features.emulated_version is V137 for p in cfg.profiles)
    assert Engine(parse_config({})).config.emulated_version is V137


def test_the_flag_selects_v1_35_for_every_profile(tmp_path: pytest.TempPathFactory) -> None:
    cfg_file = tmp_path / "cfg.yaml"  # type: ignore[operator]
    cfg_file.write_text("profiles:\n- schedulerName: a\n- schedulerName: b\n")
    args = build_parser().parse_args(
        ["serve", "--emulated-version", "1.35", "--config", str(cfg_file)]
    )
    cfg = scheduler_config(args)
    assert cfg.emulated_version is V135
    assert [p.features.emulated_version for p in cfg.profiles] == [V135, V135]
    assert cfg.profiles[0].points["filter"][:2] == ("NodeUnschedulable", "NodeName")


def test_the_environment_sets_the_flags_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEDSVC_EMULATED_VERSION", "1.35")
    assert scheduler_config(build_parser().parse_args(["serve"])).emulated_version is V135
    # the flag wins over the environment
    args = build_parser().parse_args(["serve", "--emulated-version", "1.37"])
    assert scheduler_config(args).emulated_version is V137


@pytest.mark.parametrize("argv, env", [
    (["--emulated-version", "1.36"], None),
    (["--emulated-version", "v1.34.0"], None),
    ([], "1.33"),
])
def test_an_unsupported_version_is_a_clear_start_up_error(
    argv: list[str], env: str | None, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if env is not None:
        monkeypatch.setenv("SCHEDSVC_EMULATED_VERSION", env)
    assert main(["serve", "--address", "127.0.0.1:0", *argv]) == 2
    err = capsys.readouterr().err
    assert "configuration error: --emulated-version: unsupported version" in err
    assert "1.35, 1.37" in err
