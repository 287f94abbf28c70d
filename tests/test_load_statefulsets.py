"""`schedsvc-load statefulsets --size small` end to end against an in-process server (issue 26):
the load client sends the storage objects (CSINodes, the class, the driver, the PVs) and each
pod's claim before the pod, every pod is placed, and every StatefulSet claim gets a binding
(Placement.volume_bindings, counted as ClaimsBound), some to the pre-provisioned PVs."""

from __future__ import annotations

import json
from typing import Any

from schedsvc_client.load import main
from schedsvc_client.workload import CreateStatefulSets, CreateStorage, load_workload


def test_statefulsets_small_places_every_pod_and_binds_every_claim(
    make_server: Any, tmp_path: Any, capsys: Any
) -> None:
    server, _ = make_server(seed=1)
    out = tmp_path / "result.json"
    assert main(["statefulsets", "--size", "small", "--target", f"127.0.0.1:{server.port}",
                 "--json", str(out), "--no-progress"]) == 0
    assert "claims bound (volume_bindings)" in capsys.readouterr().out
    pods = next(i["data"] for i in json.loads(out.read_text())["dataItems"]
                if i["labels"]["Metric"] == "pods")
    w = load_workload("statefulsets", "small")
    assert pods["Decided"] == pods["Scheduled"] == w.measured_pods == 1000
    assert pods["ClaimsBound"] == 1000  # one claim per StatefulSet pod, each bound at Reserve

    c = server.engine.cluster("load-0")
    with c.lock:
        st = c.snapshot.storage
        assert len(c.snapshot.pods) == w.pods  # plain and StatefulSet pods, all placed
        results = [r for a in st.assumed.values() for r in a.results]
        static = {r.volume_name for r in results if not r.provisioned}
        assert len(st.csi_nodes) == w.nodes and "ebs-wffc" in st.classes
        claims = {r.claim for r in results}
    assert claims == {f"default/data-ss-{i % 10}-{i // 10}" for i in range(1000)}
    assert static and static <= {f"pv-{i}" for i in range(100)}  # the PVs matched some claims


def test_statefulset_pods_name_their_own_claims_and_csinodes_cover_every_node() -> None:
    w = load_workload("statefulsets", "small", {"nodes": "6", "pods": "4", "sets": "2",
                                                "pvs": "3", "initPods": "0"})
    storage = next(op for op in w.ops if isinstance(op, CreateStorage))
    sets = next(op for op in w.ops if isinstance(op, CreateStatefulSets))
    assert [n.name for n in storage.csi_nodes()] == [f"node-{i}" for i in range(6)]
    assert all(n.drivers[0].allocatable.count == 25 for n in storage.csi_nodes())
    pvs = storage.objects().upsert_persistent_volumes
    assert [pv.node_affinity.required.node_selector_terms[0].match_expressions[0].values[0]
            for pv in pvs] == ["node-0", "node-2", "node-4"]
    pods = list(sets.pods(3))
    assert [p.name for p in pods] == ["ss-0-0", "ss-1-0", "ss-0-1", "ss-1-1"]
    assert [p.volumes[0].persistent_volume_claim.claim_name for p in pods] == [
        f"data-{p.name}" for p in pods]
    assert [c.name for c in sets.claims()] == [f"data-{p.name}" for p in pods]
    assert all(not c.volume_name and c.storage_class_name == "ebs-wffc" for c in sets.claims())
    assert pods[1].default_selector.match_labels == {"app": "ss-1"}
