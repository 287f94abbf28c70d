"""Victims free what the volume plugins count (kube's PreFilterExtensions of VolumeRestrictions,
NodeVolumeLimits' Filter over the cloned node): through a whole preemption on an engine, the
storage objects set on its snapshot directly (the contract carries them in part A). And the
nominated pods VolumeRestrictions' AddPod counts on a node (kube's two-pass filter)."""

from __future__ import annotations

import dataclasses

from schedsvc.engine.scheduler import Cluster
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Node, Outcome, Pod
from schedsvc.model_storage import (
    READ_WRITE_ONCE,
    READ_WRITE_ONCE_POD,
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeAttachment,
)
from schedsvc.model_volume import GCEPersistentDisk
from schedsvc.plugins import volume_restrictions
from schedsvc.plugins.volume_restrictions import ERR_REASON_RWOP_CONFLICT
from tests.builders import cluster_of, node, rows_of, snapshot_of
from tests.builders.volume_plugins import (
    claim_volume,
    csi_pv,
    disk_volume,
    make_csi_node,
    make_pvc,
    pod_with_volumes,
)

NO_VICTIMS = "No preemption victims found for incoming pod"


def _cluster(
    placed: list[tuple[Pod, str]], pvcs: list[PersistentVolumeClaim] = (),  # type: ignore[assignment]
    pvs: list[PersistentVolume] = (),  # type: ignore[assignment]
    limits: dict[str, int] | None = None, attachments: list[VolumeAttachment] = (),  # type: ignore[assignment]
) -> Cluster:
    c = cluster_of(
        [node("a"), node("b")],
        [dataclasses.replace(p, node_name=n) for p, n in placed],
    )
    st = c.snapshot.storage
    st.pvcs.update((x.key, x) for x in pvcs)
    st.pvs.update((x.name, x) for x in pvs)
    st.attachments.update((x.name, x) for x in attachments)
    if limits is not None:
        st.csi_nodes.update({n: make_csi_node(n, limits) for n in ("a", "b")})
    st.generation += 1
    return c


def _rwop() -> tuple[list[PersistentVolumeClaim], list[PersistentVolume]]:
    """Claim "data", ReadWriteOncePod, bound to a PV without topology."""
    pvc = make_pvc("data", volume_name="pv-data", access_modes=(READ_WRITE_ONCE_POD,))
    return [pvc], [csi_pv("pv-data", "d")]


def test_evicting_the_pod_that_uses_a_read_write_once_pod_claim_frees_it() -> None:
    c = _cluster([(pod_with_volumes("v1", claim_volume("data")), "a"),
                  (pod_with_volumes("v2"), "b")], *_rwop())
    (out,), _ = c.schedule([pod_with_volumes("p", claim_volume("data"), priority=10)])
    assert out.outcome is Outcome.UNSCHEDULABLE
    assert out.message.startswith(f"0/2 nodes are available: 2 {ERR_REASON_RWOP_CONFLICT}.")
    assert out.nominated_node_name == "a"  # on b no victim frees the claim
    assert [v.uid for v in out.victims] == ["default/v1"]


def test_a_claim_in_use_by_a_more_important_pod_is_not_preempted() -> None:
    c = _cluster([(pod_with_volumes("v1", claim_volume("data"), priority=20), "a")], *_rwop())
    (out,), _ = c.schedule([pod_with_volumes("p", claim_volume("data"), priority=10)])
    assert out.nominated_node_name == ""
    assert NO_VICTIMS in out.message


def test_evicting_the_pod_with_the_same_disk_frees_it() -> None:
    gce = disk_volume(gce_persistent_disk=GCEPersistentDisk("foo"))
    c = _cluster([(pod_with_volumes("v1", gce), "a"), (pod_with_volumes("v2", gce), "b"),
                  (pod_with_volumes("v3", gce, priority=20), "b")])
    (out,), _ = c.schedule([pod_with_volumes("p", gce, priority=10)])
    assert out.message.startswith("0/2 nodes are available: 2 node(s) had no available disk.")
    assert out.nominated_node_name == "a"  # b's second user outranks the pod
    assert [v.uid for v in out.victims] == ["default/v1"]


def _attached(names: list[str]) -> tuple[list[PersistentVolumeClaim], list[PersistentVolume]]:
    pvcs = [make_pvc(n, volume_name=n, access_modes=(READ_WRITE_ONCE,)) for n in names]
    return pvcs, [csi_pv(n, "d") for n in names]


def test_evicting_a_pod_frees_its_attach_slot() -> None:
    pvcs, pvs = _attached(["c1", "c2", "c3"])
    c = _cluster([(pod_with_volumes("v1", claim_volume("c1")), "a"),
                  (pod_with_volumes("v2", claim_volume("c2"), priority=20), "b")],
                 pvcs, pvs, limits={"d": 1})
    (out,), _ = c.schedule([pod_with_volumes("p", claim_volume("c3"), priority=10)])
    assert out.message.startswith("0/2 nodes are available: 2 node(s) exceed max volume count.")
    assert out.nominated_node_name == "a"
    assert [v.uid for v in out.victims] == ["default/v1"]


def test_a_volume_attachment_keeps_the_slot_after_its_pod_is_evicted() -> None:
    """kube counts a VolumeAttachment not already counted through a pod: evicting the pod
    that uses the volume leaves the attachment, so the node stays full."""
    pvcs, pvs = _attached(["c1", "c3"])
    va = VolumeAttachment("va-1", attacher="d", node_name="a", persistent_volume_name="c1")
    c = _cluster([(pod_with_volumes("v1", claim_volume("c1")), "a")], pvcs, pvs,
                 limits={"d": 1}, attachments=[va])
    (out,), _ = c.schedule([pod_with_volumes("p", claim_volume("c3"), priority=10)])
    # b has no pod: it fits there at once
    assert out.outcome is Outcome.SCHEDULED and out.node_name == "b"
    c2 = _cluster([(pod_with_volumes("v1", claim_volume("c1")), "a"),
                   (pod_with_volumes("v2", claim_volume("c3"), priority=20), "b")],
                  pvcs + [make_pvc("c4", volume_name="c4")], pvs + [csi_pv("c4", "d")],
                  limits={"d": 1}, attachments=[va])
    (out2,), _ = c2.schedule([pod_with_volumes("p", claim_volume("c4"), priority=10)])
    assert out2.nominated_node_name == ""
    assert NO_VICTIMS in out2.message


def test_a_nominated_pod_counts_its_claims_when_the_plugin_did_not_skip() -> None:
    """kube's AddPod: with the pod's inline disk PreFilter does not skip, so a nominated pod
    added on a node with one of its ReadWriteOncePod claims (used by no placed pod) makes that
    node conflict; without it kube skips and the nominated pod is not counted."""
    snap = snapshot_of([Node("a"), Node("b")])
    snap.storage.pvcs["default/data"] = make_pvc("data", access_modes=(READ_WRITE_ONCE_POD,))
    nominated = pod_with_volumes("q", claim_volume("data"), priority=10)
    snap.add_nominated(nominated)
    temp = snap.add_temporary(snap.nominated[nominated.uid], "a")
    pl = volume_restrictions.new(None)
    gce = disk_volume(gce_persistent_disk=GCEPersistentDisk("foo"))
    with_disk = pod_info(pod_with_volumes("p", gce, claim_volume("data")))
    pre = pl.pre_filter(with_disk, snap)
    rows = rows_of(snap, ["a", "b"])
    res = pl.filter(pre.state, with_disk, snap, rows)  # type: ignore[union-attr]
    assert res.feasible.tolist() == [False, True]
    assert [r for r, m in res.reasons if m[0]] == [ERR_REASON_RWOP_CONFLICT]
    without_disk = pod_info(pod_with_volumes("p", claim_volume("data")))
    assert pl.pre_filter(without_disk, snap) is volume_restrictions.SKIP
    snap.remove_temporary(temp)
    res = pl.filter(pre.state, with_disk, snap, rows)  # type: ignore[union-attr]
    assert res.feasible.tolist() == [True, True]
