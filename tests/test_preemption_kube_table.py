"""kube's own DefaultPreemption table tests (default_preemption_test.go: TestPostFilter,
TestDryRunPreemption, TestSelectBestCandidate, TestPodEligibleToPreemptOthers, TestPreempt),
transcribed to Kubernetes JSON in tests/data/kube_preemption_table.json.

Each case's expectations are kube's: the nominated node, every candidate with its victims and
PDB violations, the eligibility and the message. Where kube's test hands PostFilter the
filter statuses directly (`filteredNodesStatuses`), the same statuses are handed to our
evaluator; where it dry-runs every node (TestDryRunPreemption, TestSelectBestCandidate), every
node is handed as Unschedulable. The victims on each node are our own filters' answer. Rows
that need test plugins, extenders or non-default sampling args with kube's seeded offset are
listed in the file's `excluded`.

The table is v1.35's; it runs under both releases: v1.37.2 differs only in the message of a
nomination, "preemption: found a potential placement for pod on node N, preempting K victims"
(v1.37.2's default_preemption_test.go TestPostFilter expects exactly that), where v1.35 had none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from schedsvc.config import default_config
from schedsvc.engine.filtering import Diagnosis
from schedsvc.engine.preemption import PreemptionResult, preempt
from schedsvc.engine.runtime import Rejection
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.framework import Code
from schedsvc.framework.feature import EmulatedVersion
from schedsvc.framework.podinfo import pod_info
from schedsvc.server.convert import Converter
from schedsvc_client.kube import load_cluster, pod_from_kube

CONVERTER = Converter()  # one server's conversion and caches

DATA = json.loads(
    (Path(__file__).parent / "data" / "kube_preemption_table.json").read_text(encoding="utf-8")
)
CASES: list[dict[str, Any]] = DATA["cases"]


def _run(case: dict[str, Any], version: EmulatedVersion) -> PreemptionResult:
    engine = Engine(default_config(version), seed=1, batching_enabled=False)
    try:
        listing = {"kind": "List", "items": [
            *({"kind": "Node", **n} for n in case["nodes"]),
            *({"kind": "Pod", **p} for p in case["pods"]),
            *case.get("objects", []),
        ]}
        kc = load_cluster(json.dumps(listing))
        cluster = engine.cluster("t")
        cluster.update(SnapshotUpdate(
            replace=True,
            upsert_nodes=[CONVERTER.node_from_pb(n, "n") for n in kc.nodes],
            upsert_pods=[CONVERTER.pod_from_pb(p, "p") for p in kc.pods],
            upsert_pod_disruption_budgets=[
                CONVERTER.pdb_from_pb(b, "b") for b in kc.pod_disruption_budgets
            ],
        ))
        snap = cluster.snapshot
        pod = CONVERTER.pod_from_pb(pod_from_kube(case["pod"]), "pod")
        fw = engine.frameworks[pod.scheduler_name]
        info = pod_info(pod)
        cs = fw.run_pre_filter(info, snap)
        # kube's TestPostFilter/TestPreempt hand PostFilter these statuses (a node absent is
        # Unresolvable); TestDryRunPreemption/TestSelectBestCandidate dry-run every node
        statuses = case.get("filteredNodesStatuses")
        if statuses is None:
            statuses = {n: "Unschedulable" for n in snap.index}
        rows = np.array(
            [snap.index[n] for n, code in statuses.items() if code == "Unschedulable"],
            dtype=np.intp,
        )
        diag = Diagnosis(rejections=[
            Rejection("Test", rows, [("test", rows)], Code.UNSCHEDULABLE)
        ])
        args = fw.profile.preemption
        assert args is not None
        return preempt(snap, fw, cs, info, diag, args, None, None, all_candidates=True)
    finally:
        engine.close()


@pytest.mark.parametrize("version", list(EmulatedVersion), ids=lambda v: f"v{v.value}")
@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c['source'].split()[-1]}: {c['name']}" for c in CASES]
)
def test_kube_table_case(case: dict[str, Any], version: EmulatedVersion) -> None:
    got = _run(case, version)
    exp = case["expected"]
    if "eligible" in exp:
        assert got.eligible == exp["eligible"]
    if "message" in exp:
        want = exp["message"]
        if want and not want.startswith("preemption: "):
            want = "preemption: " + want  # kube's Evaluator.Preempt, called directly
        if not want and got.nominated_node and version is EmulatedVersion.V1_37:
            want = (f"preemption: found a potential placement for pod on node "
                    f"{got.nominated_node}, preempting {len(got.victims)} victims")
        assert got.message == want
    if "nominatedNodeName" in exp:
        assert got.nominated_node == exp["nominatedNodeName"]
    if "nominatedNodeIn" in exp:
        assert got.nominated_node in exp["nominatedNodeIn"]
    if "candidates" in exp:
        ours = {c.node_name: c for c in got.candidates}
        assert set(ours) == set(exp["candidates"])
        for name, want_c in exp["candidates"].items():
            uids = [v.uid for v in ours[name].victims]
            if exp.get("victimOrder") == "kube":
                assert uids == want_c["victims"]
            else:
                assert sorted(uids) == sorted(want_c["victims"])
            assert ours[name].num_pdb_violations == want_c["numPDBViolations"]
    if "deletedVictims" in exp:
        assert sorted(v.uid for v in got.victims) == sorted(exp["deletedVictims"])


def test_the_transcription_is_whole() -> None:
    assert len(CASES) == 39
    assert {c["source"].split()[-1] for c in CASES} == {
        "TestPostFilter", "TestDryRunPreemption", "TestSelectBestCandidate",
        "TestPodEligibleToPreemptOthers", "TestPreempt",
    }
