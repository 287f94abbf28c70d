"""The storage model's helpers, each as kube's helper it stands for decides."""

from __future__ import annotations

from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Pod
from schedsvc.model_storage import (
    ANN_BIND_COMPLETED,
    ANN_MIGRATED_PLUGINS,
    ANN_STORAGE_CLASS,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
)
from schedsvc.model_volume import Volume


def test_a_volume_names_its_claim_as_kube_does() -> None:
    """ephemeral.VolumeClaimName is <pod>-<volume>; a PVC volume names its claimName."""
    pod = Pod(uid="u", name="web-0", volumes=(
        Volume("data", "persistentVolumeClaim", claim_name="data-web-0"),
        Volume("scratch", "ephemeral"),
        Volume("cache", "other", other_source="emptyDir"),
    ))
    assert [v.claim(pod.name) for v in pod.volumes] == ["data-web-0", "web-0-scratch", ""]


def test_the_beta_class_annotation_beats_the_field_even_when_empty() -> None:
    """GetPersistentVolumeClaimClass: the annotation first (even ""), then the field, then ""."""
    assert PersistentVolumeClaim("c", annotations={ANN_STORAGE_CLASS: ""},
                                 storage_class_name="fast").class_name() == ""
    assert PersistentVolumeClaim("c", storage_class_name="fast").class_name() == "fast"
    assert PersistentVolumeClaim("c").class_name() == ""
    assert PersistentVolume("pv", annotations={ANN_STORAGE_CLASS: "slow"},
                            storage_class_name="fast").class_name() == "slow"


def test_a_claim_is_fully_bound_only_with_its_volume_and_the_annotation() -> None:
    assert PersistentVolumeClaim("c", volume_name="pv", annotations={ANN_BIND_COMPLETED: "yes"}
                                 ).fully_bound()
    assert not PersistentVolumeClaim("c", volume_name="pv").fully_bound()
    assert not PersistentVolumeClaim("c", annotations={ANN_BIND_COMPLETED: "yes"}).fully_bound()


def test_a_csinode_lists_its_migrated_plugins_from_the_annotation() -> None:
    raw = "kubernetes.io/gce-pd, kubernetes.io/aws-ebs,"
    node = CSINode("n1", annotations={ANN_MIGRATED_PLUGINS: raw})
    assert node.migrated_plugins() == {"kubernetes.io/gce-pd", "kubernetes.io/aws-ebs"}
    assert CSINode("n2").migrated_plugins() == frozenset()


def test_a_new_snapshot_holds_no_storage_objects() -> None:
    snap = Snapshot()
    assert snap.storage.is_empty() and snap.storage.generation == 0
    snap.storage.pvs["pv"] = PersistentVolume("pv")
    assert not snap.storage.is_empty()
