"""VolumeBinding's PreFilter: the pod's claims (kube's podHasPVCs) and their classification
(GetPodVolumeClaims): fully bound, unbound with delayed binding, or unbound immediate.

Claim names are computed from the pod itself every time (an ephemeral volume's claim is
`<pod>-<volume>`), never kept in per-shape state shared by pods of one shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...framework.storage import StorageState
from ...model import Pod
from ...model_storage import (
    WAIT_FOR_FIRST_CONSUMER,
    PersistentVolumeClaim,
)

__all__ = [
    "ClaimError",
    "ERR_UNBOUND_IMMEDIATE",
    "PodClaims",
    "has_claims",
    "pod_claims",
]

ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
_CLAIM_KINDS = ("persistentVolumeClaim", "ephemeral")


@dataclass(frozen=True, slots=True)
class PodClaims:
    """PreFilter's state: the bound claims and the delayed unbound claims, in the pod's volume
    order (kube's podVolumeClaims). `memo` keeps what Filter works out over every row, which
    Score and Reserve read again (the storage does not change within a cycle)."""

    bound: tuple[PersistentVolumeClaim, ...]
    delayed: tuple[PersistentVolumeClaim, ...]
    memo: dict[object, object] = field(default_factory=dict, compare=False)

    @property
    def all_bound(self) -> bool:
        return not self.delayed


def has_claims(pod: Pod) -> bool:
    """Whether VolumeBinding reads anything of the pod: a PVC or a generic ephemeral volume."""
    return any(v.kind in _CLAIM_KINDS for v in pod.volumes)


def _lookup(pod: Pod, storage: StorageState) -> list[PersistentVolumeClaim] | str:
    """podHasPVCs: each claim, or the UnschedulableAndUnresolvable reason of the first bad one."""
    out: list[PersistentVolumeClaim] = []
    for v in pod.volumes:
        if v.kind not in _CLAIM_KINDS:
            continue
        name = v.claim(pod.name)
        ephemeral = v.kind == "ephemeral"
        pvc = storage.pvcs.get(f"{pod.namespace}/{name}")
        if pvc is None:
            if ephemeral:
                return ("waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{name}"')
            return f'persistentvolumeclaim "{name}" not found'
        if pvc.phase == "Lost":
            return (f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                    f'"{pvc.volume_name}"')
        if pvc.deleting:
            return f'persistentvolumeclaim "{name}" is being deleted'
        if ephemeral and (not pvc.controller_uid or pvc.controller_uid != pod.uid):
            return (f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
                    f"{pod.namespace}/{pod.name} (pod is not owner)")
        out.append(pvc)
    return out


@dataclass(frozen=True, slots=True)
class ClaimError:
    """kube's Error from GetPodVolumeClaims (PreFilter returns it as status Error)."""

    message: str


def _is_delayed(pvc: PersistentVolumeClaim, storage: StorageState) -> bool | ClaimError:
    """IsDelayBindingMode: the claim's class exists and waits for the first consumer; a class
    with no volumeBindingMode ("", kube's nil) is an Error."""
    name = pvc.class_name()
    if not name:
        return False
    sc = storage.classes.get(name)
    if sc is not None and not sc.volume_binding_mode:
        return ClaimError(f'VolumeBindingMode not set for StorageClass "{name}"')
    return sc is not None and sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER


_LAST = "volume-binding-last-pod"


def pod_claims(pod: Pod, storage: StorageState) -> PodClaims | str | ClaimError | None:
    """PreFilter's classification, the same object for PreScore and Reserve of the same pod
    (and its memo with it) while the storage is unchanged."""
    hit = storage.derived.get(_LAST)
    if (
        isinstance(hit, tuple) and hit[0] is pod and hit[1] is storage
        and hit[2] == storage.generation
    ):
        found: PodClaims | str | ClaimError | None = hit[3]
        return found
    found = _classify(pod, storage)
    # with its storage: the result's memo is written in place, so a fork's storage keeps its own
    storage.derived[_LAST] = (pod, storage, storage.generation, found)
    return found


def _classify(pod: Pod, storage: StorageState) -> PodClaims | str | ClaimError | None:
    """PreFilter: None when the pod has no claim (Skip), a reason string for an
    UnschedulableAndUnresolvable verdict, a ClaimError for kube's Error, else the classified
    claims."""
    if not pod.volumes or not has_claims(pod):
        return None
    found = _lookup(pod, storage)
    if isinstance(found, str):
        return found
    bound: list[PersistentVolumeClaim] = []
    delayed: list[PersistentVolumeClaim] = []
    for pvc in found:
        if pvc.fully_bound():
            bound.append(pvc)
            continue
        is_delayed = _is_delayed(pvc, storage)
        if isinstance(is_delayed, ClaimError):
            return is_delayed
        if is_delayed and not pvc.volume_name:
            delayed.append(pvc)
        else:  # immediate, a missing or empty class, or prebound but not bind-completed
            return ERR_UNBOUND_IMMEDIATE
    return PodClaims(tuple(bound), tuple(delayed))
