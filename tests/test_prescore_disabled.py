"""A profile that disables a plugin's preScore while its score stays enabled.

kube-scheduler v1.35.4 and v1.37.2 alike: NodeResourcesFit and NodeResourcesBalancedAllocation
Score compute the pod's requests on the spot when their PreScore state is missing
(BalancedAllocation scoring a pod that requests none of its resources 0, as its PreScore's Skip
would); NodeAffinity falls back the same way. TaintToleration, PodTopologySpread and
InterPodAffinity Score return an error status instead, so kube fails every pod that reaches
Score: we refuse such a profile when the configuration is loaded (docs/differences.md).
Expected scores are worked from kube's formulas in each case's comment.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import pytest

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.errors import ConfigError
from schedsvc.framework.podinfo import pod_info
from schedsvc.plugins import node_resources_balanced_allocation as ba
from schedsvc.plugins import node_resources_fit as fit
from schedsvc.v1 import schedule_pb2 as pb
from tests import builders
from tests.builders import GiB, node, pod


def _disable_pre_score(*names: str, score_too: bool = False) -> dict[str, Any]:
    plugins: dict[str, Any] = {"preScore": {"disabled": [{"name": n} for n in names]}}
    if score_too:
        plugins["score"] = {"disabled": [{"name": n} for n in names]}
    return {"profiles": [{"schedulerName": "tight", "plugins": plugins}]}


# ---- refused at load -------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", ["PodTopologySpread", "InterPodAffinity", "TaintToleration"])
def test_a_plugin_whose_kube_score_needs_its_pre_score_is_refused(plugin: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(_disable_pre_score(plugin))
    msg = str(err.value)
    assert msg.startswith("profiles[0].plugins.preScore: ")
    assert "'tight'" in msg and "preScore" in msg and plugin in msg
    assert f'error reading "PreScore{plugin}" from cycleState' in msg


def test_disabling_every_pre_score_names_the_first_plugin_refused() -> None:
    with pytest.raises(ConfigError, match="of TaintToleration while"):
        parse_config({"profiles": [{"plugins": {"preScore": {"disabled": [{"name": "*"}]}}}]})


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(_disable_pre_score("PodTopologySpread", "InterPodAffinity",
                                        "TaintToleration", score_too=True),
                     id="disabled at score too"),
        pytest.param(_disable_pre_score("NodeResourcesFit", "NodeResourcesBalancedAllocation",
                                        "NodeAffinity"), id="plugins kube scores without"),
    ],
)
def test_profiles_kube_can_run_are_accepted(raw: dict[str, Any]) -> None:
    (p,) = parse_config(raw).profiles
    names = raw["profiles"][0]["plugins"]["preScore"]["disabled"]
    assert not {n["name"] for n in names} & set(p.points["preScore"])


def test_the_cli_refuses_such_a_configuration_at_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from schedsvc.cli import main

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins:\n    preScore:\n      disabled:\n      - name: InterPodAffinity\n"
    )
    assert main(["serve", "--address", "127.0.0.1:0", "--config", str(cfg)]) == 2
    assert 'error reading "PreScoreInterPodAffinity"' in capsys.readouterr().err


# ---- Fit and BalancedAllocation score without their PreScore ---------------------------------

# a: 4000m, 10Gi; b: 2000m, 4Gi; nothing placed.
NODES = [node("a", cpu=4000, memory=10 * GiB), node("b", cpu=2000, memory=4 * GiB)]

SCORES = [
    # Fit LeastAllocated (cpu, memory weight 1), non-zero requests 1000m / 2Gi:
    #   a: cpu 3000*100/4000 = 75, mem 8*100/10 = 80 -> (75+80)/2 = 77
    #   b: cpu 1000*100/2000 = 50, mem 2*100/4 = 50 -> 50
    # BalancedAllocation (v1.37, the default): a: with the pod .25, .2 -> std .025 -> 97,
    # without 100 -> 50 + (50 + 97 - 100) / 2 = 73; b: with .5, .5 -> 100, without 100 -> 75
    pytest.param({"cpu": 1000, "memory": 2 * GiB}, [77, 50], [73, 75], id="requests"),
    # best effort: Fit takes 100m / 200Mi:
    #   a: cpu 3900*100/4000 = 97, mem (10240-200)*100/10240 = 98 -> 97
    #   b: cpu 1900*100/2000 = 95, mem (4096-200)*100/4096 = 95 -> 95
    # BalancedAllocation: requests nothing -> kube's Score returns 0
    pytest.param({"cpu": None, "memory": None}, [97, 95], [0, 0], id="best effort"),
]


@pytest.mark.parametrize(("req", "fit_want", "ba_want"), SCORES)
def test_score_without_pre_score_is_kubes_fallback(
    req: dict[str, Any], fit_want: list[int], ba_want: list[int]
) -> None:
    snap = builders.snapshot_of(NODES)
    info = pod_info(pod("p", **req))
    rows = builders.rows_of(snap, ["a", "b"])
    for plugin, want in ((fit.new(None), fit_want), (ba.new(None), ba_want)):
        assert [int(x) for x in plugin.score(None, info, snap, rows)] == want
        assert [plugin.score_one(None, info, snap, int(r)) for r in rows] == want
        one = np.array([rows[0]], dtype=np.intp)
        assert int(plugin.score(None, info, snap, one)[0]) == want[0]


@pytest.mark.parametrize("batching", [False, True])
@pytest.mark.parametrize(("req", "fit_want", "ba_want"), SCORES)
def test_an_engine_without_those_pre_scores_scores_as_kube(
    req: dict[str, Any], fit_want: list[int], ba_want: list[int], batching: bool
) -> None:
    cfg = parse_config(_disable_pre_score("NodeResourcesFit", "NodeResourcesBalancedAllocation"))
    engine = Engine(cfg, seed=1, batching_enabled=batching)
    c = engine.cluster("t")
    c.update(SnapshotUpdate(upsert_nodes=list(NODES)))
    try:
        ex = c.explain(pod("x", scheduler_name="tight", **req))
        got = {n.name: n.scores for n in ex.nodes}
        for i, name in enumerate(("a", "b")):
            assert got[name]["NodeResourcesFit"] == (fit_want[i], 1)
            assert got[name]["NodeResourcesBalancedAllocation"] == (ba_want[i], 1)
        pods = [pod(f"p{i}", scheduler_name="tight", **req) for i in range(6)]
        placed, _ = c.schedule(pods)
        assert all(p.node_name for p in placed)
    finally:
        engine.close()


def test_placements_equal_the_unbatched_default_profile() -> None:
    """Without PreScore kube computes the same requests, so a run of pods lands where the
    default profile's unbatched cycles put it."""
    shapes: list[dict[str, Any]] = [
        {"cpu": 1000, "memory": 2 * GiB}, {"cpu": None, "memory": None},
        {"cpu": 500, "memory": None},
    ] * 4

    def run(raw: dict[str, Any], batching: bool) -> list[str]:
        engine = Engine(parse_config(raw), seed=7, batching_enabled=batching)
        c = engine.cluster("t")
        c.update(SnapshotUpdate(upsert_nodes=list(NODES)))
        try:
            out, _ = c.schedule([pod(f"p{i}", scheduler_name="tight", **s)
                                 for i, s in enumerate(shapes)])
            return [p.node_name for p in out]
        finally:
            engine.close()

    want = run({"profiles": [{"schedulerName": "tight"}]}, batching=False)
    off = _disable_pre_score("NodeResourcesFit", "NodeResourcesBalancedAllocation",
                             "NodeAffinity")
    assert run(off, batching=False) == want
    assert run(off, batching=True) == want


# ---- through gRPC ----------------------------------------------------------------------------


@pytest.mark.parametrize("batching", [False, True])
def test_the_server_never_answers_internal(
    make_server: Callable[..., Any], batching: bool
) -> None:
    cfg = parse_config(_disable_pre_score("NodeResourcesFit", "NodeResourcesBalancedAllocation",
                                          "NodeAffinity"))
    _, stub = make_server(config=cfg, seed=1, batching_enabled=batching)
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(upsert_nodes=[
        pb.Node(name=n, labels={"kubernetes.io/hostname": n},
                allocatable={"cpu": cpu, "memory": mem, "pods": "110"})
        for n, cpu, mem in (("a", "4", "10Gi"), ("b", "2", "4Gi"))
    ]))
    pods = []
    for i in range(8):
        req = {"cpu": "1", "memory": "2Gi"} if i % 2 else {}
        pods.append(pb.Pod(uid=f"p{i}", name=f"p{i}", namespace="default",
                           scheduler_name="tight",
                           containers=[pb.Container(name="c", image="img", requests=req)]))
    try:
        resp = stub.Schedule(pb.ScheduleRequest(pods=pods))
    except grpc.RpcError as err:  # pragma: no cover - the defect this guards against
        pytest.fail(f"Schedule failed with {err.code()}: {err.details()}")
    assert [p.outcome for p in resp.placements] == [pb.Placement.SCHEDULED] * 8
    # the first pod (best effort) goes where Fit's 97 beats b's 95
    assert resp.placements[0].node_name == "a"
