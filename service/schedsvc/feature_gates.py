"""`--feature-gates` as kube-scheduler reads it: the gates the emulated release knows, with its
defaults, and the ones whose `true` this service refuses because it does not model them.

kube v1.37.2's defaults (pkg/features/kube_features.go): OpportunisticBatching Beta and on;
GenericWorkload Beta and off (the pod group cycle, issue 28); the workload gates that came in
1.36-1.37 Alpha (DRAWorkloadResourceClaims Beta) and off. v1.35.4 had only the first two, and
its GenericWorkload was the v1alpha1 gang API, which is not modelled: on there it is refused.
"""

from __future__ import annotations

from .errors import ConfigError
from .framework.feature import DEFAULT_EMULATED_VERSION, EmulatedVersion

__all__ = ["KNOWN_GATES", "NOT_MODELLED", "parse_feature_gates", "profile_gates"]

FLAG = "--feature-gates"

# every gate kube v1.37.2 lets a client name here, with its default
KNOWN_GATES: dict[str, bool] = {
    "OpportunisticBatching": True,
    "GenericWorkload": False,
    "TopologyAwareWorkloadScheduling": False,
    "CompositePodGroup": False,
    "PodGroupPreemptionPolicy": False,
    "DRAWorkloadResourceClaims": False,
    "WorkloadWithJob": False,
}
# gates v1.35.4 does not have (kube's flag refuses an unknown gate)
_SINCE_1_36 = frozenset(
    {
        "TopologyAwareWorkloadScheduling",
        "CompositePodGroup",
        "PodGroupPreemptionPolicy",
        "DRAWorkloadResourceClaims",
        "WorkloadWithJob",
    }
)
# on, these change what kube-scheduler decides in ways schedsvc does not reproduce
NOT_MODELLED: dict[str, str] = {
    "TopologyAwareWorkloadScheduling": "topology placements of pod groups (PlacementGenerate, "
    "PlacementScore)",
    "CompositePodGroup": "CompositePodGroup hierarchies (scheduling.k8s.io/v1alpha3)",
    "PodGroupPreemptionPolicy": "a PodGroup's own spec.preemptionPolicy",
    "DRAWorkloadResourceClaims": "a PodGroup's ResourceClaims (schedsvc models no DRA)",
}
# kube's gate dependencies (defaultKubernetesFeatureGateDependencies) among gates accepted on
_DEPENDS = {"WorkloadWithJob": ("GenericWorkload",)}


def _known(name: str, version: EmulatedVersion) -> bool:
    return name in KNOWN_GATES and not (
        version is EmulatedVersion.V1_35 and name in _SINCE_1_36
    )


def _check_on(gates: dict[str, bool], version: EmulatedVersion) -> None:
    """Refuse a gate turned on that schedsvc does not model, or whose dependency is off."""
    for name, reason in NOT_MODELLED.items():
        if gates[name]:
            raise ConfigError(
                FLAG, f"{name}=true is not supported: schedsvc does not model {reason}; "
                f"leave it off (kube's default)",
            )
    if gates["GenericWorkload"] and version is EmulatedVersion.V1_35:
        raise ConfigError(
            FLAG, "GenericWorkload=true is not supported with --emulated-version 1.35: "
            "v1.35's gang scheduling (the v1alpha1 Workload API and the GangScheduling gate) "
            "is not modelled; use 1.37",
        )
    for name, deps in _DEPENDS.items():
        off = [d for d in deps if not gates[d]]
        if gates[name] and off:
            raise ConfigError(
                FLAG, f"{name} is enabled, but depends on features that are disabled: "
                f"[{' '.join(off)}]",
            )


def parse_feature_gates(
    text: str, version: EmulatedVersion = DEFAULT_EMULATED_VERSION
) -> dict[str, bool]:
    """kube's --feature-gates syntax, "A=true,B=false", over the release's defaults."""
    gates = {k: v for k, v in KNOWN_GATES.items() if _known(k, version)}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or value.lower() not in ("true", "false"):
            raise ConfigError(FLAG, f"expected Name=true|false, got {part!r}")
        if not _known(name, version):
            raise ConfigError(FLAG, f"unknown feature gate {name!r} (kube {version.kube})")
        gates[name] = value.lower() == "true"
    full = {**KNOWN_GATES, **gates}
    _check_on(full, version)
    return gates


def profile_gates(gates: dict[str, bool]) -> tuple[tuple[str, bool], ...]:
    """What every profile's Features carries: the gates set away from their default, by name
    (none for the defaults, so a default server's configuration is kube's default one)."""
    return tuple(sorted((k, v) for k, v in gates.items() if KNOWN_GATES.get(k) != v))
