"""VolumeBinding's Reserve and the assume cache: kube v1.37.2's TestAssumePodVolumes,
TestRevertAssumedPodVolumes and TestFindAssumeVolumes (binder_test.go) at the plugin, then the
engine: a placed pod's Placement.volume_bindings, the next pod of the request finding the PV
taken, dry runs and Explain assuming nothing, a removed pod's assumption undone, the client's
object replacing an assumed one."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.framework import PreFilterResult
from schedsvc.framework.podinfo import pod_info
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Outcome
from schedsvc.model_storage import (
    ANN_SELECTED_NODE,
    NO_PROVISIONER,
    ClaimRef,
    VolumeBindingResult,
)
from schedsvc.plugins import volume_binding as vb
from schedsvc.plugins.volume_binding import find_pod_volumes
from schedsvc.plugins.volume_binding.assume import ANN_BOUND_BY_CONTROLLER
from tests.builders import cluster_of
from tests.builders.pv_claims import (
    NODE_KEY,
    G,
    Gi,
    affinity,
    make_class,
    make_pv,
    make_pvc,
    make_storage_node,
    pod_with_claims,
    storage_snapshot,
)

NS = "testns"
CLASSES = (
    make_class("waitClass", provisioner=NO_PROVISIONER),
    make_class("waitClassWithProvisioner", provisioner="test-provisioner"),
)
unbound = make_pvc("unbound-pvc", "waitClass", G, namespace=NS, uid="pvc-uid")
unbound2 = make_pvc("unbound-pvc2", "waitClass", 5 * G, namespace=NS, uid="pvc-uid")
bound = make_pvc("bound-pvc", "waitClass", G, namespace=NS, uid="pvc-uid", bound_to="pv-bound")
provisioned = make_pvc("provisioned-pvc", "waitClassWithProvisioner", Gi, namespace=NS,
                       uid="pvc-uid")
pv_node1a = make_pv("pv-node1a", "waitClass", 5 * G, node="node1")
pv_node1b = make_pv("pv-node1b", "waitClass", 10 * G, node="node1")
pv_node1c = make_pv("pv-node1b", "waitClass", 5 * G, node="node1")  # kube names it node1b too
pv_node2 = make_pv("pv-node2", "waitClass", G, node="node2")
pv_bound = make_pv("pv-bound", "waitClass", G, node="node1", claim=bound)
pv_node1a_bound = make_pv("pv-node1a", "waitClass", 5 * G, node="node1", claim=unbound)


def _snap(pvcs: Any, pvs: Any) -> Snapshot:
    return storage_snapshot([make_storage_node("node1", **{NODE_KEY: "node1"})], pvs=pvs,
                            pvcs=pvcs, classes=CLASSES)


def _reserve(snap: Snapshot, *claims: Any) -> None:
    pod = pod_with_claims("test-pod", *(c.name for c in claims), namespace=NS)
    vb.new(None).reserve(pod_info(pod), snap, 0)


# scenario -> (claims, PVs, the PVs assumed with claimRef to claim, the claims assumed)
ASSUME: dict[str, tuple[list[Any], list[Any], dict[str, str], list[str]]] = {
    "all-bound": ([bound], [pv_bound], {}, []),
    "one-binding": ([unbound], [pv_node1a], {"pv-node1a": "unbound-pvc"}, []),
    "two-bindings": ([unbound, unbound2], [pv_node1a, pv_node1b],
                     {"pv-node1a": "unbound-pvc", "pv-node1b": "unbound-pvc2"}, []),
    "pv-already-bound": ([unbound], [pv_node1a_bound], {}, []),
    "one-binding, one-pvc-provisioned": ([unbound, provisioned], [pv_node1a],
                                         {"pv-node1a": "unbound-pvc"}, ["provisioned-pvc"]),
}


@pytest.mark.parametrize("name", list(ASSUME))
def test_assume_pod_volumes(name: str) -> None:
    claims, pvs, want_pvs, want_claims = ASSUME[name]
    snap = _snap(claims, pvs)
    before_pvs, before_pvcs = dict(snap.storage.pvs), dict(snap.storage.pvcs)
    _reserve(snap, *claims)
    st = snap.storage
    changed = {n: pv for n, pv in st.pvs.items() if pv is not before_pvs[n]}
    assert {n: pv.claim_ref.name for n, pv in changed.items() if pv.claim_ref} == want_pvs
    for pv in changed.values():
        assert pv.claim_ref == ClaimRef(NS, want_pvs[pv.name], "pvc-uid")
        assert pv.annotations[ANN_BOUND_BY_CONTROLLER] == "yes"
        assert pv.phase == "Available"  # assuming binds nothing
    selected = {k.split("/")[1]: c.annotations.get(ANN_SELECTED_NODE)
                for k, c in st.pvcs.items() if c is not before_pvcs[k]}
    assert selected == {c: "node1" for c in want_claims}
    assert all(not c.volume_name or c.fully_bound() for c in st.pvcs.values())


def test_revert_assumed_pod_volumes() -> None:
    """After assume, the pod going away restores both caches to the API objects."""
    snap = _snap([unbound, provisioned], [pv_node1a])
    before_pvs, before_pvcs = dict(snap.storage.pvs), dict(snap.storage.pvcs)
    _reserve(snap, unbound, provisioned)
    assert snap.storage.pvs != before_pvs and snap.storage.pvcs != before_pvcs
    snap.storage.restore("test-pod")
    assert snap.storage.pvs == before_pvs and snap.storage.pvcs == before_pvcs
    assert snap.storage.bindings("test-pod") == ()


def test_find_assume_volumes() -> None:
    """unboundPVC with pvNode2, pvNode1a and pvNode1c (5G each on node1: kube's pick between
    them is random, ours the name order): once assumed, the same PV is found again 50 times,
    through the pre-bound path."""
    snap = _snap([unbound], [pv_node2, pv_node1a, pv_node1c])
    pod = pod_info(pod_with_claims("test-pod", "unbound-pvc", namespace=NS))
    pl, rows = vb.new(None), np.array([0], dtype=np.intp)

    def chosen() -> list[str]:
        pre = pl.pre_filter(pod, snap)
        assert isinstance(pre, PreFilterResult)
        return [pv.name for _, pv in find_pod_volumes(pre.state, snap, rows).static_bindings(0)]

    first = chosen()
    assert first == ["pv-node1a"]
    pl.reserve(pod, snap, 0)
    assert snap.storage.pvs["pv-node1a"].claim_ref is not None
    for _ in range(50):
        assert chosen() == first


# ---- the engine ----------------------------------------------------------------------------
def _cluster(pvcs: Any, pvs: Any, nodes: tuple[str, ...] = ("node-a", "node-b")) -> Any:
    c = cluster_of([make_storage_node(n) for n in nodes])
    st = c.snapshot.storage
    st.classes.update((s.name, s) for s in (make_class("local"), make_class(
        "dyn", provisioner="csi.example.com")))
    st.pvs.update((p.name, p) for p in pvs)
    st.pvcs.update((p.key, p) for p in pvcs)
    return c


def _host_pv(name: str, host: str, size: int = 10 * Gi) -> Any:
    return make_pv(name, "local", size, node_affinity=affinity({"kubernetes.io/hostname": [host]}))


def test_the_next_pod_of_a_request_cannot_take_the_pv_an_earlier_one_took() -> None:
    c = _cluster([make_pvc(f"data-{i}", "local", Gi) for i in range(3)],
                 [_host_pv("pv-a", "node-a"), _host_pv("pv-b", "node-b")])
    out, _ = c.schedule([pod_with_claims(f"web-{i}", f"data-{i}") for i in range(3)])
    assert [p.outcome for p in out] == [Outcome.SCHEDULED, Outcome.SCHEDULED,
                                        Outcome.UNSCHEDULABLE]
    taken = {p.volume_bindings[0].volume_name: p.node_name for p in out[:2]}
    assert taken == {"pv-a": "node-a", "pv-b": "node-b"}
    assert out[0].volume_bindings == (
        VolumeBindingResult("default/data-0", volume_name=out[0].volume_bindings[0].volume_name),
    )
    assert vb.ERR_BIND_CONFLICT in out[2].message
    assert not out[2].victims  # UnschedulableAndUnresolvable: no preemption


def test_a_provisioned_claim_reports_its_selected_node() -> None:
    c = _cluster([make_pvc("scratch", "dyn", Gi)], [])
    (p,), _ = c.schedule([pod_with_claims("web", "scratch")])
    assert p.volume_bindings == (
        VolumeBindingResult("default/scratch", provisioned=True, selected_node=p.node_name),
    )
    assert c.snapshot.storage.pvcs["default/scratch"].annotations[ANN_SELECTED_NODE] == p.node_name


def test_dry_runs_and_explain_assume_nothing() -> None:
    c = _cluster([make_pvc("data", "local", Gi)], [_host_pv("pv-a", "node-a")])
    before = dict(c.snapshot.storage.pvs)
    (p,), _ = c.schedule([pod_with_claims("web", "data")], dry_run=True)
    assert p.node_name == "node-a" and p.volume_bindings == ()
    ex = c.explain(pod_with_claims("web", "data"))
    assert {n.name: n.reasons for n in ex.nodes} == {
        "node-a": (), "node-b": (vb.ERR_BIND_CONFLICT,),
    }
    assert {n.name: n.plugin for n in ex.nodes if not n.feasible} == {"node-b": "VolumeBinding"}
    assert c.snapshot.storage.pvs == before and c.snapshot.storage.assumed == {}


def test_removing_a_placed_pod_before_it_is_bound_frees_its_pv() -> None:
    c = _cluster([make_pvc("data", "local", Gi), make_pvc("other", "local", Gi)],
                 [_host_pv("pv-a", "node-a")])
    (p,), _ = c.schedule([pod_with_claims("web", "data")])
    assert p.volume_bindings[0].volume_name == "pv-a"
    (q,), _ = c.schedule([pod_with_claims("web-2", "other")])
    assert q.outcome is Outcome.UNSCHEDULABLE
    c.update(SnapshotUpdate(remove_pods=["web"]))
    assert c.snapshot.storage.pvs["pv-a"].claim_ref is None
    (q,), _ = c.schedule([pod_with_claims("web-3", "other")])
    assert q.node_name == "node-a" and q.volume_bindings[0].volume_name == "pv-a"


def test_a_bound_pod_keeps_its_assumption_and_the_clients_object_wins() -> None:
    c = _cluster([make_pvc("data", "local", Gi)], [_host_pv("pv-a", "node-a")])
    (p,), _ = c.schedule([pod_with_claims("web", "data")])
    bound_pod = pod_with_claims("web", "data")
    c.update(SnapshotUpdate(upsert_pods=[dataclasses.replace(bound_pod, node_name="node-a")]))
    assert c.snapshot.storage.assumed == {}
    assert c.snapshot.storage.pvs["pv-a"].claim_ref is not None  # still taken
    fresh = _host_pv("pv-a", "node-a")  # the client's PV replaces the assumed copy
    c.snapshot.storage.pvs["pv-a"] = fresh
    c.update(SnapshotUpdate(remove_pods=["web"]))
    assert c.snapshot.storage.pvs["pv-a"] is fresh


def test_removing_the_node_of_a_placed_pod_frees_its_pv() -> None:
    c = _cluster([make_pvc("data", "local", Gi)], [make_pv("pv-any", "local", 10 * Gi)])
    (p,), _ = c.schedule([pod_with_claims("web", "data")])
    assert p.volume_bindings[0].volume_name == "pv-any"
    c.update(SnapshotUpdate(remove_nodes=[p.node_name]))
    assert c.snapshot.storage.pvs["pv-any"].claim_ref is None
    assert c.snapshot.storage.assumed == {}
