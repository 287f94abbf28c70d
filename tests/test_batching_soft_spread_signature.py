"""Divergences between batching on and off a hostile review of issue 16 found (soft-spread
signatures), each fixed in PodTopologySpread.sign_rescored. Expected values are those of the
unbatched engine (same config, same seed)."""

from __future__ import annotations

import pytest

from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.model import LabelSelector, Taint, Toleration, TopologySpreadConstraint
from tests.builders import make_pod, node
from tests.on_off_harness import both

WEB = LabelSelector(match_labels=(("app", "web"),))
ZONE = "topology.kubernetes.io/zone"


@pytest.mark.parametrize("disabled", ["NodeAffinity", "TaintToleration"])
def test_soft_spread_signature_covers_node_inclusion_inputs(disabled: str) -> None:
    """PodTopologySpread's ScheduleAnyway counts (nodeAffinityPolicy Honor by default,
    nodeTaintsPolicy Honor here) read the pod's node selector / tolerations. sign_rescored
    leaves them to NodeAffinity / TaintToleration; with that plugin disabled in the profile,
    a pod with a node selector and one without share a signature, and the second is hinted
    from the first one's domain totals."""
    cluster = [
        node(f"n{i}", labels={ZONE: "abc"[i % 3], **({"disk": "ssd"} if i % 3 == 0 else {})},
             taints=(Taint("t", "v", "NoSchedule"),) if i % 3 == 2 else ())
        for i in range(12)
    ]
    on_node = "n4" if disabled == "NodeAffinity" else "n5"  # a non-ssd / a tainted node
    bound = [make_pod(f"b{i}", {"cpu": 10, "labels": {"app": "web"}, "node_name": on_node,
                                "tolerations": (Toleration(operator="Exists"),)})
             for i in range(3)]
    soft = TopologySpreadConstraint(1, ZONE, "ScheduleAnyway", WEB,
                                    node_taints_policy="Honor")
    plain = {"cpu": 10, "memory": None, "labels": {"app": "web"},
             "topology_spread_constraints": (soft,)}
    if disabled == "NodeAffinity":
        other = {**plain, "node_selector": {"disk": "ssd"}}
    else:
        other = {**plain, "tolerations": (Toleration(key="t", operator="Exists"),)}
    cfg = {"percentageOfNodesToScore": 100, "profiles": [{
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"disabled": [{"name": disabled}]}}}]}
    pods = [make_pod("x0", other), make_pod("x1", plain), make_pod("x2", plain)]
    diffs, batched = both(cluster, [("update", SnapshotUpdate(upsert_pods=bound)),
                                    ("pods", pods)], cfg)
    assert batched >= 1
    # actual (on=batching): x1 or x2 lands elsewhere than the unbatched cycle puts it
    assert diffs == []


HOST = "kubernetes.io/hostname"
# the system default constraints (kube's systemDefaultConstraints) written out as a pod's own
AS_SYSTEM_DEFAULTS = (
    TopologySpreadConstraint(3, HOST, "ScheduleAnyway", WEB),
    TopologySpreadConstraint(5, ZONE, "ScheduleAnyway", WEB),
)


@pytest.mark.parametrize(("n", "pct"), [(9, 100), (150, None)])
@pytest.mark.parametrize("own_first", [True, False])
def test_own_constraints_equal_to_system_defaults_are_not_a_deployment_pod(
    n: int, pct: int | None, own_first: bool
) -> None:
    """Default configuration. A pod whose own ScheduleAnyway constraints equal the system
    defaults resolves to the same constraint list as a Deployment pod (default_selector), so
    sign_rescored gives both one signature. But kube's PreScore requires every topology key
    only for the pod's own constraints (requireAllTopologies): nodes without a zone label are
    ignored (score 0) for one and scored for the other. Hinting one from the other's window
    state moves placements and scores."""
    own = {"cpu": 100, "memory": None, "labels": {"app": "web"},
           "topology_spread_constraints": AS_SYSTEM_DEFAULTS}
    deployment = {"cpu": 100, "memory": None, "labels": {"app": "web"}, "default_selector": WEB}
    first, rest = (own, deployment) if own_first else (deployment, own)
    cluster = [node(f"n{i}", labels=({ZONE: "ab"[i % 2]} if i % 3 else {})) for i in range(n)]
    bound = [make_pod(f"b{i}", {"cpu": 10, "labels": {"app": "web"}, "node_name": f"n{i % 4}"})
             for i in range(6)]
    pods = [make_pod("x0", first)] + [make_pod(f"x{i}", rest) for i in range(1, 6)]
    cfg: dict[str, object] = {"profiles": [{"schedulerName": "default-scheduler"}]}
    if pct is not None:
        cfg["percentageOfNodesToScore"] = pct
    diffs, batched = both(cluster, [("update", SnapshotUpdate(upsert_pods=bound)),
                                    ("pods", pods)], cfg)
    # x0 is a run of its own; x1 starts the other kind's run, x2..x5 are hinted from it
    assert batched >= 4
    # before the fix, e.g. (9 nodes, own first): x1 off='n6' on='n4', x2 score 694 vs 695
    assert diffs == []
