"""Agreement with kube-scheduler v1.35.4's recorded verdicts: every case, no exceptions.

Expected values are read from ../shared/conformance and nothing else. All cases run in
process; a sample of 30 (and 15 of real-pods.jsonl.gz) also goes through a real server on a
loopback port. Each case is read as a user reads a cluster: one `kind: List` through the
client's `load_objects`.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from schedsvc.config import parse_config
from schedsvc.engine.explain import Explanation, NodeExplanation
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.kube import pod_from_kube
from tests.conftest import ServerFactory
from tools.conformance import (
    CaseResult,
    Report,
    compare_explanation,
    default_paths,
    load_cases,
    preemption_path,
    profiles_config,
    read_case,
    real_pods_path,
    run_case,
    run_preemption_case,
)

CASES_PATH, PROFILES_PATH, PROFILES_YAML = default_paths()
pytestmark = pytest.mark.skipif(
    not CASES_PATH.exists(), reason="shared/conformance is not beside the checkout"
)


def _cases(path: Path) -> list[dict[str, Any]]:
    return list(load_cases(path)) if path.exists() else []


CASES = _cases(CASES_PATH)
PROFILE_CASES = _cases(PROFILES_PATH)
REAL_PODS = _cases(real_pods_path())
FEATURES = ("sidecars", "podResources", "owners", "namespaceSelector", "matchLabelKeys",
            "notReady", "hugepages")
PREEMPTION_CASES = _cases(preemption_path())


def _explain(r: CaseResult) -> str:
    return "\n".join(
        f"{m.aspect} node={m.node}: kube={m.expected!r} ours={m.got!r}" for m in r.mismatches[:20]
    )


def test_the_recording_is_complete() -> None:
    assert len(CASES) == 430
    assert len(PROFILE_CASES) == 160
    assert len(REAL_PODS) == 330
    assert len(PREEMPTION_CASES) == 300
    assert sum("preemption" in c["expected"] for c in PREEMPTION_CASES) == 152


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_default_profile_case_agrees_with_kube(case: dict[str, Any]) -> None:
    r = run_case(case)
    assert not r.mismatches, _explain(r)
    assert r.checks["feasible"] == case["expected"]["numNodes"]


_REAL_RESULTS: dict[str, CaseResult] = {}  # each case runs once for both tests below


def _run_real(case: dict[str, Any]) -> CaseResult:
    r = _REAL_RESULTS.get(case["id"])
    if r is None:
        r = _REAL_RESULTS[case["id"]] = run_case(case)
    return r


@pytest.mark.parametrize("case", REAL_PODS, ids=[c["id"] for c in REAL_PODS])
def test_real_pods_case_agrees_with_kube(case: dict[str, Any]) -> None:
    r = _run_real(case)
    assert not r.mismatches, _explain(r)
    assert r.checks["feasible"] == case["expected"]["numNodes"]


def test_real_pods_report_per_feature() -> None:
    """`make conformance` counts agreeing cases per feature; every feature is exercised."""
    rep = Report()
    for case in REAL_PODS:
        if case.get("features"):
            rep.add(_run_real(case))
    assert set(rep.features) == set(FEATURES)
    for feature, (agree, cases) in rep.features.items():
        assert cases >= 30 and agree == cases, feature
        assert f"feature:{feature} (cases)" in rep.render()


PROFILES = profiles_config(PROFILES_YAML) if PROFILES_YAML.exists() else None


@pytest.mark.parametrize("case", PROFILE_CASES, ids=[c["id"] for c in PROFILE_CASES])
def test_four_profile_case_agrees_with_kube(case: dict[str, Any]) -> None:
    r = run_case(case, PROFILES)
    assert not r.mismatches, _explain(r)


def _explanation_from_pb(resp: pb.ExplainResponse) -> Explanation:
    return Explanation(
        resp.profile,
        tuple(
            NodeExplanation(
                n.name, n.feasible, n.plugin, tuple(n.reasons),
                {s.plugin: (s.score, s.weight) for s in n.scores}, n.total_score,
            )
            for n in resp.nodes
        ),
        resp.chosen_node,
        resp.message,
    )


@pytest.mark.parametrize("case", PREEMPTION_CASES, ids=[c["id"] for c in PREEMPTION_CASES])
def test_preemption_case_agrees_with_kube(case: dict[str, Any]) -> None:
    """Every candidate node with its victims (kube's order) and PDB violations, the
    nominated node, its victims and the message with kube's `preemption: ...` suffix."""
    r = run_preemption_case(case)
    assert not r.mismatches, _explain(r)
    if "preemption" in case["expected"]:
        assert r.checks["fitErrorWithPreemption"] == 1


SAMPLE = [*itertools.islice(CASES[::14], 30), *itertools.islice(REAL_PODS[::22], 15)]
# cases.jsonl.gz was recorded without PostFilter: a profile without DefaultPreemption
NO_PREEMPTION = parse_config(
    {"profiles": [{"plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}}]}
)


@pytest.mark.parametrize("case", SAMPLE, ids=[c["id"] for c in SAMPLE])
def test_case_agrees_through_a_real_grpc_server(
    case: dict[str, Any], make_server: ServerFactory
) -> None:
    stub = make_server(NO_PREEMPTION, seed=1)[1]
    cluster = f"conf-{case['id']}"
    nodes, pods, namespaces, pod = read_case(case)
    stub.UpdateSnapshot(
        pb.UpdateSnapshotRequest(
            cluster=cluster, replace=True, upsert_nodes=nodes, upsert_pods=pods,
            upsert_namespaces=namespaces,
        )
    )
    ex = stub.Explain(pb.ExplainRequest(cluster=cluster, pod=pod))
    r = CaseResult(case["id"])
    exp = case["expected"]
    compare_explanation(r, exp, _explanation_from_pb(ex))
    resp = stub.Schedule(pb.ScheduleRequest(cluster=cluster, pods=[pod], dry_run=True))
    placement = resp.placements[0]
    if "fitError" in exp:
        r.check("fitError", "", exp["fitError"], placement.message)
        r.check("outcome", "", pb.Placement.UNSCHEDULABLE, placement.outcome)
    else:
        best = exp.get("maxNodes") or [n["name"] for n in exp["nodes"] if n["feasible"]]
        r.check("chosen", "", True, placement.node_name in best)
    assert not r.mismatches, _explain(r)


PREEMPTION_SAMPLE = [c for c in PREEMPTION_CASES if c["expected"].get("preemption")][::8]


@pytest.mark.parametrize("case", PREEMPTION_SAMPLE, ids=[c["id"] for c in PREEMPTION_SAMPLE])
def test_preemption_case_agrees_through_a_real_grpc_server(case: dict[str, Any], stub: Any) -> None:
    """The contract end to end: PDBs and pod fields in, nomination and victims out."""
    from schedsvc_client.kube import load_cluster

    cluster = f"pre-{case['id']}"
    listing = {"kind": "List", "items": [
        *({"kind": "Node", **n} for n in case["nodes"]),
        *({"kind": "Pod", **p} for p in case["pods"]),
        *(case.get("objects") or []),
    ]}
    kc = load_cluster(json.dumps(listing))
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster=cluster, replace=True, upsert_nodes=kc.nodes, upsert_pods=kc.pods,
        upsert_pod_disruption_budgets=kc.pod_disruption_budgets,
    ))
    pod = pod_from_kube(case["pod"])
    exp = case["expected"]
    pre = exp["preemption"]
    p = stub.Schedule(pb.ScheduleRequest(cluster=cluster, pods=[pod], dry_run=True)).placements[0]
    assert p.outcome == pb.Placement.UNSCHEDULABLE
    assert p.message == exp["fitErrorWithPreemption"]
    noms = pre.get("nominatedNodes") or []
    if not noms:
        assert p.nominated_node_name == "" and not p.victims
        return
    assert p.nominated_node_name in noms
    want = next(c for c in pre["candidates"] if c["node"] == p.nominated_node_name)
    assert sorted(v.uid for v in p.victims) == sorted(v["uid"] for v in want["victims"])
    ex = stub.Explain(pb.ExplainRequest(cluster=cluster, pod=pod))
    assert {c.node_name: [v.uid for v in c.victims] for c in ex.candidates} == {
        c["node"]: [v["uid"] for v in c["victims"]] for c in pre["candidates"]
    }
    assert ex.nominated_node_name in noms
