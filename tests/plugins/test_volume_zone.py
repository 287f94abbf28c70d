"""VolumeZone: kube's volume_zone_test.go (TestSingleZone, TestMultiZone, TestWithBinding),
case by case as kube names them, through PreFilter then Filter on one node. The not-found
messages are a real lister's (singular), as the oracle and a real kube-scheduler print them."""

from __future__ import annotations

import numpy as np
import pytest

from schedsvc.framework import Code, PreFilterResult
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Node
from schedsvc.model_storage import IMMEDIATE, WAIT_FOR_FIRST_CONSUMER, StorageClass
from schedsvc.plugins import volume_zone
from schedsvc.plugins.volume_zone import ERR_REASON_CONFLICT
from tests.builders import rows_of, run_filter
from tests.builders.volume_plugins import (
    claim_volume,
    csi_pv,
    make_pvc,
    pod_with_volumes,
    volume_snapshot,
)

BZ = "failure-domain.beta.kubernetes.io/zone"
BR = "failure-domain.beta.kubernetes.io/region"
Z = "topology.kubernetes.io/zone"
R = "topology.kubernetes.io/region"

SINGLE_PVS = {
    "Vol_1": {BZ: "us-west1-a"},
    "Vol_2": {BR: "us-west1", "uselessLabel": "none"},
    "Vol_3": {BR: "us-west1"},
    "Vol_Stable_1": {Z: "us-west1-a"},
    "Vol_Stable_2": {R: "us-west1"},
    "Vol_Stable_3": {Z: "us-west1-a", R: "us-west1-a"},
}
MULTI_PVS = {
    "Vol_1": {BZ: "us-west1-a"},
    "Vol_2": {BZ: "us-west1-b"},
    "Vol_3": {BZ: "us-west1-c__us-west1-a"},
    "Vol_Stable_1": {Z: "us-west1-a"},
    "Vol_Stable_2": {Z: "us-west1-c__us-west1-a"},
}
CLAIMS = {f"PVC_{s}": f"Vol_{s}" for s in ("1", "2", "3", "Stable_1", "Stable_2", "Stable_3")}
CLAIMS["PVC_4"] = "Vol_not_exist"


def verdict(
    pvs: dict[str, dict[str, str]], claim: str | None, labels: dict[str, str],
    extra_claims: tuple[tuple[str, str | None], ...] = (),
) -> tuple[str, str, Code | None]:
    """("skip" | "prefilter" | "filter" | "ok", reason, code) of pod_1 on one node."""
    pvcs = [make_pvc(c, volume_name=v) for c, v in CLAIMS.items()]
    pvcs += [make_pvc(c, storage_class=sc) for c, sc in extra_claims]
    classes = [
        StorageClass("Class_Immediate", volume_binding_mode=""),  # mode not set
        StorageClass("Class_Real_Immediate", volume_binding_mode=IMMEDIATE),
        StorageClass("Class_Wait", volume_binding_mode=WAIT_FOR_FIRST_CONSUMER),
    ]
    snap = volume_snapshot(
        [Node("host1", labels=labels)],
        pvs=[csi_pv(n, "d", labels=lab) for n, lab in pvs.items()],
        pvcs=pvcs, classes=classes,
    )
    volumes = (claim_volume(claim),) if claim else ()
    pod = pod_with_volumes("pod_1", *volumes)
    pl = volume_zone.new(None)
    pre = pl.pre_filter(pod_info(pod), snap)
    if isinstance(pre, PreFilterResult) and pre.reject:
        return "prefilter", pre.reject[0], pre.reject_code
    out = run_filter(pl, pod, snap)
    if out is None:
        return "skip", "", None
    if out.feasible[0]:
        return "ok", "", None
    return "filter", out.reasons[0][0], out.result.code


U = Code.UNRESOLVABLE
NO_ZONE = ("filter", ERR_REASON_CONFLICT, U)
OK = ("ok", "", None)

SINGLE = [
    ("pod without volume", None, {BZ: "us-west1-a"}, ("skip", "", None)),
    ("node without labels", "PVC_1", {}, OK),
    ("beta zone label matched", "PVC_1", {BZ: "us-west1-a", "uselessLabel": "none"}, OK),
    ("beta region label matched", "PVC_2", {BR: "us-west1", "uselessLabel": "none"}, OK),
    ("beta region label doesn't match", "PVC_2", {BR: "no_us-west1", "uselessLabel": "none"},
     NO_ZONE),
    ("beta zone label doesn't match", "PVC_1", {BZ: "no_us-west1-a", "uselessLabel": "none"},
     NO_ZONE),
    ("zone label matched", "PVC_Stable_1", {Z: "us-west1-a", "uselessLabel": "none"}, OK),
    ("region label matched", "PVC_Stable_2", {R: "us-west1", "uselessLabel": "none"}, OK),
    ("region label doesn't match", "PVC_Stable_2", {R: "no_us-west1", "uselessLabel": "none"},
     NO_ZONE),
    ("zone label doesn't match", "PVC_Stable_1", {Z: "no_us-west1-a", "uselessLabel": "none"},
     NO_ZONE),
    ("pv with zone and region, node with only zone", "PVC_Stable_3", {Z: "us-west1-a"},
     NO_ZONE),
    ("pv with zone,node with beta zone", "PVC_Stable_1", {BZ: "us-west1-a"}, NO_ZONE),
    ("pv with beta label,node with ga label, matched", "PVC_1", {Z: "us-west1-a"}, OK),
    ("pv with beta label,node with ga label, don't match", "PVC_1", {Z: "us-west1-b"},
     NO_ZONE),
]


@pytest.mark.parametrize(("claim", "labels", "want"), [c[1:] for c in SINGLE],
                         ids=[c[0] for c in SINGLE])
def test_single_zone(claim: str | None, labels: dict[str, str], want: tuple[str, str, Code | None]
                     ) -> None:
    assert verdict(SINGLE_PVS, claim, labels) == want


MULTI = [
    ("node without labels", "PVC_3", {}, OK),
    ("beta zone label matched", "PVC_3", {BZ: "us-west1-a", "uselessLabel": "none"}, OK),
    ("beta zone label doesn't match", "PVC_1", {BZ: "us-west1-b", "uselessLabel": "none"},
     NO_ZONE),
    ("zone label matched", "PVC_Stable_2", {Z: "us-west1-a", "uselessLabel": "none"}, OK),
    ("zone label doesn't match", "PVC_Stable_1", {Z: "us-west1-b", "uselessLabel": "none"},
     NO_ZONE),
]


@pytest.mark.parametrize(("claim", "labels", "want"), [c[1:] for c in MULTI],
                         ids=[c[0] for c in MULTI])
def test_multi_zone(claim: str, labels: dict[str, str], want: tuple[str, str, Code | None]
                    ) -> None:
    assert verdict(MULTI_PVS, claim, labels) == want


UNBOUND = (
    ("PVC_NoSC", "Class_0"), ("PVC_EmptySC", None), ("PVC_WaitSC", "Class_Wait"),
    ("PVC_ImmediateSC", "Class_Immediate"), ("PVC_RealImmediateSC", "Class_Real_Immediate"),
)
BINDING = [
    ("label zone failure domain matched", "PVC_1", OK),
    ("unbound volume empty storage class", "PVC_EmptySC",
     ("prefilter", "PersistentVolumeClaim had no pv name and storageClass name", U)),
    ("unbound volume no storage class", "PVC_NoSC",
     ("prefilter", 'storageclass.storage.k8s.io "Class_0" not found', U)),
    ("unbound volume immediate binding mode", "PVC_ImmediateSC",
     ("prefilter", 'VolumeBindingMode not set for StorageClass "Class_Immediate"', U)),
    ("unbound volume wait binding mode", "PVC_WaitSC", ("skip", "", None)),
    # ours: a class whose mode is Immediate (kube's test leaves the mode nil)
    ("unbound volume with a real Immediate class", "PVC_RealImmediateSC",
     ("prefilter", "PersistentVolume had no name", U)),
    ("ours: claim bound to a PV that does not exist", "PVC_4",
     ("prefilter", 'persistentvolume "Vol_not_exist" not found', U)),
    ("ours: claim that does not exist", "PVC_missing",
     ("prefilter", 'persistentvolumeclaim "PVC_missing" not found', U)),
]


@pytest.mark.parametrize(("claim", "want"), [c[1:] for c in BINDING], ids=[c[0] for c in BINDING])
def test_with_binding(claim: str, want: tuple[str, str, Code | None]) -> None:
    pvs = {"Vol_1": {BZ: "us-west1-a"}}
    assert verdict(pvs, claim, {BZ: "us-west1-a", "uselessLabel": "none"}, UNBOUND) == want


def test_empty_label_parts_put_no_constraint() -> None:
    """LabelZonesToSet fails on "a__" (an empty part): kube ignores the label."""
    assert verdict({"Vol_1": {BZ: "us-west1-a__"}}, "PVC_1", {BZ: "elsewhere"}) == (
        "skip", "", None
    )


def test_filter_over_many_rows_matches_node_by_node() -> None:
    """The vectorized Filter over a block agrees with each node alone."""
    nodes = [
        Node("n0", labels={BZ: "us-west1-a"}), Node("n1", labels={Z: "us-west1-a"}),
        Node("n2", labels={Z: "us-west1-c"}), Node("n3"),
        Node("n4", labels={BZ: "x", Z: "us-west1-a"}),
    ]
    snap = volume_snapshot(
        nodes, pvs=[csi_pv("Vol_3", "d", labels={BZ: "us-west1-c__us-west1-a"})],
        pvcs=[make_pvc("PVC_3", volume_name="Vol_3")],
    )
    pod = pod_with_volumes("p", claim_volume("PVC_3"))
    out = run_filter(volume_zone.new(None), pod, snap, rows_of(snap, [n.name for n in nodes]))
    assert out is not None
    assert out.feasible == [True, True, True, True, False]
    assert np.array_equal(out.result.feasible, np.array(out.feasible))
