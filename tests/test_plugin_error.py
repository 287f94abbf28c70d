"""A plugin's Error status, end to end, as kube's framework runtime and schedulingCycle treat it:
the cycle ends with the error wrapped as RunFilterPlugins / RunPreFilterPlugins wrap it (the
first erroring node in visiting order), no FitError, no PostFilter; Explain shows the erroring
nodes with code Error and kube's error as their reason.

Expected messages are kube's: csi-translation-lib's texts, binder.go's "could not translate pv",
framework.go's wrappers (v1.37.2).
"""

from __future__ import annotations

import dataclasses

import pytest

from schedsvc.engine.scheduler import Cluster, SnapshotUpdate
from schedsvc.model import Node, Outcome, Pod
from schedsvc.model_storage import ANN_MIGRATED_PLUGINS, IMMEDIATE, CSINode, StorageClass
from schedsvc.model_volume import AzureDisk, GCEPersistentDisk
from tests.builders import cluster_of
from tests.builders.pv_claims import make_class, make_pvc, make_storage_node, pod_with_claims
from tests.builders.volume_plugins import disk_pv, disk_volume, pod_with_volumes

SHARED_MSG = (
    'running "NodeVolumeLimits" filter plugin: converting volume(v0) from inline to csi: '
    "kind(Shared) is not supported in csi migration"
)
GCE_MSG = (
    'running "VolumeBinding" filter plugin: could not translate pv: failed to get region from '
    "zones: zone in unexpected format, expected: {locale}-{region}-{zone}, got: zone-a"
)


def _cluster(csi_nodes: list[str], n: int = 3, **config: object) -> Cluster:
    """Nodes n0..n{n-1}; those in `csi_nodes` have a CSINode migrating GCE PD."""
    c = cluster_of([make_storage_node(f"n{i}") for i in range(n)], **config)
    st = c.snapshot.storage
    for name in csi_nodes:
        st.csi_nodes[name] = CSINode(
            name=name, annotations={ANN_MIGRATED_PLUGINS: "kubernetes.io/gce-pd"}
        )
    st.generation += 1
    return c


def _shared_disk_pod(name: str = "p", priority: int = 0) -> Pod:
    vol = disk_volume("v0", azure_disk=AzureDisk("d", "uri", kind="Shared"))
    return pod_with_volumes(name, vol, priority=priority)


def _regional_pv_pod(c: Cluster) -> Pod:
    """A pod whose claim is bound to a GCE PD PV with two zones that name no region."""
    st = c.snapshot.storage
    pv = disk_pv("pv-gce", {"topology.kubernetes.io/zone": "zone-a__zone-b"},
                 gce_persistent_disk=GCEPersistentDisk("pd"))
    st.pvs[pv.name] = pv
    pvc = make_pvc("c0", "", bound_to="pv-gce")
    st.pvcs[pvc.key] = pvc
    st.generation += 1
    return pod_with_claims("p", "c0")


@pytest.mark.parametrize(
    ("name", "csi_nodes", "want_error", "erring"),
    [
        ("every node errs", ["n0", "n1", "n2"], True, ["n0", "n1", "n2"]),
        ("one node errs, others feasible: still the error", ["n1"], True, ["n1"]),
        ("no CSINode, no migration, no error", [], False, []),
    ],
)
def test_node_volume_limits_translation_error(
    name: str, csi_nodes: list[str], want_error: bool, erring: list[str]
) -> None:
    c = _cluster(csi_nodes)
    ex = c.explain(_shared_disk_pod())
    assert [n.name for n in ex.nodes if n.code == "Error"] == erring
    for n in ex.nodes:
        if n.code == "Error":
            assert (n.feasible, n.plugin, n.reasons) == (False, "NodeVolumeLimits", (SHARED_MSG,))
    (p,), _ = c.schedule([_shared_disk_pod()])
    if want_error:
        assert (p.outcome, p.node_name, p.message) == (Outcome.UNSCHEDULABLE, "", SHARED_MSG)
        assert ex.message == SHARED_MSG and ex.chosen_node == ""
        assert p.reasons == {}  # no FitError histogram
    else:
        assert p.outcome is Outcome.SCHEDULED and ex.message == ""


def test_error_is_the_first_erroring_node_in_visiting_order() -> None:
    # n0 does not migrate GCE PD: its PV is not translated there and the node is feasible
    c = _cluster(["n1", "n2"])
    pod = _regional_pv_pod(c)
    ex = c.explain(pod)
    assert [(n.name, n.code) for n in ex.nodes] == [("n0", ""), ("n1", "Error"), ("n2", "Error")]
    assert ex.nodes[0].feasible and ex.nodes[0].scores == {}  # the cycle scores nothing
    assert ex.message == GCE_MSG
    (p,), _ = c.schedule([pod])
    assert (p.outcome, p.message) == (Outcome.UNSCHEDULABLE, GCE_MSG)


def test_error_runs_no_preemption() -> None:
    """n0 is full of a lower-priority pod (Insufficient cpu, no CSINode: preempting there
    would fit the pod); n1 errs. The cycle ends with the Error: no PostFilter, no nomination."""
    c = _cluster(["n1"], n=2)
    filler = Pod(uid="low", name="low", namespace="default", requests={"cpu": 4000},
                 priority=0, node_name="n0")
    c.update(SnapshotUpdate(upsert_pods=[filler]))
    pod = dataclasses.replace(_shared_disk_pod(priority=100), requests={"cpu": 1000})
    (p,), _ = c.schedule([pod])
    assert (p.outcome, p.message) == (Outcome.UNSCHEDULABLE, SHARED_MSG)
    assert (p.nominated_node_name, p.victims) == ("", ())
    assert p.pod_uid not in c.snapshot.nominated
    ex = c.explain(pod)
    assert (ex.message, ex.candidates, ex.nominated_node) == (SHARED_MSG, (), "")


def test_failed_cycle_leaves_the_next_pod_alone() -> None:
    c = _cluster(["n0", "n1", "n2"], batching=True)
    ok = Pod(uid="ok", name="ok", namespace="default")
    out, _ = c.schedule([_shared_disk_pod("a"), ok, _shared_disk_pod("b")])
    assert [p.outcome for p in out] == [
        Outcome.UNSCHEDULABLE, Outcome.SCHEDULED, Outcome.UNSCHEDULABLE,
    ]
    assert out[0].message == out[2].message == SHARED_MSG
    assert out[0].pod_uid not in c.snapshot.pods and out[2].pod_uid not in c.snapshot.pods


def test_prefilter_error_volume_binding_mode_not_set() -> None:
    """A StorageClass with no volumeBindingMode (kube's nil): VolumeBinding's PreFilter Error."""
    c = _cluster([])
    st = c.snapshot.storage
    st.classes["nil"] = StorageClass(name="nil", volume_binding_mode="")
    st.classes["imm"] = make_class("imm", IMMEDIATE)
    pvc = make_pvc("c0", "nil", 1)
    st.pvcs[pvc.key] = pvc
    st.generation += 1
    want = ('running PreFilter plugin "VolumeBinding": '
            'VolumeBindingMode not set for StorageClass "nil"')
    (p,), _ = c.schedule([pod_with_claims("p", "c0")])
    assert (p.outcome, p.message) == (Outcome.UNSCHEDULABLE, want)
    ex = c.explain(pod_with_claims("p", "c0"))
    assert ex.message == want
    verdicts = {(n.plugin, n.code, n.reasons) for n in ex.nodes}
    assert verdicts == {("VolumeBinding", "Error", (want,))}


def test_node_without_error_not_affected_by_code_field() -> None:
    """A plain rejection keeps code "" in Explain (Error is the only code it names)."""
    c = cluster_of([Node(name="n0", allocatable={"cpu": 100, "pods": 110})])
    ex = c.explain(Pod(uid="big", name="big", namespace="default", requests={"cpu": 1000}))
    assert [(n.feasible, n.code) for n in ex.nodes] == [(False, "")]
    assert ex.message.startswith("0/1 nodes are available")
