"""NodeVolumeLimits per release: kube's TestVolumeLimitScalingGate (the gate is on in 1.37,
off in 1.35; its 1.35 variant with the gate switched on is not reachable here: we emulate a
release's defaults, not single gates) and the 1.35 Portworx rule (counted only on a node whose
CSINode lists it as migrated)."""

from __future__ import annotations

import pytest

from schedsvc.framework import Code
from schedsvc.framework.feature import EmulatedVersion, Features
from schedsvc.model import Node, Pod
from schedsvc.model_storage import CSIDriver, CSINode, StorageClass
from schedsvc.model_volume import PortworxVolume
from schedsvc.plugins import node_volume_limits
from schedsvc.plugins.node_volume_limits import ERR_REASON_MAX_VOLUME_COUNT, driver_not_installed
from tests.builders import run_filter
from tests.builders.volume_plugins import (
    claim_volume,
    csi_pv,
    disk_volume,
    make_csi_node,
    make_pvc,
    pod_with_volumes,
    volume_snapshot,
)

NODE = "node-for-max-pd-test-1"
EBS = "ebs.csi.aws.com"
V135, V137 = Features(EmulatedVersion.V1_35), Features(EmulatedVersion.V1_37)


def verdict(
    pod: Pod, csi_node: CSINode | None, drivers: list[CSIDriver], features: Features,
    placed: list[Pod] = (),  # type: ignore[assignment]
) -> tuple[str, Code | None]:
    pvs = [csi_pv(f"csi-{EBS}-{j}", EBS) for j in range(4)]
    pvcs = [make_pvc(f"csi-{EBS}-{j}", volume_name=f"csi-{EBS}-{j}") for j in range(4)]
    snap = volume_snapshot(
        [Node(NODE)], placed=[(p, NODE) for p in placed], pvs=pvs, pvcs=pvcs,
        classes=[StorageClass("csi-sc", provisioner=EBS)],
        csi_nodes=[csi_node] if csi_node else [], drivers=drivers,
    )
    out = run_filter(node_volume_limits.new(None, features), pod, snap)
    assert out is not None  # PreFilter does not skip a pod with a claim
    if out.feasible[0]:
        return "", None
    reason = out.reasons[0][0]
    return reason, out.result.reason_codes[reason]


NEW = pod_with_volumes("p", claim_volume(f"csi-{EBS}-0"))
NO_CSI_DRIVER = make_csi_node(NODE, {})
PREVENT = CSIDriver(EBS, prevent_pod_scheduling_if_missing=True)
GATE = [
    pytest.param(V137, NO_CSI_DRIVER, [CSIDriver(EBS)], ("", None),
                 id="gate enabled - allow scheduling when CSIDriver exists but "
                    "PreventPodSchedulingIfMissing is not set"),
    pytest.param(V137, NO_CSI_DRIVER, [PREVENT],
                 (driver_not_installed(EBS), Code.UNSCHEDULABLE),
                 id="gate enabled - fail when driver not installed and "
                    "PreventPodSchedulingIfMissing is true"),
    pytest.param(V135, NO_CSI_DRIVER, [PREVENT], ("", None),
                 id="gate disabled - skip driver presence check "
                    "(regardless of CSIDriver presence)"),
    pytest.param(V137, make_csi_node(NODE, {EBS: 2}), [PREVENT], ("", None),
                 id="gate enabled - driver installed within limit"),
    pytest.param(V137, NO_CSI_DRIVER, [], ("", None),
                 id="gate enabled - allow scheduling when CSIDriver object missing"),
    pytest.param(V137, None, [PREVENT], (driver_not_installed(EBS), Code.UNSCHEDULABLE),
                 id="ours: no CSINode at all is a driver not installed"),
]


@pytest.mark.parametrize(("features", "csi_node", "drivers", "want"), GATE)
def test_volume_limit_scaling_gate(
    features: Features, csi_node: CSINode | None, drivers: list[CSIDriver],
    want: tuple[str, Code | None],
) -> None:
    assert verdict(NEW, csi_node, drivers, features) == want


def test_the_driver_check_comes_before_the_limits() -> None:
    """A full node whose CSINode lacks the driver reports the driver, not the count."""
    full = make_csi_node(NODE, {"other": 0})
    assert verdict(NEW, full, [PREVENT], V137) == (driver_not_installed(EBS), Code.UNSCHEDULABLE)


PX = disk_volume("px", portworx_volume=PortworxVolume("px-1"))
PX_OTHER = disk_volume("px", portworx_volume=PortworxVolume("px-2"))
MIGRATED = {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/portworx-volume"}


@pytest.mark.parametrize(
    ("features", "annotations", "want"),
    [
        pytest.param(V137, {}, (ERR_REASON_MAX_VOLUME_COUNT, Code.UNSCHEDULABLE),
                     id="1.37: Portworx always migrated"),
        pytest.param(V135, {}, ("", None), id="1.35: not migrated without the annotation"),
        pytest.param(V135, MIGRATED, (ERR_REASON_MAX_VOLUME_COUNT, Code.UNSCHEDULABLE),
                     id="1.35: migrated with the annotation"),
    ],
)
def test_portworx_migration_per_release(
    features: Features, annotations: dict[str, str], want: tuple[str, Code | None]
) -> None:
    csi_node = make_csi_node(NODE, {"pxd.portworx.com": 1}, annotations)
    placed = [pod_with_volumes("e", PX_OTHER)]
    assert verdict(pod_with_volumes("p", PX), csi_node, [], features, placed) == want
