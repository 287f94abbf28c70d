"""The volumes of a pod NodeVolumeLimits counts on a node (kube's filterAttachableVolumes):
unique name ("<driver>/<handle>") -> CSI driver, from its claims' PVs (or, unbound, their
class's provisioner), its generic ephemeral claims and its migrated in-tree disks.
"""

from __future__ import annotations

from ...framework.feature import Features
from ...framework.storage import StorageState
from ...model import Pod
from ...model_storage import CSINode, PersistentVolumeClaim
from ...model_volume import Volume
from .translation import (
    CSI_DRIVER_OF_PLUGIN,
    TranslationError,
    disk_handle,
    migration_on,
    plugin_of_disk,
    pv_handle,
)

__all__ = ["AttachError", "UNBOUND_PREFIX", "attachable"]

# kube's randomVolumeIDPrefix: the handle of an unbound claim, never a real volume's handle
UNBOUND_PREFIX = "schedsvc-unbound-claim"


class AttachError(Exception):
    """The pod's volumes cannot be counted: `unresolvable` for a claim that does not exist
    (kube: UnschedulableAndUnresolvable), else kube's Error status."""

    def __init__(self, message: str, unresolvable: bool = False) -> None:
        super().__init__(message)
        self.unresolvable = unresolvable


def _from_class(
    pvc: PersistentVolumeClaim, storage: StorageState, csi_node: CSINode | None, features: Features
) -> tuple[str, str] | None:
    """kube's getCSIDriverInfoFromSC: an unbound claim counts for its class's provisioner."""
    class_name = pvc.class_name()
    sc = storage.classes.get(class_name) if class_name else None
    if sc is None:
        return None
    driver = sc.provisioner
    if driver in CSI_DRIVER_OF_PLUGIN:
        if not migration_on(driver, csi_node, features):
            return None
        driver = CSI_DRIVER_OF_PLUGIN[driver]
    return driver, f"{UNBOUND_PREFIX}-{pvc.namespace}/{pvc.name}"


def _claim_handle(
    pvc: PersistentVolumeClaim, storage: StorageState, csi_node: CSINode | None, features: Features
) -> tuple[str, str] | None:
    """kube's getCSIDriverInfo: the bound PV's, else (unbound, PV missing) the class's."""
    pv = storage.pvs.get(pvc.volume_name) if pvc.volume_name else None
    if pv is None:
        return _from_class(pvc, storage, csi_node, features)
    return pv_handle(pv, csi_node, features)


def _inline(v: Volume, csi_node: CSINode | None, features: Features) -> tuple[str, str] | None:
    """kube's checkAttachableInlineVolume: a migrated in-tree disk; a bad one is an Error."""
    if not migration_on(plugin_of_disk(v.disk), csi_node, features):
        return None
    try:
        return disk_handle(v.disk)
    except TranslationError as e:
        raise AttachError(f"converting volume({v.name}) from inline to csi: {e}") from e


def attachable(
    pod: Pod, new_pod: bool, storage: StorageState, csi_node: CSINode | None, features: Features,
    out: dict[str, str],
) -> None:
    """Add the pod's counted volumes to `out`. A missing claim fails only for the new pod (an
    existing pod's is not counted); an ephemeral claim the pod does not own fails for both."""
    for v in pod.volumes:
        if v.kind == "persistentVolumeClaim" or v.kind == "ephemeral":
            claim = v.claim(pod.name)
        else:
            found = _inline(v, csi_node, features)
            if found is not None and found[0] and found[1]:
                out[f"{found[0]}/{found[1]}"] = found[0]
            continue
        if not claim:
            raise AttachError("PersistentVolumeClaim had no name")
        pvc = storage.pvcs.get(f"{pod.namespace}/{claim}")
        if pvc is None:
            if new_pod:
                raise AttachError(
                    f"looking up PVC {pod.namespace}/{claim}: "
                    f'persistentvolumeclaim "{claim}" not found',
                    unresolvable=True,
                )
            continue
        if v.kind == "ephemeral" and (
            pvc.namespace != pod.namespace or not pvc.controller_uid
            or pvc.controller_uid != pod.uid
        ):
            raise AttachError(
                f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
                f"{pod.namespace}/{pod.name} (pod is not owner)"
            )
        found = _claim_handle(pvc, storage, csi_node, features)
        if found is not None and found[0] and found[1]:
            out[f"{found[0]}/{found[1]}"] = found[0]
