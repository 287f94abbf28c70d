"""proto -> domain conversion of the storage objects (issue 26): what valid objects convert to
(round trips through tests/builders/storage_pb.py, the API server's defaults), and every
refusal naming the field as the request spells it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from schedsvc import model
from schedsvc import model_storage as ms
from schedsvc import model_volume as mv
from schedsvc.errors import InvalidArgument
from schedsvc.server.convert_storage_update import storage_update_fields
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders.storage_pb import (
    attachment_to_pb,
    capacity_to_pb,
    csi_driver_to_pb,
    csi_node_to_pb,
    pv_to_pb,
    pvc_to_pb,
    storage_class_to_pb,
)
from tests.convert_cases import CONVERTER

ZONE = model.NodeSelectorTerm(match_expressions=(
    model.NodeSelectorRequirement("topology.kubernetes.io/zone", "In", ("a", "b")),))
SELECTOR = model.LabelSelector(match_labels=(("tier", "gold"),))

OBJECTS: list[tuple[str, str, Any, Callable[[Any], Any]]] = [
    ("a local PV bound by claimRef, with node affinity", "upsert_persistent_volumes",
     ms.PersistentVolume(
         name="pv-1", labels=model.frozen_map({"tier": "gold"}),
         annotations=model.frozen_map({ms.ANN_STORAGE_CLASS: "fast"}),
         storage_class_name="slow", capacity=10 * 2**30,
         access_modes=(ms.READ_WRITE_ONCE, ms.READ_ONLY_MANY), volume_mode=ms.BLOCK,
         volume_attributes_class_name="gold", node_affinity=(ZONE,),
         claim_ref=ms.ClaimRef("ns1", "data-0", "u-1"), source_kind="local",
         phase="Bound", deleting=True), pv_to_pb),
    ("a CSI PV", "upsert_persistent_volumes",
     ms.PersistentVolume(name="pv-2", capacity=1, phase="Available", source_kind="csi",
                         csi=ms.CSIPersistentVolumeSource("ebs.csi.aws.com", "vol-1")),
     pv_to_pb),
    ("an in-tree RBD PV", "upsert_persistent_volumes",
     ms.PersistentVolume(name="pv-3", source_kind="rbd", disk=mv.DiskSources(
         rbd=mv.RBD(("m1", "m2"), "img", "pool-a", read_only=True))), pv_to_pb),
    ("a claim with a selector, an explicit empty class and the beta annotation",
     "upsert_persistent_volume_claims",
     ms.PersistentVolumeClaim(
         name="data-0", namespace="ns1", uid="u-1",
         annotations=model.frozen_map({ms.ANN_SELECTED_NODE: "n1"}), storage_class_name="",
         volume_name="pv-1", access_modes=(ms.READ_WRITE_ONCE_POD,), request=5 * 2**30,
         selector=SELECTOR, volume_mode=ms.BLOCK, volume_attributes_class_name="gold",
         phase="Lost", deleting=True, controller_uid="pod-uid"), pvc_to_pb),
    ("a claim with its class unset", "upsert_persistent_volume_claims",
     ms.PersistentVolumeClaim(name="c", storage_class_name=None), pvc_to_pb),
    ("a WaitForFirstConsumer class over two zones", "upsert_storage_classes",
     ms.StorageClass("wffc", "ebs.csi.aws.com", ms.WAIT_FOR_FIRST_CONSUMER, (
         ms.TopologySelectorTerm((("topology.kubernetes.io/zone", ("a", "b")),)),)),
     storage_class_to_pb),
    ("a CSINode with a limit, a driver without one and migrated plugins", "upsert_csi_nodes",
     ms.CSINode("n1", (ms.CSINodeDriver("ebs.csi.aws.com", 25), ms.CSINodeDriver("x.io")),
                model.frozen_map({ms.ANN_MIGRATED_PLUGINS: "kubernetes.io/aws-ebs"})),
     csi_node_to_pb),
    ("a CSINode with a zero limit", "upsert_csi_nodes",
     ms.CSINode("n2", (ms.CSINodeDriver("ebs.csi.aws.com", 0),)), csi_node_to_pb),
    ("a CSIDriver named in upper case (kube lower-cases it to check)", "upsert_csi_drivers",
     ms.CSIDriver("Example.CSI.io"), csi_driver_to_pb),
    ("a CSIDriver with storage capacity", "upsert_csi_drivers",
     ms.CSIDriver("ebs.csi.aws.com", storage_capacity=True,
                  prevent_pod_scheduling_if_missing=True), csi_driver_to_pb),
    ("a CSIStorageCapacity with a maximum volume size", "upsert_csi_storage_capacities",
     ms.CSIStorageCapacity("cap-1", "kube-system", "wffc", SELECTOR, 100 * 2**30, 2**30),
     capacity_to_pb),
    ("a CSIStorageCapacity reaching no node, without quantities",
     "upsert_csi_storage_capacities", ms.CSIStorageCapacity("cap-2", storage_class_name="wffc"),
     capacity_to_pb),
    ("a VolumeAttachment", "upsert_volume_attachments",
     ms.VolumeAttachment("va-1", "ebs.csi.aws.com", "n1", "pv-2"), attachment_to_pb),
]


def convert(**lists: Any) -> dict[str, Any]:
    return storage_update_fields(pb.UpdateSnapshotRequest(**lists), CONVERTER.caches, 100)


@pytest.mark.parametrize("field,obj,to_pb", [c[1:] for c in OBJECTS], ids=[c[0] for c in OBJECTS])
def test_valid_objects_convert_back_to_themselves(field: str, obj: Any, to_pb: Any) -> None:
    assert convert(**{field: [to_pb(obj)]}) == {field: [obj]}


def test_the_api_servers_defaults_are_applied() -> None:
    out = convert(
        upsert_persistent_volumes=[
            pb.PersistentVolume(name="pv", other="hostPath"),
            pb.PersistentVolume(name="pv-rbd", rbd=pb.RBDVolumeSource(monitors=["m"], image="i")),
            pb.PersistentVolume(name="pv-az", azure_disk=pb.AzureDiskVolumeSource(
                disk_name="d", disk_uri="uri")),
        ],
        upsert_persistent_volume_claims=[pb.PersistentVolumeClaim(name="c")],
        upsert_storage_classes=[pb.StorageClass(name="sc", provisioner="p")],
        upsert_csi_drivers=[pb.CSIDriver(name="d.io")],
    )
    pv, rbd, az = out["upsert_persistent_volumes"]
    assert (pv.phase, pv.volume_mode, pv.source_kind) == ("Pending", "Filesystem", "hostPath")
    assert rbd.disk.rbd.pool == "rbd" and rbd.source_kind == "rbd"
    assert az.disk.azure_disk.kind == "Shared"
    claim = out["upsert_persistent_volume_claims"][0]
    assert (claim.namespace, claim.phase, claim.volume_mode) == ("default", "Pending", "Filesystem")
    assert claim.storage_class_name is None and claim.request is None
    assert out["upsert_storage_classes"][0].volume_binding_mode == ms.IMMEDIATE
    assert out["upsert_csi_drivers"][0].storage_capacity is False


def test_a_claim_naming_a_class_that_does_not_exist_is_not_an_error() -> None:
    out = convert(upsert_persistent_volume_claims=[
        pb.PersistentVolumeClaim(name="c", storage_class_name="no-such-class")])
    assert out["upsert_persistent_volume_claims"][0].class_name() == "no-such-class"


def test_removals_are_checked_keys() -> None:
    out = convert(remove_persistent_volumes=["pv-1"], remove_persistent_volume_claims=["ns/c"],
                  remove_csi_storage_capacities=["kube-system/cap"])
    assert out == {"remove_persistent_volumes": ["pv-1"],
                   "remove_persistent_volume_claims": ["ns/c"],
                   "remove_csi_storage_capacities": ["kube-system/cap"]}


PV = "upsert_persistent_volumes[0]"
PVC = "upsert_persistent_volume_claims[0]"
REFUSED: list[tuple[str, dict[str, Any], str]] = [
    ("a PV without a name", {"upsert_persistent_volumes": [pb.PersistentVolume(other="nfs")]},
     f"{PV}.name"),
    ("a PV without a source", {"upsert_persistent_volumes": [pb.PersistentVolume(name="p")]},
     f"{PV}.source"),
    ("a PV capacity that is not a quantity", {"upsert_persistent_volumes": [
        pb.PersistentVolume(name="p", other="nfs", capacity={"storage": "lots"})]},
     f'{PV}.capacity["storage"]'),
    ("a PV capacity of another resource", {"upsert_persistent_volumes": [
        pb.PersistentVolume(name="p", other="nfs", capacity={"cpu": "1"})]},
     f'{PV}.capacity["cpu"]'),
    ("an unknown access mode", {"upsert_persistent_volumes": [
        pb.PersistentVolume(name="p", other="nfs", access_modes=["ReadWriteSometimes"])]},
     f"{PV}.access_modes[0]"),
    ("ReadWriteOncePod beside another mode", {"upsert_persistent_volume_claims": [
        pb.PersistentVolumeClaim(name="c", access_modes=["ReadWriteOncePod", "ReadWriteOnce"])]},
     f"{PVC}.access_modes"),
    ("an unknown volume mode", {"upsert_persistent_volumes": [
        pb.PersistentVolume(name="p", other="nfs", volume_mode="Raw")]}, f"{PV}.volume_mode"),
    ("an unknown PV phase", {"upsert_persistent_volumes": [
        pb.PersistentVolume(name="p", other="nfs", phase="Lost")]}, f"{PV}.phase"),
    ("node affinity without terms", {"upsert_persistent_volumes": [
        pb.PersistentVolume(name="p", other="nfs", node_affinity=pb.VolumeNodeAffinity())]},
     f"{PV}.node_affinity.required.node_selector_terms"),
    ("a bad node affinity operator", {"upsert_persistent_volumes": [pb.PersistentVolume(
        name="p", other="nfs", node_affinity=pb.VolumeNodeAffinity(required=pb.NodeSelector(
            node_selector_terms=[pb.NodeSelectorTerm(match_expressions=[
                pb.NodeSelectorRequirement(key="k", operator="Near")])])))]},
     f"{PV}.node_affinity.required.node_selector_terms[0].match_expressions[0].operator"),
    ("a claimRef without a name", {"upsert_persistent_volumes": [pb.PersistentVolume(
        name="p", other="nfs", claim_ref=pb.ClaimReference(namespace="ns"))]},
     f"{PV}.claim_ref.name"),
    ("a CSI PV without a handle", {"upsert_persistent_volumes": [pb.PersistentVolume(
        name="p", csi=pb.CSIPersistentVolumeSource(driver="d.io"))]},
     f"{PV}.csi.volume_handle"),
    ("an other source naming a modelled one", {"upsert_persistent_volumes": [
        pb.PersistentVolume(name="p", other="csi")]}, f"{PV}.other"),
    ("an RBD PV without monitors", {"upsert_persistent_volumes": [pb.PersistentVolume(
        name="p", rbd=pb.RBDVolumeSource(image="i"))]}, f"{PV}.rbd.monitors"),
    ("an azureDisk of an unknown kind", {"upsert_persistent_volumes": [pb.PersistentVolume(
        name="p", azure_disk=pb.AzureDiskVolumeSource(disk_name="d", disk_uri="u", kind="X"))]},
     f"{PV}.azure_disk.kind"),
    ("a bad annotation key", {"upsert_persistent_volumes": [pb.PersistentVolume(
        name="p", other="nfs", annotations={"a b": "x"})]}, f'{PV}.annotations["a b"]'),
    ("a claim in a bad namespace", {"upsert_persistent_volume_claims": [
        pb.PersistentVolumeClaim(name="c", namespace="Bad_NS")]}, f"{PVC}.namespace"),
    ("a claim request that is negative", {"upsert_persistent_volume_claims": [
        pb.PersistentVolumeClaim(name="c", requests={"storage": "-1Gi"})]},
     f'{PVC}.requests["storage"]'),
    ("a claim requesting another resource", {"upsert_persistent_volume_claims": [
        pb.PersistentVolumeClaim(name="c", requests={"memory": "1Gi"})]},
     f'{PVC}.requests["memory"]'),
    ("an unknown claim phase", {"upsert_persistent_volume_claims": [
        pb.PersistentVolumeClaim(name="c", phase="Available")]}, f"{PVC}.phase"),
    ("a bad claim selector", {"upsert_persistent_volume_claims": [pb.PersistentVolumeClaim(
        name="c", selector=pb.LabelSelector(match_expressions=[
            pb.LabelSelectorRequirement(key="k", operator="Gt", values=["1"])]))]},
     f"{PVC}.selector.match_expressions[0].operator"),
    ("an unknown binding mode", {"upsert_storage_classes": [
        pb.StorageClass(name="sc", volume_binding_mode="Eventually")]},
     "upsert_storage_classes[0].volume_binding_mode"),
    ("an allowed topology without values", {"upsert_storage_classes": [pb.StorageClass(
        name="sc", allowed_topologies=[pb.TopologySelectorTerm(match_label_expressions=[
            pb.TopologySelectorLabelRequirement(key="zone")])])]},
     "upsert_storage_classes[0].allowed_topologies[0].match_label_expressions[0].values"),
    ("a CSINode driver twice", {"upsert_csi_nodes": [pb.CSINode(
        name="n1", drivers=[pb.CSINodeDriver(name="d.io"), pb.CSINodeDriver(name="d.io")])]},
     "upsert_csi_nodes[0].drivers[1].name"),
    ("a negative attach limit", {"upsert_csi_nodes": [pb.CSINode(name="n1", drivers=[
        pb.CSINodeDriver(name="d.io", allocatable=pb.VolumeNodeResources(count=-1))])]},
     "upsert_csi_nodes[0].drivers[0].allocatable.count"),
    ("a CSIDriver name too long", {"upsert_csi_drivers": [pb.CSIDriver(name="d" * 64)]},
     "upsert_csi_drivers[0].name"),
    ("a capacity without a class", {"upsert_csi_storage_capacities": [
        pb.CSIStorageCapacity(name="c")]}, "upsert_csi_storage_capacities[0].storage_class_name"),
    ("a capacity that is not a quantity", {"upsert_csi_storage_capacities": [
        pb.CSIStorageCapacity(name="c", storage_class_name="sc", capacity="1 Gi")]},
     "upsert_csi_storage_capacities[0].capacity"),
    ("an attachment to a bad node name", {"upsert_volume_attachments": [
        pb.VolumeAttachment(name="va", node_name="N 1")]},
     "upsert_volume_attachments[0].node_name"),
    ("a claim removal without a namespace", {"remove_persistent_volume_claims": ["c"]},
     "remove_persistent_volume_claims[0]"),
    ("a capacity removal with a bad namespace", {"remove_csi_storage_capacities": ["A/c"]},
     "remove_csi_storage_capacities[0]"),
    ("a PV removal that is not a name", {"remove_persistent_volumes": ["no/such"]},
     "remove_persistent_volumes[0]"),
]


@pytest.mark.parametrize("lists,field", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_malformed_objects_are_refused_naming_the_field(lists: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidArgument) as exc:
        convert(**lists)
    assert exc.value.field == field
