"""The client reads storage objects and pods' volumes from `kubectl get -o json` output (issue
26): tests/data/kube/storage-list.json is a hand-written List as kubectl prints one (status,
finalizers and fields no plugin reads included); what it reads is what the server accepts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schedsvc.config import default_config
from schedsvc.engine.scheduler import Engine
from schedsvc.server.request_handler import RequestHandler
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.desired_state import DesiredState, replay_chunks
from schedsvc_client.kube import load_cluster
from schedsvc_client.kube_json import KubeObjectError
from schedsvc_client.kube_pod import pod_from_kube
from tests.builders import pb_node

FIXTURE = Path(__file__).parent / "data" / "kube" / "storage-list.json"
ZONE = "topology.kubernetes.io/zone"


def test_every_storage_kind_is_read_with_the_fields_the_plugins_read() -> None:
    kc = load_cluster(str(FIXTURE))
    bound, local = kc.persistent_volumes
    assert (bound.name, bound.storage_class_name, dict(bound.capacity), bound.phase) == (
        "pvc-5f1c0e2a", "gp3", {"storage": "10Gi"}, "Bound")
    assert (bound.csi.driver, bound.csi.volume_handle) == ("ebs.csi.aws.com", "vol-0abc")
    assert (bound.claim_ref.namespace, bound.claim_ref.name) == ("db", "data-db-0")
    term = bound.node_affinity.required.node_selector_terms[0].match_expressions[0]
    assert (term.key, term.operator, list(term.values)) == (ZONE, "In", ["eu-west-1a"])
    assert (local.other, local.volume_mode, local.phase, dict(local.labels)) == (
        "local", "Block", "Available", {"tier": "fast"})
    data, scratch = kc.persistent_volume_claims
    assert (data.namespace, data.volume_name, data.storage_class_name, data.phase) == (
        "db", "pvc-5f1c0e2a", "gp3", "Bound")
    assert data.annotations["pv.kubernetes.io/bind-completed"] == "yes"
    assert not scratch.HasField("storage_class_name")  # unset, not ""
    assert (scratch.deleting, scratch.controller_uid, list(scratch.access_modes)) == (
        True, "pod-uid-web-0", ["ReadWriteOncePod"])
    assert dict(scratch.selector.match_labels) == {"tier": "fast"}
    gp3, local_class = kc.storage_classes
    assert (gp3.provisioner, gp3.volume_binding_mode) == ("ebs.csi.aws.com", "WaitForFirstConsumer")
    expr = gp3.allowed_topologies[0].match_label_expressions[0]
    assert (expr.key, list(expr.values)) == (ZONE, ["eu-west-1a", "eu-west-1b"])
    assert local_class.provisioner == "kubernetes.io/no-provisioner"
    (node,) = kc.csi_nodes
    assert [(d.name, d.allocatable.HasField("count"), d.allocatable.count)
            for d in node.drivers] == [("ebs.csi.aws.com", True, 25),
                                       ("secrets-store.csi.k8s.io", False, 0)]
    assert kc.csi_drivers == [pb.CSIDriver(name="ebs.csi.aws.com", storage_capacity=True)]
    (cap,) = kc.csi_storage_capacities
    assert (cap.namespace, cap.capacity, cap.maximum_volume_size, cap.storage_class_name) == (
        "kube-system", "500Gi", "16Ti", "gp3")
    assert kc.volume_attachments == [pb.VolumeAttachment(
        name="csi-3f2e1d", attacher="ebs.csi.aws.com", node_name="n1",
        persistent_volume_name="pvc-5f1c0e2a")]


def test_what_the_client_reads_the_server_accepts() -> None:
    kc = load_cluster(str(FIXTURE))
    h = RequestHandler(Engine(default_config(), seed=1))
    h.update_snapshot(pb.UpdateSnapshotRequest(upsert_nodes=[pb_node("n1")],
                                               **kc.storage_lists()))
    st = h.engine.cluster("default").snapshot.storage
    assert sorted(st.pvcs) == ["db/data-db-0", "default/web-0-scratch"]
    assert st.pvs["pvc-5f1c0e2a"].capacity == 10 * 2**30
    assert st.csi_nodes["n1"].migrated_plugins() == {"kubernetes.io/aws-ebs",
                                                     "kubernetes.io/gce-pd"}
    assert st.capacities["kube-system/csisc-abcde"].maximum_volume_size == 16 * 2**40


def _pod(*volumes: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "db-0", "namespace": "db", "uid": "u-db-0"},
            "spec": {"containers": [{"name": "db", "image": "postgres:17"}],
                     "volumes": list(volumes)}}


VOLUMES: list[tuple[dict[str, Any], pb.Volume]] = [
    ({"persistentVolumeClaim": {"claimName": "data-db-0", "readOnly": True}},
     pb.Volume(persistent_volume_claim=pb.PersistentVolumeClaimVolumeSource(
         claim_name="data-db-0", read_only=True))),
    ({"ephemeral": {"volumeClaimTemplate": {"metadata": {"labels": {"app": "db"}}, "spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
        "resources": {"requests": {"storage": "1Gi"}}}}}},
     pb.Volume(ephemeral=pb.EphemeralVolumeSource(volume_claim_template=(
         pb.PersistentVolumeClaimTemplate(labels={"app": "db"}, spec=pb.PersistentVolumeClaimSpec(
             access_modes=["ReadWriteOnce"], storage_class_name="gp3",
             requests={"storage": "1Gi"})))))),
    ({"csi": {"driver": "secrets-store.csi.k8s.io", "readOnly": True,
              "volumeAttributes": {"secretProviderClass": "x"}}},
     pb.Volume(csi=pb.CSIVolumeSource(driver="secrets-store.csi.k8s.io", read_only=True))),
    ({"gcePersistentDisk": {"pdName": "disk-1", "fsType": "ext4", "partition": 1}},
     pb.Volume(gce_persistent_disk=pb.GCEPersistentDiskVolumeSource(pd_name="disk-1",
                                                                    partition=1))),
    ({"awsElasticBlockStore": {"volumeID": "vol-1", "fsType": "ext4"}},
     pb.Volume(aws_elastic_block_store=pb.AWSElasticBlockStoreVolumeSource(volume_id="vol-1"))),
    ({"iscsi": {"targetPortal": "10.0.0.2:3260", "iqn": "iqn.2001-04.com.example:s",
                "lun": 3, "iscsiInterface": "default"}},
     pb.Volume(iscsi=pb.ISCSIVolumeSource(target_portal="10.0.0.2:3260",
                                          iqn="iqn.2001-04.com.example:s", lun=3))),
    ({"rbd": {"monitors": ["10.0.0.1:6789"], "image": "img", "pool": "rbd", "user": "admin"}},
     pb.Volume(rbd=pb.RBDVolumeSource(monitors=["10.0.0.1:6789"], image="img", pool="rbd"))),
    ({"azureDisk": {"diskName": "d", "diskURI": "/subscriptions/x/disks/d", "kind": "Managed",
                    "cachingMode": "ReadWrite"}},
     pb.Volume(azure_disk=pb.AzureDiskVolumeSource(
         disk_name="d", disk_uri="/subscriptions/x/disks/d", kind="Managed"))),
    ({"cinder": {"volumeID": "c-1"}}, pb.Volume(cinder=pb.CinderVolumeSource(volume_id="c-1"))),
    ({"portworxVolume": {"volumeID": "px-1"}},
     pb.Volume(portworx_volume=pb.PortworxVolumeSource(volume_id="px-1"))),
    ({"azureFile": {"secretName": "s", "shareName": "share"}},
     pb.Volume(azure_file=pb.AzureFileVolumeSource(secret_name="s", share_name="share"))),
    ({"vsphereVolume": {"volumePath": "[ds] v.vmdk"}},
     pb.Volume(vsphere_volume=pb.VsphereVirtualDiskVolumeSource(volume_path="[ds] v.vmdk"))),
    ({"emptyDir": {"medium": "Memory"}}, pb.Volume(other="emptyDir")),
    ({"configMap": {"name": "cfg"}}, pb.Volume(other="configMap")),
]


@pytest.mark.parametrize("source,want", VOLUMES, ids=[next(iter(s)) for s, _ in VOLUMES])
def test_each_volume_source_reaches_its_contract_field(
    source: dict[str, Any], want: pb.Volume
) -> None:
    pod = pod_from_kube(_pod({"name": "v", **source}))
    want.name = "v"
    assert list(pod.volumes) == [want]


@pytest.mark.parametrize("volume,path", [
    ({"name": "v", "quantumDisk": {"id": 1}}, "spec.volumes[0].quantumDisk"),
    ({"name": "v", "emptyDir": {}, "hostPath": {"path": "/"}}, "spec.volumes[0]"),
    ({"name": "v", "awsElasticBlockStore": {"volumeID": 7}},
     "spec.volumes[0].awsElasticBlockStore.volumeID"),
], ids=["an unknown source", "two sources", "a source field of the wrong type"])
def test_a_volume_we_cannot_read_is_refused_by_name(volume: dict[str, Any], path: str) -> None:
    with pytest.raises(KubeObjectError) as exc:
        pod_from_kube(_pod(volume))
    assert exc.value.path == path


def test_a_pv_of_an_unknown_source_is_refused_by_name() -> None:
    pv = {"kind": "PersistentVolume", "metadata": {"name": "pv"},
          "spec": {"capacity": {"storage": "1Gi"}, "quantumDisk": {}}}
    with pytest.raises(KubeObjectError) as exc:
        load_cluster(json.dumps({"kind": "List", "items": [pv]}))
    assert exc.value.path == "items[0].spec.quantumDisk"


def test_a_replay_sends_the_storage_objects_back() -> None:
    state = DesiredState()
    kc = load_cluster(str(FIXTURE))
    state.apply(pb.UpdateSnapshotRequest(**kc.storage_lists()))
    state.apply(pb.UpdateSnapshotRequest(remove_persistent_volume_claims=["db/data-db-0"],
                                         remove_volume_attachments=["csi-3f2e1d"]))
    (req,) = replay_chunks(state, 1000)
    assert [c.name for c in req.upsert_persistent_volume_claims] == ["web-0-scratch"]
    assert len(req.upsert_persistent_volumes) == 2 and not req.upsert_volume_attachments
    assert [c.name for c in req.upsert_csi_storage_capacities] == ["csisc-abcde"]
