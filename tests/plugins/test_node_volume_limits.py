"""NodeVolumeLimits: kube's csi_test.go TestCSILimits, case by case as kube names them (its
fixture: four volumes per driver, claims csi-4 (unbound), csi-5 (no class), csi-6 (PV
missing), class csi-sc provisioned by the first driver, VolumeAttachments per driver). The
not-found message is a real lister's (singular); kube's Error status (an ephemeral claim the
pod does not own: fwk.AsStatus) is Code.ERROR, which the runtime wraps and ends the cycle with."""

from __future__ import annotations

import pytest

from schedsvc.framework import Code
from schedsvc.framework.feature import DEFAULT_FEATURES, EmulatedVersion, Features
from schedsvc.model import Node, Pod
from schedsvc.model_storage import StorageClass, VolumeAttachment
from schedsvc.model_volume import AWSElasticBlockStore, Volume
from schedsvc.plugins import node_volume_limits
from schedsvc.plugins.node_volume_limits import ERR_REASON_MAX_VOLUME_COUNT
from tests.builders import run_filter
from tests.builders.volume_plugins import (
    claim_volume,
    csi_pv,
    disk_pv,
    disk_volume,
    ephemeral_volume,
    make_csi_node,
    make_pvc,
    pod_with_volumes,
    volume_snapshot,
)

NODE = "node-for-max-pd-test-1"
EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
IN_TREE_EBS = "kubernetes.io/aws-ebs"
HOSTPATH = "kubernetes.io/hostpath"
MIGRATED = {"storage.alpha.kubernetes.io/migrated-plugins": IN_TREE_EBS}
EXCEED = ("filter", ERR_REASON_MAX_VOLUME_COUNT, Code.UNSCHEDULABLE)
OK = ("ok", "", None)
SKIP = ("skip", "", None)
_n = 0


def _pvc_pod(*claims: str) -> Pod:
    global _n
    _n += 1
    return pod_with_volumes(f"pod-{_n}", *(claim_volume(c) for c in claims))


def _inline_ebs(volume_id: str, *extra: Volume) -> Pod:
    global _n
    _n += 1
    ebs = disk_volume("", aws_elastic_block_store=AWSElasticBlockStore(volume_id))
    return pod_with_volumes(f"pod-{_n}", *extra, ebs)


CONFIG_MAPS = (Volume("", "other", other_source="configMap"),
               Volume("", "other", other_source="secret"))
running = _pvc_pod("csi-ebs.csi.aws.com-3")
pending = _pvc_pod("csi-4")
unbound2 = _pvc_pod("csi-4")
missing_pv = _pvc_pod("csi-6")
no_sc = _pvc_pod("csi-5")
gce_two = _pvc_pod("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
in_tree_one = _pvc_pod("csi-kubernetes.io/aws-ebs-0")
in_tree_two = _pvc_pod("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
ebs_one = _pvc_pod("csi-ebs.csi.aws.com-0")
ebs_two = _pvc_pod("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
non_migratable = _pvc_pod("csi-kubernetes.io/hostpath-0")
ephemeral = pod_with_volumes("abc", ephemeral_volume("xyz"), namespace="test", uid="12345")
ephemeral_two = pod_with_volumes(
    "abc", ephemeral_volume("x"), ephemeral_volume("y"), namespace="test", uid="12345II"
)
EPHEMERAL_CLAIM = make_pvc("abc-xyz", storage_class="csi-sc", namespace="test", owner_uid="12345")
CONFLICTING_CLAIM = make_pvc("abc-xyz", storage_class="csi-sc", namespace="test")
CLAIM_X = make_pvc("abc-x", storage_class="csi-sc", namespace="test", owner_uid="12345II")
CLAIM_Y = make_pvc("abc-y", storage_class="csi-sc", namespace="test", owner_uid="12345II")
inline = _inline_ebs("aws-inline1")
inline_same_id = _inline_ebs("csi-ebs.csi.aws.com-1")
only_config = pod_with_volumes("cm", *CONFIG_MAPS)
pvc_with_config = pod_with_volumes("cm-pvc", *CONFIG_MAPS, claim_volume("csi-ebs.csi.aws.com-0"))
ephemeral_with_config = pod_with_volumes(
    "abc", *CONFIG_MAPS, ephemeral_volume("xyz"), namespace="test", uid="cm-eph"
)
inline_with_config = _inline_ebs("aws-inline1", *CONFIG_MAPS)


def verdict(
    new: Pod, existing: list[Pod], max_vols: int, drivers: list[str], limit_source: str = "",
    va_count: int = 0, extra_claims: tuple[object, ...] = (), features: Features = DEFAULT_FEATURES,
) -> tuple[str, str, Code | None]:
    pvs = []
    for d in drivers:
        for j in range(4):
            name = f"csi-{d}-{j}"
            if d == IN_TREE_EBS:
                pvs.append(disk_pv(name, aws_elastic_block_store=AWSElasticBlockStore(name)))
            elif d == HOSTPATH:
                pvs.append(disk_pv(name))
            else:
                pvs.append(csi_pv(name, d))
    pvcs = [make_pvc(f"csi-{d}-{j}", volume_name=f"csi-{d}-{j}") for d in drivers for j in range(4)]
    pvcs += [
        make_pvc("csi-4", storage_class="csi-sc"), make_pvc("csi-5"),
        make_pvc("csi-6", storage_class="csi-sc", volume_name="missing-in-action"),
        *extra_claims,  # type: ignore[list-item]
    ]
    csi_nodes = []
    if limit_source in ("csinode", "csinode-with-no-limit"):
        lim = max_vols if limit_source == "csinode" else None
        csi_nodes.append(make_csi_node(NODE, dict.fromkeys(drivers, lim), MIGRATED))
    vas = [
        VolumeAttachment(f"va-{d}-{j}", attacher=d, node_name=NODE,
                         persistent_volume_name=f"csi-{d}-{j}")
        for d in drivers for j in range(va_count)
    ]
    snap = volume_snapshot(
        [Node(NODE)], placed=[(p, NODE) for p in existing], pvs=pvs, pvcs=pvcs,
        classes=[StorageClass("csi-sc", provisioner=drivers[0])], csi_nodes=csi_nodes,
        attachments=vas,
    )
    out = run_filter(node_volume_limits.new(None, features), new, snap)
    if out is None:
        return SKIP
    if out.feasible[0]:
        return OK
    return "filter", out.reasons[0][0], out.result.reason_codes[out.reasons[0][0]]


U = Code.UNRESOLVABLE
E = Code.ERROR
EPHEMERAL_MISSING = (
    "filter", 'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found', U
)
IT = [IN_TREE_EBS, EBS]
CASES = [
    ("should count VolumeAttachments towards volume limit when no pods exist",
     ebs_one, [], 2, [EBS], "csinode", 2, (), EXCEED),
    ("should schedule pod when VolumeAttachments count does not exceed limit",
     ebs_one, [], 2, [EBS], "csinode", 1, (), OK),
    ("fits when node volume limit >= new pods CSI volume",
     ebs_one, [running, ebs_two], 4, [EBS], "csinode", 0, (), OK),
    ("doesn't when node volume limit <= pods CSI volume",
     ebs_one, [running, ebs_two], 2, [EBS], "csinode", 0, (), EXCEED),
    ("should when driver does not support volume limits",
     ebs_one, [running, ebs_two], 2, [EBS], "csinode-with-no-limit", 0, (), OK),
    ("count pending PVCs towards volume limit <= pods CSI volume",
     ebs_one, [pending, ebs_two], 2, [EBS], "csinode", 0, (), EXCEED),
    ("count multiple pending pvcs towards volume limit >= pods CSI volume",
     ebs_one, [pending, unbound2, ebs_two], 4, [EBS], "csinode", 0, (), OK),
    ("should count PVCs with invalid PV name but valid SC",
     ebs_one, [missing_pv, ebs_two], 2, [EBS], "csinode", 0, (), EXCEED),
    ("don't count pvcs with missing SC towards volume limit",
     ebs_one, [running, no_sc], 2, [EBS], "csinode", 0, (), OK),
    ("count pvcs with the same type towards volume limit",
     ebs_one, [gce_two, ebs_two], 2, [EBS, GCE], "csinode", 0, (), EXCEED),
    ("don't count pvcs with different type towards volume limit",
     gce_two, [ebs_two, running], 2, [EBS, GCE], "csinode", 0, (), OK),
    ("should count in-tree volumes if migration is enabled",
     in_tree_one, [in_tree_two], 2, IT, "csinode", 0, (), EXCEED),
    ("nil csi node", inline, [in_tree_two], 0, IT, "", 0, (), OK),
    ("should count unbound in-tree volumes if migration is enabled",
     pending, [in_tree_two], 2, IT, "csinode", 0, (), EXCEED),
    ("should not limit pod if volume used does not report limits",
     in_tree_one, [in_tree_two], 2, IT, "csinode-with-no-limit", 0, (), OK),
    ("should not count non-migratable in-tree volumes",
     non_migratable, [ebs_two], 2, [HOSTPATH, EBS], "csinode", 0, (), OK),
    ("should count in-tree inline volumes if migration is enabled",
     inline, [in_tree_two], 2, IT, "csinode", 0, (), EXCEED),
    ("should count in-tree and csi volumes if migration is enabled "
     "(when scheduling in-tree volumes)",
     in_tree_one, [ebs_two], 2, IT, "csinode", 0, (), EXCEED),
    ("should count in-tree, inline and csi volumes if migration is enabled "
     "(when scheduling in-tree volumes)",
     inline, [ebs_two, in_tree_one], 3, IT, "csinode", 0, (), EXCEED),
    ("should not count in-tree, inline and csi volumes if migration is enabled "
     "(when scheduling in-tree volumes)",
     inline_same_id, [ebs_two, in_tree_one], 3, IT, "csinode", 0, (), OK),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
     ebs_one, [in_tree_two], 2, IT, "csinode", 0, (), EXCEED),
    ("ephemeral volume missing",
     ephemeral, [], 0, [EBS], "csinode-with-no-limit", 0, (), EPHEMERAL_MISSING),
    ("ephemeral volume not owned",
     ephemeral, [], 0, [EBS], "csinode-with-no-limit", 0, (CONFLICTING_CLAIM,),
     ("filter", "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)", E)),
    ("ephemeral volume unbound",
     ephemeral, [], 0, [EBS], "csinode-with-no-limit", 0, (EPHEMERAL_CLAIM,), OK),
    ("ephemeral doesn't when node volume limit <= pods CSI volume",
     ephemeral, [running, ebs_two], 2, [EBS], "csinode", 0, (EPHEMERAL_CLAIM,), EXCEED),
    ("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
     ebs_one, [running, ephemeral_two], 2, [EBS], "csinode", 0, (CLAIM_X, CLAIM_Y), EXCEED),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent "
     "volume, ephemeral disabled",
     ebs_one, [running, ephemeral, ebs_two], 3, [EBS], "csinode", 0, (EPHEMERAL_CLAIM,), EXCEED),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
     ebs_one, [running, ephemeral, ebs_two], 3, [EBS], "csinode", 0, (EPHEMERAL_CLAIM,), EXCEED),
    ("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
     ebs_one, [running, ephemeral, ebs_two], 5, [EBS], "csinode", 0, (EPHEMERAL_CLAIM,), OK),
    ("skip Filter when the pod only uses secrets and configmaps",
     only_config, [], 2, [EBS], "csinode", 0, (), SKIP),
    ("don't skip Filter when the pod has pvcs",
     pvc_with_config, [], 2, [EBS], "csinode", 0, (), OK),
    ("don't skip Filter when the pod has ephemeral volumes",
     ephemeral_with_config, [], 0, [EBS], "csinode-with-no-limit", 0, (), EPHEMERAL_MISSING),
    ("don't skip Filter when the pod has inline migratable volumes",
     inline_with_config, [in_tree_two], 2, IT, "csinode", 0, (), EXCEED),
]


@pytest.mark.parametrize("case", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("version", list(EmulatedVersion), ids=lambda v: v.value)
def test_csi_limits(case: tuple[object, ...], version: EmulatedVersion) -> None:
    """The same expectations in 1.35 and 1.37 (no CSIDriver objects: the gate changes nothing)."""
    new, existing, max_vols, drivers, source, vas, claims, want = case
    got = verdict(new, existing, max_vols, drivers, source, vas, claims,  # type: ignore[arg-type]
                  Features(version))
    assert got == want
