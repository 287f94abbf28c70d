"""VolumeBinding's binder, after kube v1.37.2's binder_test.go: FindPodVolumes without and with
provisioning (each with no CSIDriver and with the provisioner's driver tracking capacity or
not), the capacity checks, and the CSI-migration cases we do not translate. Each scenario is
named as kube names it. "error" is kube's findPodVolumes failing, for the plugin PreFilter's
UnschedulableAndUnresolvable verdict."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from schedsvc.framework import SKIP, PreFilterResult
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Pod, frozen_map
from schedsvc.model_storage import ANN_SELECTED_NODE, IMMEDIATE, NO_PROVISIONER, CSINode
from schedsvc.model_volume import Volume
from schedsvc.plugins import volume_binding as vb
from schedsvc.plugins.volume_binding import find_pod_volumes
from tests.builders.pv_claims import (
    NODE_KEY,
    G,
    Gi,
    driver,
    make_capacity,
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
    make_class("immediateClass", IMMEDIATE),
    make_class("waitClassWithProvisioner", provisioner="test-provisioner",
               topologies=[{NODE_KEY: ["node1", "reference-value"]}]),
    make_class("topoMismatchClass", provisioner="test-provisioner",
               topologies=[{NODE_KEY: ["reference-value"]}]),
)


def _pvc(name: str, size: int, cls: str, **kw: Any) -> Any:
    return make_pvc(name, cls, size, namespace=NS, uid="pvc-uid", **kw)


unbound = _pvc("unbound-pvc", G, "waitClass")
unbound2 = _pvc("unbound-pvc2", 5 * G, "waitClass")
prebound = _pvc("prebound-pvc", G, "waitClass", volume_name="pv-node1a")
bound = _pvc("bound-pvc", G, "waitClass", bound_to="pv-bound")
immediate_unbound = _pvc("immediate-unbound-pvc", G, "immediateClass")
immediate_bound = _pvc("immediate-bound-pvc", G, "immediateClass", bound_to="pv-bound-immediate")
provisioned = _pvc("provisioned-pvc", Gi, "waitClassWithProvisioner")
no_provisioner = _pvc("no-provisioner-pvc", Gi, "waitClass")
topo_mismatch = _pvc("topo-mismatch-pvc", Gi, "topoMismatchClass")
selected_node = _pvc("provisioned-pvc", Gi, "waitClassWithProvisioner",
                     annotations={ANN_SELECTED_NODE: "node1"})

pv_node1a = make_pv("pv-node1a", "waitClass", 5 * G, node="node1")
pv_node1b = make_pv("pv-node1b", "waitClass", 10 * G, node="node1")
pv_node2 = make_pv("pv-node2", "waitClass", G, node="node2")
pv_bound = make_pv("pv-bound", "waitClass", G, node="node1", claim=bound)
pv_node1a_bound = make_pv("pv-node1a", "waitClass", 5 * G, node="node1", claim=unbound)
pv_bound_immediate = make_pv("pv-bound-immediate", "immediateClass", G, node="node1",
                             claim=immediate_bound)
pv_bound_immediate_node2 = make_pv("pv-bound-immediate", "immediateClass", G, node="node2",
                                   claim=immediate_bound)

BIND, NODE = vb.ERR_BIND_CONFLICT, vb.ERR_NODE_CONFLICT
SPACE, PV_NOT_EXIST = vb.ERR_NOT_ENOUGH_SPACE, vb.ERR_PV_NOT_EXIST
ERROR = "error"
DRIVERS = {
    "no CSIDriver": (),
    "CSIDriver with StorageCapacity": (driver("test-provisioner", True),),
    "CSIDriver without StorageCapacity": (driver("test-provisioner", False),),
}


def _pod(*claims: Any, ephemeral: bool = False) -> Pod:
    if ephemeral:
        vol = Volume(name="test-volume", kind="ephemeral", ephemeral_template=b"{}")
        return Pod(uid="test-pod-uid", name="test-pod", namespace=NS, volumes=(vol,))
    return pod_with_claims("test-pod", *(c.name for c in claims), namespace=NS)


def find(pod: Pod, pvcs: Any, pvs: Any, drivers: Any = (), capacities: Any = (),
         node: Any = None) -> Any:
    """("error", reason) when PreFilter fails, else (bindings, provisions, reasons) on node1."""
    node = node if node is not None else make_storage_node("node1", **{NODE_KEY: "node1"})
    snap = storage_snapshot([node], pvs=pvs, pvcs=pvcs, classes=CLASSES, drivers=drivers,
                            capacities=capacities)
    pl, info = vb.new(None), pod_info(pod)
    pre = pl.pre_filter(info, snap)
    if pre is SKIP:
        return {}, [], []
    assert isinstance(pre, PreFilterResult)
    if pre.reject:
        return ERROR
    found = find_pod_volumes(pre.state, snap, np.array([0], dtype=np.intp))
    bindings = {c.name: p.name for c, p in found.static_bindings(0)}
    provisions = [c.name for c, _ in found.dynamic_provisions(0)]
    reasons = [r for r, m in found.reasons() if m[0]]
    return bindings, provisions, reasons


WITHOUT_PROVISIONING: dict[str, tuple[Pod, list[Any], list[Any], Any]] = {
    "no-volumes": (Pod(uid="p", name="p", namespace=NS), [], [], ({}, [], [])),
    "no-pvcs": (pod_with_claims("p", namespace=NS, other=["emptyDir"]), [], [], ({}, [], [])),
    "pvc-not-found": (_pod(bound), [], [pv_bound], ERROR),
    "bound-pvc": (_pod(bound), [bound], [pv_bound], ({}, [], [])),
    "bound-pvc,pv-not-exists": (_pod(bound), [bound], [], ({}, [], [PV_NOT_EXIST])),
    "prebound-pvc": (_pod(prebound), [prebound], [pv_node1a_bound], ERROR),
    "unbound-pvc,pv-same-node": (_pod(unbound), [unbound], [pv_node2, pv_node1a, pv_node1b],
                                 ({"unbound-pvc": "pv-node1a"}, [], [])),
    "unbound-pvc,pv-different-node": (_pod(unbound), [unbound], [pv_node2], ({}, [], [BIND])),
    "two-unbound-pvcs": (_pod(unbound, unbound2), [unbound, unbound2], [pv_node1a, pv_node1b],
                         ({"unbound-pvc": "pv-node1a", "unbound-pvc2": "pv-node1b"}, [], [])),
    "two-unbound-pvcs,order-by-size": (
        _pod(unbound2, unbound), [unbound, unbound2], [pv_node1a, pv_node1b],
        ({"unbound-pvc": "pv-node1a", "unbound-pvc2": "pv-node1b"}, [], [])),
    "two-unbound-pvcs,partial-match": (_pod(unbound, unbound2), [unbound, unbound2],
                                       [pv_node1a], ({"unbound-pvc": "pv-node1a"}, [], [BIND])),
    "one-bound,one-unbound": (_pod(unbound, bound), [unbound, bound], [pv_bound, pv_node1a],
                              ({"unbound-pvc": "pv-node1a"}, [], [])),
    "one-bound,one-unbound,no-match": (_pod(unbound, bound), [unbound, bound],
                                       [pv_bound, pv_node2], ({}, [], [BIND])),
    "one-prebound,one-unbound": (_pod(unbound, prebound), [unbound, prebound],
                                 [pv_node1a, pv_node1b], ERROR),
    "immediate-bound-pvc": (_pod(immediate_bound), [immediate_bound], [pv_bound_immediate],
                            ({}, [], [])),
    "immediate-bound-pvc-wrong-node": (_pod(immediate_bound), [immediate_bound],
                                       [pv_bound_immediate_node2], ({}, [], [NODE])),
    "immediate-unbound-pvc": (_pod(immediate_unbound), [immediate_unbound], [], ERROR),
    "immediate-unbound-pvc,delayed-mode-bound": (
        _pod(immediate_unbound, bound), [immediate_unbound, bound], [pv_bound], ERROR),
    "immediate-unbound-pvc,delayed-mode-unbound": (
        _pod(immediate_unbound, unbound), [immediate_unbound, unbound], [], ERROR),
    "generic-ephemeral,no-pvc": (_pod(ephemeral=True), [], [], ERROR),
    "generic-ephemeral,with-pvc": (
        _pod(ephemeral=True),
        [_pvc("test-pod-test-volume", G, "waitClass", bound_to="pv-bound",
              controller_uid="test-pod-uid")],
        [pv_bound], ({}, [], [])),
    "generic-ephemeral,wrong-pvc": (
        _pod(ephemeral=True),
        [_pvc("test-pod-test-volume", G, "waitClass", bound_to="pv-bound")], [pv_bound], ERROR),
}


@pytest.mark.parametrize("variant", list(DRIVERS))
@pytest.mark.parametrize("name", list(WITHOUT_PROVISIONING))
def test_find_pod_volumes_without_provisioning(name: str, variant: str) -> None:
    pod, pvcs, pvs, want = WITHOUT_PROVISIONING[name]
    assert find(pod, pvcs, pvs, DRIVERS[variant]) == want


# scenario -> (claims, PVs, (bindings, provisions, reasons), needs capacity)
WITH_PROVISIONING: dict[str, tuple[list[Any], list[Any], Any, bool]] = {
    "one-provisioned": ([provisioned], [], ({}, ["provisioned-pvc"], []), True),
    "two-unbound-pvcs,one-matched,one-provisioned": (
        [unbound, provisioned], [pv_node1a],
        ({"unbound-pvc": "pv-node1a"}, ["provisioned-pvc"], []), True),
    "one-bound,one-provisioned": ([bound, provisioned], [pv_bound],
                                  ({}, ["provisioned-pvc"], []), True),
    "one-binding,one-selected-node": ([bound, selected_node], [pv_bound],
                                      ({}, ["provisioned-pvc"], []), True),
    "immediate-unbound-pvc": ([immediate_unbound], [], ERROR, False),
    "one-immediate-bound,one-provisioned": ([immediate_bound, provisioned],
                                            [pv_bound_immediate],
                                            ({}, ["provisioned-pvc"], []), True),
    "invalid-provisioner": ([no_provisioner], [], ({}, [], [BIND]), False),
    "volume-topology-unsatisfied": ([topo_mismatch], [], ({}, [], [BIND]), False),
}


@pytest.mark.parametrize("variant", list(DRIVERS))
@pytest.mark.parametrize("name", list(WITH_PROVISIONING))
def test_find_pod_volumes_with_provisioning(name: str, variant: str) -> None:
    claims, pvs, want, needs_capacity = WITH_PROVISIONING[name]
    if needs_capacity and variant == "CSIDriver with StorageCapacity":
        # no capacity object: not enough space, and nothing provisioned
        want = (want[0], [], [SPACE])
    assert find(_pod(*claims), claims, pvs, DRIVERS[variant]) == want


NODE1 = "node1"
CAPACITY: dict[str, tuple[list[Any], bool]] = {
    "network-attached": ([make_capacity("net", "waitClassWithProvisioner", None, Gi)], True),
    "local-storage": ([make_capacity("net", "waitClassWithProvisioner", NODE1, Gi)], True),
    "no-storage": ([], False),
    "wrong-node": ([make_capacity("net", "waitClassWithProvisioner", "node2", Gi)], False),
    "wrong-storage-class": ([make_capacity("net", "waitClass", NODE1, Gi)], False),
    "insufficient-storage": ([make_capacity("net", "waitClassWithProvisioner", NODE1, 2**20)],
                             False),
    "insufficient-volume-size": (
        [make_capacity("net", "waitClassWithProvisioner", NODE1, Gi, 2**20)], False),
    "zero-storage": ([make_capacity("net", "waitClassWithProvisioner", NODE1, 0)], False),
    "zero-volume-size": ([make_capacity("net", "waitClassWithProvisioner", NODE1, None, 0)],
                         False),
    "nil-storage": ([make_capacity("net", "waitClassWithProvisioner", NODE1, None)], False),
}


@pytest.mark.parametrize("tracked", [True, False], ids=["storageCapacity", "no storageCapacity"])
@pytest.mark.parametrize("name", list(CAPACITY))
def test_capacity(name: str, tracked: bool) -> None:
    """provisionedPVC (1Gi) on node1: the capacity object recorded for Score, or not enough
    space; without storageCapacity on the driver, no check and nothing recorded."""
    caps, fits = CAPACITY[name]
    snap = storage_snapshot([make_storage_node("node1", **{NODE_KEY: "node1"})],
                            pvcs=[provisioned], classes=CLASSES,
                            drivers=[driver("test-provisioner", tracked)], capacities=caps)
    pre = vb.new(None).pre_filter(pod_info(_pod(provisioned)), snap)
    assert isinstance(pre, PreFilterResult)
    found = find_pod_volumes(pre.state, snap, np.array([0], dtype=np.intp))
    reasons = [r for r, m in found.reasons() if m[0]]
    if not tracked:
        assert reasons == []
        assert found.dynamic_provisions(0) == [(provisioned, None)]
        return
    assert reasons == ([] if fits else [SPACE])
    if fits:
        assert found.dynamic_provisions(0) == [(provisioned, caps[0])]


def test_capacity_multiple_objects_of_one_name_keep_the_last() -> None:
    """kube's "multiple": three objects all named "net" in one namespace; the last written
    (node1's) is the one the lister holds, so it is recorded."""
    snap = storage_snapshot([make_storage_node("node1", **{NODE_KEY: "node1"})],
                            pvcs=[provisioned], classes=CLASSES,
                            drivers=[driver("test-provisioner", True)],
                            capacities=[make_capacity("net", "waitClassWithProvisioner", n, Gi)
                                        for n in (None, "node2", NODE1)])
    pre = vb.new(None).pre_filter(pod_info(_pod(provisioned)), snap)
    assert isinstance(pre, PreFilterResult)
    (only,) = snap.storage.capacities.values()
    found = find_pod_volumes(pre.state, snap, np.array([0], dtype=np.intp))
    assert found.dynamic_provisions(0) == [(provisioned, only)]
    assert only.node_topology is not None and only.node_topology.match_labels == (
        (NODE_KEY, NODE1),
    )


migration_bound = _pvc("pvc-migration-bound", G, "waitClass", bound_to="pv-migration-bound")
migration_pv = make_pv(
    "pv-migration-bound", "waitClass", G, claim=migration_bound, source_kind="gcePersistentDisk",
    labels={"failure-domain.beta.kubernetes.io/zone": "us-east-1",
            "failure-domain.beta.kubernetes.io/region": "us-east-1a"},
)
MIGRATION: dict[str, tuple[str, str | None, list[str]]] = {
    "pvc-bound": ("us-east-1", "kubernetes.io/gce-pd", []),
    "pvc-bound,csinode-not-migrated": ("us-east-1", "", []),
    "pvc-bound,missing-csinode": ("us-east-1", None, []),
    "pvc-bound,node-different-zone": ("us-east-2", "kubernetes.io/gce-pd", [NODE]),
}


@pytest.mark.parametrize("name", list(MIGRATION))
def test_find_pod_volumes_with_csi_migration(name: str) -> None:
    """A GCE PD PV with a beta zone label and no node affinity: on a node whose CSINode lists
    kubernetes.io/gce-pd as migrated it must sit in the node's topology.gke.io/zone."""
    zone, migrated, want = MIGRATION[name]
    snap = storage_snapshot([make_storage_node("node1", **{"topology.gke.io/zone": zone})],
                            pvs=[migration_pv], pvcs=[migration_bound], classes=CLASSES)
    if migrated is not None:
        ann = {"storage.alpha.kubernetes.io/migrated-plugins": migrated} if migrated else {}
        snap.storage.csi_nodes["node1"] = CSINode("node1", annotations=frozen_map(ann))
    pl = vb.new(None)
    pre = pl.pre_filter(pod_info(_pod(migration_bound)), snap)
    assert isinstance(pre, PreFilterResult)
    found = find_pod_volumes(pre.state, snap, np.array([0], dtype=np.intp))
    assert [r for r, m in found.reasons() if m[0]] == want
