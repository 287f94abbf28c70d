"""Storage objects through UpdateSnapshot (issue 26): upserted and removed into snap.storage,
keyed as kube keys them, moving the storage and snapshot generations; carried by replace and
staged replace; a rejected request leaves the snapshot untouched; a storage change drops every
profile's batch state (and only a storage change among otherwise row-local updates)."""

from __future__ import annotations

from typing import Any

import pytest

from schedsvc.config import default_config
from schedsvc.engine.batching import OpportunisticBatch
from schedsvc.engine.scheduler import Engine
from schedsvc.errors import InvalidArgument
from schedsvc.server.request_handler import RequestHandler
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node, pb_pod

PV = pb.PersistentVolume(name="pv-1", other="local", capacity={"storage": "10Gi"},
                         access_modes=["ReadWriteOnce"], phase="Available")
CLAIM = pb.PersistentVolumeClaim(name="data-0", namespace="db", storage_class_name="wffc",
                                 access_modes=["ReadWriteOnce"], requests={"storage": "1Gi"})
CLASS = pb.StorageClass(name="wffc", provisioner="ebs.csi.aws.com",
                        volume_binding_mode="WaitForFirstConsumer")
EVERY_KIND: dict[str, Any] = {
    "upsert_persistent_volumes": [PV],
    "upsert_persistent_volume_claims": [CLAIM],
    "upsert_storage_classes": [CLASS],
    "upsert_csi_nodes": [pb.CSINode(name="n0", drivers=[pb.CSINodeDriver(
        name="ebs.csi.aws.com", allocatable=pb.VolumeNodeResources(count=2))])],
    "upsert_csi_drivers": [pb.CSIDriver(name="ebs.csi.aws.com", storage_capacity=True)],
    "upsert_csi_storage_capacities": [pb.CSIStorageCapacity(
        name="cap", namespace="kube-system", storage_class_name="wffc", capacity="100Gi")],
    "upsert_volume_attachments": [pb.VolumeAttachment(
        name="va", attacher="ebs.csi.aws.com", node_name="n0", persistent_volume_name="pv-1")],
}
KEYS = {"pvs": ["pv-1"], "pvcs": ["db/data-0"], "classes": ["wffc"], "csi_nodes": ["n0"],
        "csi_drivers": ["ebs.csi.aws.com"], "capacities": ["kube-system/cap"],
        "attachments": ["va"]}


def handler() -> RequestHandler:
    h = RequestHandler(Engine(default_config(), seed=7))
    h.update_snapshot(pb.UpdateSnapshotRequest(upsert_nodes=[pb_node("n0")]))
    return h


def storage_keys(h: RequestHandler) -> dict[str, list[str]]:
    st = h.engine.cluster("default").snapshot.storage
    return {k: sorted(getattr(st, k)) for k in KEYS}


def test_every_kind_is_upserted_under_kubes_key_and_moves_both_generations() -> None:
    h = handler()
    snap = h.engine.cluster("default").snapshot
    before = (snap.generation, snap.storage.generation)
    resp = h.update_snapshot(pb.UpdateSnapshotRequest(**EVERY_KIND))
    assert storage_keys(h) == KEYS
    assert snap.storage.pvcs["db/data-0"].request == 2**30
    assert resp.generation == snap.generation > before[0]
    assert snap.storage.generation > before[1]


def test_removals_by_key_and_unknown_names_are_no_error() -> None:
    h = handler()
    h.update_snapshot(pb.UpdateSnapshotRequest(**EVERY_KIND))
    h.update_snapshot(pb.UpdateSnapshotRequest(
        remove_persistent_volumes=["pv-1", "never-there"],
        remove_persistent_volume_claims=["db/data-0"], remove_storage_classes=["wffc"],
        remove_csi_nodes=["n0"], remove_csi_drivers=["ebs.csi.aws.com"],
        remove_csi_storage_capacities=["kube-system/cap"], remove_volume_attachments=["va"]))
    assert storage_keys(h) == {k: [] for k in KEYS}


def test_an_update_removing_nothing_held_moves_no_generation() -> None:
    h = handler()
    snap = h.engine.cluster("default").snapshot
    before = (snap.generation, snap.storage.generation)
    h.update_snapshot(pb.UpdateSnapshotRequest(remove_persistent_volumes=["pv-9"]))
    assert (snap.generation, snap.storage.generation) == before


def test_an_upsert_replaces_the_object_whole() -> None:
    h = handler()
    h.update_snapshot(pb.UpdateSnapshotRequest(upsert_persistent_volumes=[PV]))
    h.update_snapshot(pb.UpdateSnapshotRequest(upsert_persistent_volumes=[
        pb.PersistentVolume(name="pv-1", other="nfs")]))
    pv = h.engine.cluster("default").snapshot.storage.pvs["pv-1"]
    assert (pv.source_kind, pv.capacity, pv.phase) == ("nfs", None, "Pending")


@pytest.mark.parametrize("bad,field", [
    ({"upsert_persistent_volumes": [PV, pb.PersistentVolume(name="pv-2")]},
     "upsert_persistent_volumes[1].source"),
    ({"upsert_persistent_volume_claims": [CLAIM, CLAIM]},
     "upsert_persistent_volume_claims[1].name"),
    ({"upsert_pods": [pb_pod("p", node_name="nowhere")]}, "upsert_pods[0].node_name"),
    ({"remove_csi_storage_capacities": ["cap"]}, "remove_csi_storage_capacities[0]"),
], ids=["a malformed PV", "a claim twice", "a pod on an unknown node", "a bad removal key"])
def test_a_rejected_request_leaves_the_snapshot_untouched(bad: dict[str, Any], field: str) -> None:
    h = handler()
    h.update_snapshot(pb.UpdateSnapshotRequest(upsert_storage_classes=[CLASS]))
    snap = h.engine.cluster("default").snapshot
    before = (snap.generation, snap.storage.generation, storage_keys(h))
    # every kind, a class removed, and one bad list (in place of the good one of its name)
    request = {**EVERY_KIND, "remove_storage_classes": ["wffc"], **bad}
    with pytest.raises(InvalidArgument) as exc:
        h.update_snapshot(pb.UpdateSnapshotRequest(**request))
    assert exc.value.field == field
    assert (snap.generation, snap.storage.generation, storage_keys(h)) == before


def test_replace_and_staged_replace_carry_storage() -> None:
    h = handler()
    h.update_snapshot(pb.UpdateSnapshotRequest(upsert_persistent_volumes=[PV]))
    h.update_snapshot(pb.UpdateSnapshotRequest(
        replace=True, upsert_nodes=[pb_node("n0")], upsert_storage_classes=[CLASS]))
    assert storage_keys(h)["pvs"] == [] and storage_keys(h)["classes"] == ["wffc"]
    first = h.update_snapshot(pb.UpdateSnapshotRequest(
        replace=True, stage=True, upsert_nodes=[pb_node("n0")], upsert_persistent_volumes=[PV]))
    assert storage_keys(h)["pvs"] == []  # staged: not in yet
    h.update_snapshot(pb.UpdateSnapshotRequest(
        stage=True, staged_replace=first.staged_replace, commit=True,
        upsert_persistent_volume_claims=[CLAIM]))
    keys = storage_keys(h)
    assert (keys["pvs"], keys["pvcs"], keys["classes"]) == (["pv-1"], ["db/data-0"], [])


def test_a_storage_change_drops_every_profiles_batch_state(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    heard: list[object] = []
    real = OpportunisticBatch.on_snapshot_change

    def spy(self: OpportunisticBatch, dirty: set[int] | None, *rest: Any) -> None:
        heard.append(None if dirty is None else frozenset(dirty))
        real(self, dirty, *rest)

    monkeypatch.setattr(OpportunisticBatch, "on_snapshot_change", spy)
    h = handler()
    n = len(h.engine.cluster("default").batches.by_profile())
    heard.clear()
    h.update_snapshot(pb.UpdateSnapshotRequest(upsert_pods=[pb_pod("p", node_name="n0")]))
    assert heard == [frozenset({0})] * n  # a bound pod: its row only
    heard.clear()
    h.update_snapshot(pb.UpdateSnapshotRequest(
        upsert_pods=[pb_pod("q", node_name="n0")], upsert_csi_drivers=[pb.CSIDriver(name="d.io")]))
    assert heard == [None] * n
