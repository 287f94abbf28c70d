"""A pod's spec.volumes through the conversion (issue 26): every source the volume plugins
read converts to the domain's volume, csi and other volumes too, every malformed volume names
its field; and Placement.volume_bindings back to the contract."""

from __future__ import annotations

from typing import Any

import pytest

from schedsvc import model_volume as mv
from schedsvc.engine.schedule_one import Placement
from schedsvc.errors import InvalidArgument
from schedsvc.model import Outcome
from schedsvc.model_storage import VolumeBindingResult
from schedsvc.server.convert import Converter
from schedsvc.server.convert_results import fill_placement
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders.to_pb import volume_to_pb
from tests.convert_cases import a_pod

TEMPLATE = pb.PersistentVolumeClaimTemplate(
    labels={"app": "db"},
    spec=pb.PersistentVolumeClaimSpec(access_modes=["ReadWriteOnce"], requests={"storage": "1Gi"},
                                      storage_class_name="wffc"))


def convert(*volumes: pb.Volume, name: str = "p1") -> Any:
    return Converter().pod_from_pb(a_pod(name=name, volumes=volumes), "pods[2]")


def test_csi_and_other_volumes_are_accepted() -> None:
    pod = convert(pb.Volume(name="cache", other="emptyDir"),
                  pb.Volume(name="secrets", csi=pb.CSIVolumeSource(driver="secrets.io")))
    assert pod.volumes == (mv.Volume("cache", "other", other_source="emptyDir"),
                           mv.Volume("secrets", "csi", csi_driver="secrets.io"))


SERVED = [
    ("persistent_volume_claim",
     pb.Volume(name="v", persistent_volume_claim=pb.PersistentVolumeClaimVolumeSource(
         claim_name="data")), "persistentVolumeClaim"),
    ("ephemeral", pb.Volume(name="v", ephemeral=pb.EphemeralVolumeSource(
        volume_claim_template=TEMPLATE)), "ephemeral"),
    ("gce_persistent_disk", pb.Volume(
        name="v", gce_persistent_disk=pb.GCEPersistentDiskVolumeSource(pd_name="disk")),
     "gcePersistentDisk"),
    ("aws_elastic_block_store", pb.Volume(
        name="v", aws_elastic_block_store=pb.AWSElasticBlockStoreVolumeSource(volume_id="vol")),
     "awsElasticBlockStore"),
    ("iscsi", pb.Volume(name="v", iscsi=pb.ISCSIVolumeSource(
        target_portal="1.2.3.4:3260", iqn="iqn.2001-04.com.example:storage")), "iscsi"),
    ("azure_file", pb.Volume(name="v", azure_file=pb.AzureFileVolumeSource()), "azureFile"),
]


@pytest.mark.parametrize("field,volume,kind", SERVED, ids=[u[0] for u in SERVED])
def test_sources_the_volume_plugins_read_are_accepted_as_their_kind(
    field: str, volume: pb.Volume, kind: str
) -> None:
    pod = convert(pb.Volume(name="ok", other="configMap"), volume)
    assert [v.kind for v in pod.volumes] == ["other", kind]


ROUND_TRIPS = [
    mv.Volume("data", "persistentVolumeClaim", claim_name="data-0", read_only=True),
    mv.Volume("pd", "gcePersistentDisk", disk=mv.DiskSources(
        gce_persistent_disk=mv.GCEPersistentDisk("disk-1", 2, True))),
    mv.Volume("rbd", "rbd", disk=mv.DiskSources(rbd=mv.RBD(("m1",), "img"))),
    mv.Volume("az", "azureDisk", disk=mv.DiskSources(azure_disk=mv.AzureDisk(
        "d", "uri", "Managed"))),
    mv.Volume("cinder", "cinder", disk=mv.DiskSources(cinder=mv.Cinder("vol-1"))),
    mv.Volume("px", "portworxVolume", disk=mv.DiskSources(
        portworx_volume=mv.PortworxVolume("vol-2"))),
    mv.Volume("vs", "vsphereVolume", disk=mv.DiskSources(vsphere_volume=True)),
]


@pytest.mark.parametrize("volume", ROUND_TRIPS, ids=[v.kind for v in ROUND_TRIPS])
def test_served_volumes_convert_back_to_themselves(volume: mv.Volume) -> None:
    assert convert(volume_to_pb(volume)).volumes == (volume,)


def test_ephemeral_claims_are_named_from_each_pod_not_its_shape() -> None:
    """Pods equal but for uid and name share a shape (the whole-pod cache): the claim of an
    ephemeral volume is computed from each pod's own name, and equal templates sign equal."""
    conv = Converter()
    vol = pb.Volume(name="scratch", ephemeral=pb.EphemeralVolumeSource(
        volume_claim_template=TEMPLATE))
    a = conv.pod_from_pb(a_pod(uid="u1", name="web-a", volumes=[vol]), "pods[0]")
    b = conv.pod_from_pb(a_pod(uid="u2", name="web-b", volumes=[vol]), "pods[1]")
    assert a.shape is b.shape and a.volumes == b.volumes
    assert [v.claim(p.name) for p in (a, b) for v in p.volumes] == [
        "web-a-scratch", "web-b-scratch"]
    assert a.volumes[0].ephemeral_template == TEMPLATE.SerializeToString(deterministic=True)


MALFORMED = [
    ("a volume without a name", pb.Volume(other="emptyDir"), "pods[2].volumes[0].name"),
    ("a volume name that is not a DNS label", pb.Volume(name="Data_1", other="emptyDir"),
     "pods[2].volumes[0].name"),
    ("a volume without a source", pb.Volume(name="v"), "pods[2].volumes[0].source"),
    ("other naming a modelled source", pb.Volume(name="v", other="persistentVolumeClaim"),
     "pods[2].volumes[0].other"),
    ("other that is no source name", pb.Volume(name="v", other="empty dir"),
     "pods[2].volumes[0].other"),
    ("an inline CSI volume without a driver", pb.Volume(name="v", csi=pb.CSIVolumeSource()),
     "pods[2].volumes[0].csi.driver"),
    ("a claim volume without a claim name", pb.Volume(
        name="v", persistent_volume_claim=pb.PersistentVolumeClaimVolumeSource()),
     "pods[2].volumes[0].persistent_volume_claim.claim_name"),
    ("an ephemeral volume without a template", pb.Volume(
        name="v", ephemeral=pb.EphemeralVolumeSource()),
     "pods[2].volumes[0].ephemeral.volume_claim_template"),
    ("an ephemeral template with an unknown access mode", pb.Volume(
        name="v", ephemeral=pb.EphemeralVolumeSource(volume_claim_template=(
            pb.PersistentVolumeClaimTemplate(spec=pb.PersistentVolumeClaimSpec(
                access_modes=["Sometimes"]))))),
     "pods[2].volumes[0].ephemeral.volume_claim_template.spec.access_modes[0]"),
    ("a GCE partition out of range", pb.Volume(
        name="v", gce_persistent_disk=pb.GCEPersistentDiskVolumeSource(pd_name="d", partition=256)),
     "pods[2].volumes[0].gce_persistent_disk.partition"),
    ("an iSCSI IQN of no known format", pb.Volume(name="v", iscsi=pb.ISCSIVolumeSource(
        target_portal="p", iqn="disk-1")), "pods[2].volumes[0].iscsi.iqn"),
    ("an azureDisk without its URI", pb.Volume(
        name="v", azure_disk=pb.AzureDiskVolumeSource(disk_name="d")),
     "pods[2].volumes[0].azure_disk.disk_uri"),
]


@pytest.mark.parametrize("volume,field", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_volumes_are_refused_naming_the_field(volume: pb.Volume, field: str) -> None:
    with pytest.raises(InvalidArgument) as exc:
        convert(volume)
    assert exc.value.field == field


def test_volume_names_are_unique_in_a_pod() -> None:
    with pytest.raises(InvalidArgument) as exc:
        convert(pb.Volume(name="v", other="emptyDir"), pb.Volume(name="v", other="secret"))
    assert exc.value.field == "pods[2].volumes[1].name"


def test_volume_bindings_reach_the_placement() -> None:
    out = pb.Placement()
    fill_placement(out, Placement("u1", "n1", Outcome.SCHEDULED, volume_bindings=(
        VolumeBindingResult("ns/data-0", volume_name="pv-1"),
        VolumeBindingResult("ns/scratch", provisioned=True, selected_node="n1"))))
    assert [(b.claim, b.volume_name, b.provisioned, b.selected_node)
            for b in out.volume_bindings] == [
        ("ns/data-0", "pv-1", False, ""), ("ns/scratch", "", True, "n1")]
