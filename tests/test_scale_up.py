"""The scale_up step (engine/simulate/scale_up.py, estimate.py): the autoscaler's binpacking
estimate on resource-only pods (worked by hand, as binpacking_estimator_test.go's cases), and
the answer k checked on twin clusters with the real calls: with k template nodes every
pending pod schedules, with k-1 one does not. Unhelpable pods are set aside; the fork and
the cluster are left as they were."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from schedsvc.engine.cluster import Cluster
from schedsvc.engine.schedule_one import Placement
from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.engine.simulate.estimate import binpacking_estimate, lower_bound
from schedsvc.engine.simulate.node_steps import new_nodes
from schedsvc.engine.simulate.scale_up import scale_up
from schedsvc.engine.simulate.steps import ScaleUp, ScaleUpResult
from schedsvc.model import (
    LabelSelector,
    Node,
    Outcome,
    Pod,
    PreemptionPolicy,
    TopologySpreadConstraint,
)
from tests.builders.clusters import cluster_of
from tests.builders.domain import node, pod
from tests.builders.fingerprint import fingerprint, snapshot_state

GiB, MiB = 1 << 30, 1 << 20
HOST = "kubernetes.io/hostname"
NEVER = PreemptionPolicy.NEVER


def _pods(n: int, cpu: int, memory: int = 100 * MiB, prefix: str = "q", **kw: object) -> list[Pod]:
    """Pods that never preempt: the twin's real Schedule then runs no preemption (which draws
    from the tie-break rng), as the simulation runs none."""
    return [pod(f"{prefix}{i}", cpu=cpu, memory=memory, preemption_policy=NEVER, **kw)
            for i in range(n)]


ESTIMATES = [
    ("cpu bound: 2 pods of 350m per 1000m node", _pods(10, 350, 1000 * MiB),
     node("t", cpu=1000, memory=10 * GiB), 100, 5),
    ("memory bound: 2 pods of 3Gi per 8Gi node", _pods(10, 100, 3 * GiB),
     node("t", cpu=4000, memory=8 * GiB), 100, 5),
    ("pods-per-node bound: 2 pods per node", _pods(10, 50),
     node("t", cpu=10000, memory=10 * GiB, pods=2), 100, 5),
    ("the node limit stops the estimate", _pods(10, 350, 1000 * MiB),
     node("t", cpu=1000, memory=10 * GiB), 3, 3),
    ("decreasing order packs 600,500,500,400 into 2",
     [pod("a", cpu=400), pod("b", cpu=500), pod("c", cpu=600), pod("d", cpu=500)],
     node("t", cpu=1000), 100, 2),
    ("decreasing order: three 600s first, the 400s fill beside them (first fit would take 4)",
     _pods(3, 400, prefix="s") + _pods(3, 600, prefix="l"), node("t", cpu=1000), 100, 3),
    ("no pod fits an empty node: none", _pods(3, 2000), node("t", cpu=1000), 100, 0),
]


@pytest.mark.parametrize(
    ("pods", "template", "limit", "expected"), [c[1:] for c in ESTIMATES],
    ids=[c[0] for c in ESTIMATES],
)
def test_binpacking_estimate(pods: list[Pod], template: Node, limit: int, expected: int) -> None:
    c = cluster_of([])
    with c.fork() as f:
        nodes = new_nodes(f.snapshot, template, limit)
        assert binpacking_estimate(f, nodes, pods, lambda: True) == expected


def test_lower_bound_is_the_tightest_resource() -> None:
    t = node("t", cpu=1000, memory=10 * GiB, pods=110)
    assert lower_bound(_pods(10, 350, 1000 * MiB), t) == 4  # 3500m / 1000m
    assert lower_bound(_pods(10, 50), node("t", cpu=10000, pods=3)) == 4  # 10 pods / 3


def _full_cluster() -> Cluster:
    """Two 1000m nodes with 900m used each: a 300m pod fits neither, a 50m pod fits."""
    nodes = [node("n0", cpu=1000), node("n1", cpu=1000)]
    return cluster_of(nodes, [pod("b0", cpu=900, node_name="n0"),
                              pod("b1", cpu=900, node_name="n1")])


def _twin_places_all(pods: Sequence[Pod], template: Node, k: int) -> tuple[bool, list[Placement]]:
    """The real calls: Schedule the pods on the cluster as is, then k template nodes added
    with an update and the pods left scheduled in order."""
    c = _full_cluster()
    now, _ = c.schedule(list(pods))
    left = [p for p, r in zip(pods, now, strict=True) if r.outcome is not Outcome.SCHEDULED]
    c.update(SnapshotUpdate(upsert_nodes=new_nodes(c.snapshot, template, k)))
    later, _ = c.schedule(left)
    return all(r.outcome is Outcome.SCHEDULED for r in later), later


def _simulate(step: ScaleUp) -> ScaleUpResult:
    c = _full_cluster()
    before = fingerprint(c)
    with c.fork() as f:
        fork_before = snapshot_state(f.snapshot)
        res = scale_up(f, step, lambda: True)
        assert snapshot_state(f.snapshot) == fork_before  # a question: the fork is as it was
    assert fingerprint(c) == before
    return res


SPREAD = (TopologySpreadConstraint(
    1, HOST, "DoNotSchedule", LabelSelector(match_labels=(("app", "q"),))),)
K_CASES = [
    ("seven 300m pods, three per 1000m node", _pods(7, 300, labels={"app": "q"}),
     node("t", cpu=1000), 3),
    ("seven 300m pods on 2000m nodes", _pods(7, 300, labels={"app": "q"}),
     node("t", cpu=2000), 2),
    ("hostname spread puts one pod per new node whatever the room",
     _pods(7, 300, labels={"app": "q"}, topology_spread_constraints=SPREAD),
     node("t", cpu=4000), 7),
]


@pytest.mark.parametrize(("pods", "template", "k"), [c[1:] for c in K_CASES],
                         ids=[c[0] for c in K_CASES])
def test_k_is_minimal_on_a_twin(pods: list[Pod], template: Node, k: int) -> None:
    pods = [*pods, pod("small", cpu=50, preemption_policy=NEVER)]  # fits the cluster as it is
    res = _simulate(ScaleUp(tuple(pods), (template,), 20))
    assert [(p.pod_uid, p.node_name != "") for p in res.scheduled_now][-1] == ("small", True)
    est = res.templates[0]
    assert (est.new_nodes, est.fits, est.pending_pod_uids) == (k, True, ())
    assert est.new_node_names == tuple(f"t-{i}" for i in range(k))
    ok, placed = _twin_places_all(pods, template, k)
    assert ok
    assert [(p.pod_uid, p.node_name) for p in est.placements] == [
        (p.pod_uid, p.node_name) for p in placed
    ]
    assert not _twin_places_all(pods, template, k - 1)[0]


def test_unhelpable_pods_are_set_aside() -> None:
    pods = [*_pods(4, 300), pod("gpu", cpu=100, node_selector={"gpu": "yes"}),
            pod("huge", cpu=5000)]
    res = _simulate(ScaleUp(tuple(pods), (node("t", cpu=1000), node("g", cpu=8000,
                                                                     labels={"gpu": "yes"})), 10))
    small, big = res.templates
    assert (small.template, small.new_nodes, small.fits) == ("t", 2, True)
    assert small.unhelpable_pod_uids == ("gpu", "huge")
    # the gpu node takes every pod but none is 5000m: one node holds 4 x 300m + 100m
    # 1200m + 100m + 5000m on one 8000m node
    assert (big.template, big.new_nodes, big.fits, big.unhelpable_pod_uids) == ("g", 1, True, ())


def test_not_enough_new_nodes_leaves_pods_pending() -> None:
    pods = _pods(7, 300)
    res = _simulate(ScaleUp(tuple(pods), (node("t", cpu=1000),), 2))
    est = res.templates[0]
    assert (est.new_nodes, est.fits, est.pending_pod_uids) == (2, False, ("q6",))
    assert est.new_node_names == ("t-0", "t-1")
