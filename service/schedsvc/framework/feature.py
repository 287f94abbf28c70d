"""Which kube-scheduler release's semantics a server follows (`--emulated-version`), and what
that switches: kube's `plugins/feature.Features`, the flags its plugin factories receive.

kube-scheduler v1.37.2 is the default; 1.35 gives v1.35.4's decisions, which the shared
recordings hold. The differences are measured in tools/kube-oracle/FINDINGS.md and listed in
docs/differences.md. Everything reads the version from the configuration (ProfileConfig's
`features`, handed to each plugin's constructor): no global state.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..errors import ConfigError

__all__ = [
    "DEFAULT_EMULATED_VERSION",
    "DEFAULT_FEATURES",
    "EmulatedVersion",
    "Features",
    "parse_emulated_version",
]


class EmulatedVersion(enum.Enum):
    """A kube-scheduler minor release whose decisions we reproduce (its patch release in
    `kube`)."""

    V1_35 = "1.35"
    V1_37 = "1.37"

    @property
    def kube(self) -> str:
        return {"1.35": "v1.35.4", "1.37": "v1.37.2"}[self.value]


DEFAULT_EMULATED_VERSION = EmulatedVersion.V1_37


def parse_emulated_version(text: str, field: str = "--emulated-version") -> EmulatedVersion:
    """"1.37" or "1.35" (a leading "v" and a patch release of ours are accepted: "v1.35.4")."""
    raw = text.strip().removeprefix("v")
    for v in EmulatedVersion:
        if raw == v.value or raw == v.kube.removeprefix("v"):
            return v
    known = ", ".join(v.value for v in EmulatedVersion)
    raise ConfigError(
        field,
        f"unsupported version {text!r}: schedsvc reproduces kube-scheduler {known} "
        f"(default {DEFAULT_EMULATED_VERSION.value})",
    )


@dataclass(frozen=True, slots=True)
class Features:
    """What the emulated release changes, as named flags (kube's feature.Features)."""

    emulated_version: EmulatedVersion = DEFAULT_EMULATED_VERSION
    # kube's --feature-gates over the release's defaults: (gate, on) pairs, for the gates
    # below that name one (the oracle's 1.35 volume recording: 1.37 with two gates off)
    gates: tuple[tuple[str, bool], ...] = ()

    def _gate(self, name: str, default: bool) -> bool:
        for gate, on in self.gates:
            if gate == name:
                return on
        return default

    @property
    def balanced_allocation_scores_change(self) -> bool:
        """1.37: NodeResourcesBalancedAllocation scores 50 + (50 + with - without) / 2, the
        change in balance the pod makes; 1.35: the balance with the pod alone."""
        return self.emulated_version is EmulatedVersion.V1_37

    @property
    def preemption_reports_placement(self) -> bool:
        """1.37: a nomination's PostFilter message is "preemption: found a potential
        placement for pod on node N, preempting K victims"; 1.35: none."""
        return self.emulated_version is EmulatedVersion.V1_37

    @property
    def pdb_violation_stops_early(self) -> bool:
        """1.37's FilterVictimsWithPDBViolation: a pod's first budget taken below zero ends its
        check (the budgets after it are not spent); 1.35 spent every budget selecting it."""
        return self.emulated_version is EmulatedVersion.V1_37

    @property
    def node_name_filters_first(self) -> bool:
        """1.37's default profile runs NodeName before NodeUnschedulable."""
        return self.emulated_version is EmulatedVersion.V1_37

    @property
    def node_declared_features(self) -> bool:
        """The NodeDeclaredFeatures gate (GA in 1.37, off in 1.35): its Filter is in the
        default profile."""
        return self.emulated_version is EmulatedVersion.V1_37

    @property
    def storage_capacity_scoring(self) -> bool:
        """The StorageCapacityScoring gate (Beta and on in 1.37, Alpha in 1.35): VolumeBinding
        scores (0 without volumes) instead of skipping at PreScore."""
        return self._gate("StorageCapacityScoring", self.emulated_version is EmulatedVersion.V1_37)

    @property
    def volume_limit_scaling(self) -> bool:
        """The VolumeLimitScaling gate (Beta and on in 1.37, Alpha and off in 1.35):
        NodeVolumeLimits refuses a node without the CSI driver of a new volume when its
        CSIDriver sets preventPodSchedulingIfMissing."""
        return self._gate("VolumeLimitScaling", self.emulated_version is EmulatedVersion.V1_37)

    @property
    def generic_workload(self) -> bool:
        """The GenericWorkload gate (Beta and off in 1.37): a pod with spec.schedulingGroup is
        scheduled in its PodGroup's pod group cycle, GangScheduling's PlacementFeasible
        deciding (engine/pod_group_cycle.py). Off, such a pod is scheduled on its own, as kube
        does. Under 1.35 it is never on: 1.35's alpha gang API (v1alpha1) is not modelled."""
        return self.emulated_version is EmulatedVersion.V1_37 and self._gate(
            "GenericWorkload", False
        )

    @property
    def portworx_needs_migrated_annotation(self) -> bool:
        """1.35: NodeVolumeLimits counts Portworx volumes only on a node whose CSINode lists
        kubernetes.io/portworx-volume among its migrated plugins; 1.37 always migrates them."""
        return self.emulated_version is EmulatedVersion.V1_35


DEFAULT_FEATURES = Features()
