"""Fields of a pod kube-scheduler acts on and schedsvc does not model: refused or reported.

A pod to schedule that uses one of them would get an answer kube would not give (a scheduling
gate that keeps it pending, resource claims, ...). Volumes are no longer among them: they are
converted (kube_volumes.py), and a source we do not know is refused there by name. By default
the reader refuses such a field with a KubeObjectError naming the JSON path and why; with
`ignore_unmodelled=True` it drops the field, schedules without it, and counts it in a
LoadReport, so the difference is visible, never silent.
docs/kube-fields.md lists every field kube's default plugins read and what we do with it.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .kube_json import KubeObjectError, as_list, as_object, join, object_parts

__all__ = [
    "IgnoredField",
    "LoadReport",
    "FieldPolicy",
    "UnmodelledFieldWarning",
    "audit_pending_pod",
]

SCHEDULING_GATES = "SchedulingGates keeps the pod out of scheduling until every gate is removed"
RESOURCE_CLAIMS = (
    "DynamicResources allocates the claims' devices from ResourceSlices and filters nodes by them"
)
DELETING = "kube-scheduler does not schedule a pod that is being deleted"
_DECLARED = (
    "kube-scheduler v1.37's NodeDeclaredFeatures filter places the pod only on nodes declaring "
    "the feature {} in status.declaredFeatures, which we do not model"
)
# (the field as reported, the feature kube infers from it: component-helpers v0.37.2
# nodedeclaredfeatures/features, the only ones whose InferForScheduling is not always false)
RESTART_ALL_CONTAINERS = _DECLARED.format("RestartAllContainersOnContainerExits")
HOST_NETWORK_USER_NAMESPACES = _DECLARED.format("UserNamespacesHostNetworkSupport")
BIND_MOUNT_OPTIONS = _DECLARED.format("VolumeBindMountOptions")
STATUS_RESOURCES = (
    "kube scores a pending pod with its status resources (in-place resize) but filters it on "
    "its spec"
)


class UnmodelledFieldWarning(UserWarning):
    """Fields were ignored in the lenient mode and no LoadReport was given to hold them."""


@dataclass(slots=True)
class IgnoredField:
    field: str  # the field, list indexes elided: spec.volumes[].persistentVolumeClaim
    why: str
    count: int = 0  # occurrences
    pods: int = 0  # distinct pods
    first: str = ""  # the JSON path of the first occurrence


@dataclass(slots=True)
class LoadReport:
    """What a read left out. Fields ignored in the lenient mode, pods kube-scheduler does not
    see (Succeeded/Failed: its informer filters them out), object kinds nothing reads. Meant to
    ride along with whatever a reader returns (nodes, pods, namespaces, budgets, ...)."""

    ignored: dict[str, IgnoredField] = field(default_factory=dict)
    terminal_pods: int = 0
    unused_kinds: Counter[str] = field(default_factory=Counter)
    _pods_seen: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def ignore(self, name: str, why: str, path: str, pod: str) -> None:
        entry = self.ignored.get(name)
        if entry is None:
            entry = self.ignored[name] = IgnoredField(name, why, first=path)
        entry.count += 1
        if (name, pod) not in self._pods_seen:
            self._pods_seen.add((name, pod))
            entry.pods += 1

    def render(self) -> str:
        lines = []
        for e in sorted(self.ignored.values(), key=lambda e: e.field):
            lines.append(
                f"ignored {e.field}: {e.count} time(s) in {e.pods} pod(s), first at {e.first} "
                f"({e.why})"
            )
        if self.terminal_pods:
            lines.append(
                f"left out {self.terminal_pods} Succeeded/Failed pod(s), as kube-scheduler does"
            )
        if self.unused_kinds:
            kinds = ", ".join(f"{k} ({n})" for k, n in sorted(self.unused_kinds.items()))
            lines.append(f"not used: {kinds}")
        return "\n".join(lines)


@dataclass(slots=True)
class FieldPolicy:
    """Strict (the default) refuses an unmodelled field; lenient records it in `report`."""

    ignore_unmodelled: bool = False
    report: LoadReport | None = None

    def unmodelled(self, name: str, why: str, path: str, pod: str) -> None:
        if not self.ignore_unmodelled:
            raise KubeObjectError(
                path,
                f"not modelled: {why} (load with ignore_unmodelled=True to schedule "
                "without it; the difference is then reported)",
            )
        if self.report is None:
            warnings.warn(
                f"{path}: ignored, not modelled: {why}", UnmodelledFieldWarning, stacklevel=4
            )
            return
        self.report.ignore(name, why, path, pod)


def audit_pending_pod(obj: Mapping[str, Any], path: str, policy: FieldPolicy, pod: str) -> None:
    """Apply `policy` to every unmodelled field of a pod to be scheduled (no spec.nodeName).

    A pod already on a node is not audited: these fields change only where the pod itself can
    go (gates, resource claims), and the pods we schedule are audited, so a bound pod's gates
    or resource claims cannot change our answer for them.
    """
    meta, spec, status = object_parts(obj, path)
    if meta.get("deletionTimestamp") is not None:
        policy.unmodelled(
            "metadata.deletionTimestamp", DELETING, join(path, "metadata.deletionTimestamp"), pod
        )
    if as_list(spec.get("schedulingGates"), join(path, "spec.schedulingGates")):
        policy.unmodelled(
            "spec.schedulingGates", SCHEDULING_GATES, join(path, "spec.schedulingGates"), pod
        )
    if as_list(spec.get("resourceClaims"), join(path, "spec.resourceClaims")):
        policy.unmodelled(
            "spec.resourceClaims", RESOURCE_CLAIMS, join(path, "spec.resourceClaims"), pod
        )
    _audit_declared_features(spec, path, policy, pod)
    for key in ("containerStatuses", "initContainerStatuses"):
        list_path = join(path, f"status.{key}")
        for i, cs in enumerate(as_list(status.get(key), list_path)):
            cs = as_object(cs, f"{list_path}[{i}]")
            for sub in ("resources", "allocatedResources"):
                if cs.get(sub) is not None:
                    policy.unmodelled(
                        f"status.{key}[].{sub}", STATUS_RESOURCES, f"{list_path}[{i}].{sub}", pod
                    )


def _audit_declared_features(
    spec: Mapping[str, Any], path: str, policy: FieldPolicy, pod: str
) -> None:
    """What makes kube v1.37's NodeDeclaredFeatures require a node feature (its PreFilter
    skips every other pod): a restart rule RestartAllContainers, hostNetwork with
    hostUsers: false, a volumeMount's bindMountOptions."""
    if spec.get("hostNetwork") is True and spec.get("hostUsers") is False:
        policy.unmodelled(
            "spec.hostUsers", HOST_NETWORK_USER_NAMESPACES + " (hostNetwork with hostUsers: false)",
            join(path, "spec.hostUsers"), pod,
        )
    for key in ("containers", "initContainers", "ephemeralContainers"):
        list_path = join(path, f"spec.{key}")
        for i, c in enumerate(as_list(spec.get(key), list_path)):
            c = as_object(c, f"{list_path}[{i}]")
            rules_path = f"{list_path}[{i}].restartPolicyRules"
            if key != "ephemeralContainers":
                for j, rule in enumerate(as_list(c.get("restartPolicyRules"), rules_path)):
                    rule = as_object(rule, f"{rules_path}[{j}]")
                    if rule.get("action") == "RestartAllContainers":
                        policy.unmodelled(
                            f"spec.{key}[].restartPolicyRules[].action: RestartAllContainers",
                            RESTART_ALL_CONTAINERS, f"{rules_path}[{j}].action", pod,
                        )
            mounts_path = f"{list_path}[{i}].volumeMounts"
            for j, m in enumerate(as_list(c.get("volumeMounts"), mounts_path)):
                m = as_object(m, f"{mounts_path}[{j}]")
                if as_list(m.get("bindMountOptions"), f"{mounts_path}[{j}].bindMountOptions"):
                    policy.unmodelled(
                        f"spec.{key}[].volumeMounts[].bindMountOptions", BIND_MOUNT_OPTIONS,
                        f"{mounts_path}[{j}].bindMountOptions", pod,
                    )
