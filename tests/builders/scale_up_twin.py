"""scale_up's answers checked with the real calls on a twin cluster: the pending pods
Scheduled on the cluster as it is, then k nodes of the template added by an UpdateSnapshot
(named as a node group names them) and the pods left Scheduled in order."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schedsvc.engine.cluster import Cluster
from schedsvc.engine.schedule_one import Placement
from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.engine.simulate.node_steps import new_nodes
from schedsvc.engine.simulate.scale_up import scale_up
from schedsvc.engine.simulate.steps import ScaleUp, ScaleUpResult
from schedsvc.model import Node, Outcome, Pod
from tests.builders.fingerprint import fingerprint, snapshot_state

__all__ = ["simulated_scale_up", "twin_places_all"]


def twin_places_all(
    make: Callable[[], Cluster], pods: Sequence[Pod], template: Node, k: int
) -> tuple[bool, list[Placement]]:
    """Whether every pod left pending by the cluster as it is schedules with k template
    nodes added, and their placements. Pods should not preempt (the simulation does not)."""
    c = make()
    now, _ = c.schedule(list(pods))
    left = [p for p, r in zip(pods, now, strict=True) if r.outcome is not Outcome.SCHEDULED]
    c.update(SnapshotUpdate(upsert_nodes=new_nodes(c.snapshot, template, k)))
    later, _ = c.schedule(left)
    return all(r.outcome is Outcome.SCHEDULED for r in later), later


def simulated_scale_up(make: Callable[[], Cluster], step: ScaleUp) -> ScaleUpResult:
    """The step on a fork of a fresh cluster; the fork and the cluster are checked unchanged."""
    c = make()
    before = fingerprint(c)
    with c.fork() as f:
        fork_before = snapshot_state(f.snapshot)
        res = scale_up(f, step, lambda: True)
        assert snapshot_state(f.snapshot) == fork_before
    assert fingerprint(c) == before
    return res
