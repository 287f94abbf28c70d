"""The GangScheduling plugin in a profile's `plugins` (kube v1.37.2's applyFeatureGates adds it
to the default multiPoint set when GenericWorkload is on).

It has no Filter or Score: its PreEnqueue (a gang below minCount waits) and Permit (members
wait for minCount) are what schedsvc's pod group cycle does whole. So a profile may name it,
and must leave it as kube's default leaves it: enabled at both points with the gate on, at
neither with it off. kube accepts the other two mixes (measured with the oracle's `plugins`
mode: with the gate off an enabled GangScheduling runs its PreEnqueue and Permit on pods no
group cycle schedules; with it on and the plugin disabled kube logs "GenericWorkload is
enabled, but GangScheduling plugin is not set" and runs group cycles without it), and what
kube then decides is not modelled here, so they are refused.
"""

from __future__ import annotations

from ..errors import ConfigError
from ..framework.feature import Features
from .plugin_sets import PluginSets

__all__ = ["GANG_SCHEDULING", "check_gang_scheduling"]

GANG_SCHEDULING = "GangScheduling"
_POINTS = ("preEnqueue", "permit")  # the points of it that a profile can turn off


def _enabled_at(point: str, sets: PluginSets, multipoint: list[tuple[str, int]]) -> bool:
    """kube's expansion for one point: named there, or in multiPoint and not disabled there."""
    enabled, disabled = sets.get(point, ([], set()))
    if any(n == GANG_SCHEDULING for n, _ in enabled):
        return True
    if "*" in disabled or GANG_SCHEDULING in disabled:
        return False
    return any(n == GANG_SCHEDULING for n, _ in multipoint)


def check_gang_scheduling(
    sets: PluginSets, multipoint: list[tuple[str, int]], features: Features, where: str
) -> None:
    """ConfigError unless GangScheduling is enabled at preEnqueue and permit exactly when the
    GenericWorkload gate is on."""
    on = features.generic_workload
    for point in _POINTS:
        if _enabled_at(point, sets, multipoint) == on:
            continue
        if on:
            raise ConfigError(f"{where}.plugins.{point}", (
                f"GangScheduling must stay enabled at {point} with --feature-gates "
                "GenericWorkload=true: kube-scheduler would run pod group cycles without "
                "it, which schedsvc does not model"))
        raise ConfigError(f"{where}.plugins.{point}", (
            "GangScheduling needs --feature-gates GenericWorkload=true: with the gate off "
            f"kube-scheduler would run its {point} on pods scheduled one by one, which "
            "schedsvc does not model"))
