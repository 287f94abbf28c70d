"""A profile that disables a plugin's PreFilter but keeps its Filter: kube v1.37.2's Filter
reads the PreFilter state and, not finding it, returns an Error status, which fails the pod
with the framework's wrapping ("running %q filter plugin: %w"); NodeAffinity and VolumeZone
recompute instead, and plugins whose Filter reads no state do not notice. The messages are
kube's getPreFilterState errors (fwk.ErrNotFound is "not found"), read from v1.37.2's
pkg/scheduler/framework/plugins/<plugin> (the same in v1.35.4) and checked whole with the
oracle: `tools/kube-oracle/bin/kube-oracle sequence --config <a profile disabling the plugin's
preFilter> --cases <3 nodes, one 100m pod> --print-pods true` gives each message below
(2026-11-26), and places the pod with NodeAffinity's or VolumeZone's preFilter disabled."""

from __future__ import annotations

import pytest

from schedsvc.model import Container, Node, Pod, frozen_map
from schedsvc.model_volume import GCEPersistentDisk
from schedsvc.plugins.volume_restrictions import ERR_REASON_DISK_CONFLICT
from tests.builders.clusters import cluster_of
from tests.builders.volume_plugins import disk_volume

ERRS = {
    "InterPodAffinity": 'error reading "PreFilterInterPodAffinity" from cycleState: not found',
    "NodeResourcesFit": 'error reading "PreFilterNodeResourcesFit" from cycleState: not found',
    "PodTopologySpread": 'reading "PreFilterPodTopologySpread" from cycleState: not found',
    "NodePorts": 'reading "PreFilterNodePorts" from cycleState: not found',
    "VolumeRestrictions": 'cannot read "PreFilterVolumeRestrictions" from cycleState',
    "VolumeBinding": "not found",
}
UNAFFECTED = ("NodeAffinity", "VolumeZone", "NodeVolumeLimits", "TaintToleration")


def _profile_without_pre_filter(plugin: str) -> dict[str, object]:
    return {"profiles": [{"schedulerName": "default-scheduler",
                          "plugins": {"preFilter": {"disabled": [{"name": plugin}]}}}]}


def _nodes(n: int = 3) -> list[Node]:
    return [Node(name=f"n{i}", allocatable={"cpu": 1000, "memory": 1 << 30, "pods": 10})
            for i in range(n)]


def _pod(uid: str, **extra: object) -> Pod:
    return Pod(uid=uid, name=uid, labels=frozen_map({"app": "a"}),
               containers=(Container(name="c", requests={"cpu": 100}),), **extra)  # type: ignore[arg-type]


@pytest.mark.parametrize("plugin", list(ERRS))
def test_a_filter_without_its_pre_filter_state_fails_the_pod_with_kubes_error(
    plugin: str,
) -> None:
    c = cluster_of(_nodes(), **_profile_without_pre_filter(plugin))
    (p,), _ = c.schedule([_pod("p")])
    assert (p.outcome.name, p.node_name) == ("UNSCHEDULABLE", "")
    assert p.message == f'running "{plugin}" filter plugin: {ERRS[plugin]}'
    assert p.nominated_node_name == "" and not p.victims  # an Error runs no PostFilter


@pytest.mark.parametrize("plugin", UNAFFECTED)
def test_plugins_that_recompute_or_read_no_state_still_place_the_pod(plugin: str) -> None:
    c = cluster_of(_nodes(), **_profile_without_pre_filter(plugin))
    (p,), _ = c.schedule([_pod("p")])
    assert p.outcome.name == "SCHEDULED" and p.node_name


def test_volume_restrictions_rejects_a_disk_conflict_before_it_errs() -> None:
    """kube's VolumeRestrictions.Filter checks inline disk conflicts before reading its state:
    where every node holds the disk, the pod gets the FitError, not the Error."""
    disk = disk_volume(gce_persistent_disk=GCEPersistentDisk("pd"))
    held = [_pod(f"h{i}", node_name=f"n{i}", volumes=(disk,)) for i in range(3)]
    c = cluster_of(_nodes(), held, **_profile_without_pre_filter("VolumeRestrictions"))
    (p,), _ = c.schedule([_pod("p", volumes=(disk,))])
    assert p.message.startswith(f"0/3 nodes are available: 3 {ERR_REASON_DISK_CONFLICT}.")
    c2 = cluster_of(_nodes(), held[:2], **_profile_without_pre_filter("VolumeRestrictions"))
    (q,), _ = c2.schedule([_pod("q", volumes=(disk,))])
    assert q.message == f'running "VolumeRestrictions" filter plugin: {ERRS["VolumeRestrictions"]}'
