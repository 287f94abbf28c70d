"""Agreement with kube-scheduler's recorded verdicts, every case, no exceptions, under both
emulated releases: v1.35.4's recordings (../shared/conformance) with `--emulated-version 1.35`,
v1.37.2's (tests/data/conformance-1.37, recorded with tools/kube-oracle) with the default 1.37.

Expected values are read from the recordings and nothing else. All cases run in process; a
sample of 30 (and 15 of real-pods.jsonl.gz) per release also goes through a real server on a
loopback port. Each case is read as a user reads a cluster: one `kind: List` through the
client's `load_objects`.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from schedsvc.config import SchedulerConfig, parse_config
from schedsvc.engine.explain import Explanation, NodeExplanation
from schedsvc.framework.feature import DEFAULT_EMULATED_VERSION, EmulatedVersion
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.kube import pod_from_kube
from tests.conftest import ServerFactory
from tools.conformance import (
    RECORDINGS,
    CaseResult,
    Recording,
    Report,
    compare_explanation,
    load_cases,
    profiles_config,
    read_case,
    run_case,
    run_preemption_case,
)

V135, V137 = RECORDINGS
assert V135.version is EmulatedVersion.V1_35 and V137.version is DEFAULT_EMULATED_VERSION


def _cases(path: Path) -> list[dict[str, Any]]:
    return list(load_cases(path)) if path.exists() else []


Item = tuple[Recording, dict[str, Any]]


def _items(kind: str) -> list[Item]:
    return [(rec, c) for rec in RECORDINGS for c in _cases(getattr(rec, kind))]


def _ids(items: list[Item]) -> list[str]:
    return [f"{rec.version.value}-{c['id']}" for rec, c in items]


CASES = _items("cases")
PROFILE_CASES = _items("profiles")
REAL_PODS = _items("real_pods")
PREEMPTION_CASES = _items("preemption")
FEATURES = ("sidecars", "podResources", "owners", "namespaceSelector", "matchLabelKeys",
            "notReady", "hugepages")


def _explain(r: CaseResult) -> str:
    return "\n".join(
        f"{m.aspect} node={m.node}: kube={m.expected!r} ours={m.got!r}" for m in r.mismatches[:20]
    )


@pytest.mark.parametrize("rec", RECORDINGS, ids=[r.kube for r in RECORDINGS])
def test_the_recording_is_complete(rec: Recording) -> None:
    if not rec.cases.exists():
        pytest.skip(f"{rec.base} is not beside the checkout")
    def count(items: list[Item]) -> list[dict[str, Any]]:
        return [c for r, c in items if r is rec]
    assert len(count(CASES)) == 430
    assert len(count(PROFILE_CASES)) == 160
    assert len(count(REAL_PODS)) == 330
    preemption = count(PREEMPTION_CASES)
    assert len(preemption) == 300
    assert sum("preemption" in c["expected"] for c in preemption) == 152
    nominating = [c for c in preemption if c["expected"].get("preemption", {}).get("nominatedNode")]
    assert len(nominating) == 85
    # v1.37 reports the placement it found (tools/kube-oracle/FINDINGS.md, section 2)
    found = [c for c in nominating
             if "preemption: found a potential placement for pod on node "
             in c["expected"]["fitErrorWithPreemption"]]
    assert len(found) == (85 if rec.version is EmulatedVersion.V1_37 else 0)


def test_the_two_recordings_hold_the_same_cases() -> None:
    """Only the verdicts differ: the 1.37 files were recorded from the shared inputs."""
    if not V135.cases.exists():
        pytest.skip("shared/conformance is not beside the checkout")
    for kind in ("cases", "profiles", "real_pods", "preemption"):
        old = [{k: v for k, v in c.items() if k != "expected"}
               for c in _cases(getattr(V135, kind))]
        new = [{k: v for k, v in c.items() if k != "expected"}
               for c in _cases(getattr(V137, kind))]
        assert old == new, kind


@pytest.mark.parametrize(("rec", "case"), CASES, ids=_ids(CASES))
def test_default_profile_case_agrees_with_kube(rec: Recording, case: dict[str, Any]) -> None:
    r = run_case(case, version=rec.version)
    assert not r.mismatches, _explain(r)
    assert r.checks["feasible"] == case["expected"]["numNodes"]


# each case runs once for both tests below
_REAL_RESULTS: dict[tuple[EmulatedVersion, str], CaseResult] = {}


def _run_real(rec: Recording, case: dict[str, Any]) -> CaseResult:
    key = (rec.version, case["id"])
    r = _REAL_RESULTS.get(key)
    if r is None:
        r = _REAL_RESULTS[key] = run_case(case, version=rec.version)
    return r


@pytest.mark.parametrize(("rec", "case"), REAL_PODS, ids=_ids(REAL_PODS))
def test_real_pods_case_agrees_with_kube(rec: Recording, case: dict[str, Any]) -> None:
    r = _run_real(rec, case)
    assert not r.mismatches, _explain(r)
    assert r.checks["feasible"] == case["expected"]["numNodes"]


@pytest.mark.parametrize("rec", RECORDINGS, ids=[r.kube for r in RECORDINGS])
def test_real_pods_report_per_feature(rec: Recording) -> None:
    """`make conformance` counts agreeing cases per feature; every feature is exercised."""
    if not rec.real_pods.exists():
        pytest.skip(f"{rec.base} is not beside the checkout")
    rep = Report()
    for r, case in REAL_PODS:
        if r is rec and case.get("features"):
            rep.add(_run_real(rec, case))
    assert set(rep.features) == set(FEATURES)
    for feature, (agree, cases) in rep.features.items():
        assert cases >= 30 and agree == cases, feature
        assert f"feature:{feature} (cases)" in rep.render()


PROFILES: dict[EmulatedVersion, SchedulerConfig] = {
    rec.version: profiles_config(rec.profiles_yaml, rec.version)
    for rec in RECORDINGS if rec.profiles_yaml.exists()
}


@pytest.mark.parametrize(("rec", "case"), PROFILE_CASES, ids=_ids(PROFILE_CASES))
def test_four_profile_case_agrees_with_kube(rec: Recording, case: dict[str, Any]) -> None:
    r = run_case(case, PROFILES[rec.version])
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


@pytest.mark.parametrize(("rec", "case"), PREEMPTION_CASES, ids=_ids(PREEMPTION_CASES))
def test_preemption_case_agrees_with_kube(rec: Recording, case: dict[str, Any]) -> None:
    """Every candidate node with its victims (kube's order) and PDB violations, the
    nominated node, its victims and the message with kube's `preemption: ...` suffix."""
    r = run_preemption_case(case, rec.version)
    assert not r.mismatches, _explain(r)
    if "preemption" in case["expected"]:
        assert r.checks["fitErrorWithPreemption"] == 1


def _per_recording(items: list[Item], step: int, n: int) -> list[Item]:
    return [x for rec in RECORDINGS
            for x in itertools.islice([i for i in items if i[0] is rec][::step], n)]


SAMPLE = [*_per_recording(CASES, 14, 30), *_per_recording(REAL_PODS, 22, 15)]


def _no_preemption(version: EmulatedVersion) -> SchedulerConfig:
    """cases.jsonl.gz was recorded without PostFilter: a profile without DefaultPreemption."""
    return parse_config(
        {"profiles": [{"plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}}]},
        emulated_version=version,
    )


@pytest.mark.parametrize(("rec", "case"), SAMPLE, ids=_ids(SAMPLE))
def test_case_agrees_through_a_real_grpc_server(
    rec: Recording, case: dict[str, Any], make_server: ServerFactory
) -> None:
    stub = make_server(_no_preemption(rec.version), seed=1)[1]
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


PREEMPTION_SAMPLE = _per_recording(
    [i for i in PREEMPTION_CASES if i[1]["expected"].get("preemption")], 8, 1000
)


@pytest.mark.parametrize(("rec", "case"), PREEMPTION_SAMPLE, ids=_ids(PREEMPTION_SAMPLE))
def test_preemption_case_agrees_through_a_real_grpc_server(
    rec: Recording, case: dict[str, Any], make_server: ServerFactory
) -> None:
    """The contract end to end: PDBs and pod fields in, nomination and victims out."""
    from schedsvc_client.kube import load_cluster

    stub = make_server(parse_config({}, emulated_version=rec.version), seed=1)[1]
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
