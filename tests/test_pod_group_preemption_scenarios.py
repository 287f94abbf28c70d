"""kube's workload-aware preemption scenarios end to end (v1.37.2 test/integration/scheduler/
preemption/podgroup/podgrouppreemption_test.go TestPodGroupPreemption), through the engine as
a client drives it: the initial pods are scheduled (or bound where kube binds them), then the
group is sent; when it waits on preemption the client evicts the victims (remove_pods) and
sends the group again, whose members then go through the whole filter stage (not their
nominated nodes first, as kube's second cycle); a member the
group's success left behind is sent again too. kube's expected sets: scheduled, preempted,
unschedulable, and the members nominated before they bound.

Rows left out: Topology-Aware and CompositePodGroup ones (not modelled), PodGroupPreemptionPolicy
on (refused), the mock Reserve plugin, pod-level resources. "Partial Preemption" ranks node1
first with a preset score plugin; here a preferred node affinity (weight 100) to node1 does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from schedsvc.engine.pod_group_result import GroupOutcome
from schedsvc.engine.scheduler import Cluster, SnapshotUpdate
from schedsvc.model import (
    Affinity,
    ContainerPort,
    LabelSelector,
    LabelSelectorRequirement,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Outcome,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodDisruptionBudget,
    PreemptionPolicy,
    PreferredSchedulingTerm,
    TopologySpreadConstraint,
    frozen_map,
)
from schedsvc.model_pod_group import PodGroup
from tests.builders import gang_cluster, group, node, pod

HOST = "kubernetes.io/hostname"
ANTI_APP = Affinity(pod_anti_affinity=PodAffinity(required=(PodAffinityTerm(
    HOST, LabelSelector(match_expressions=(LabelSelectorRequirement("app", "Exists"),))
),)))
PREFER_NODE1 = Affinity(node_affinity=NodeAffinity(preferred=(PreferredSchedulingTerm(
    100, NodeSelectorTerm((NodeSelectorRequirement(HOST, "In", ("node1",)),))
),)))
PORT_8080 = (ContainerPort(container_port=8080, host_port=8080),)
SPREAD = (TopologySpreadConstraint(
    2, HOST, "DoNotSchedule", LabelSelector(match_labels=(("app", "foo"),)), min_domains=10
),)


def low(name: str, cpu: float, prio: int, node_name: str = "", **kw: Any) -> Pod:
    """A pod requesting `cpu` CPUs (kube's Req), bound to `node_name` if given."""
    labels = kw.pop("labels", None)
    if labels is not None:
        kw["labels"] = frozen_map(labels)
    return pod(name, cpu=int(cpu * 1000), memory=None, priority=prio, node_name=node_name, **kw)


@dataclass
class Scenario:
    name: str
    nodes: list[tuple[str, float]]  # name, CPUs
    groups: list[PodGroup]
    initial: list[Pod]
    preemptors: list[Pod]
    scheduled: set[str]
    preempted: set[str] = field(default_factory=set)
    unschedulable: set[str] = field(default_factory=set)
    nominated: set[str] = field(default_factory=set)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    message: str = ""  # the group's, when it ends unschedulable


def _members(n: int, pg: str, cpu: float = 1, **kw: Any) -> list[Pod]:
    return [low(f"high-{i}", cpu, 100, pod_group=pg, **kw) for i in range(1, n + 1)]


def _lows(n: int, prio: int = 10, node_name: str = "", **kw: Any) -> list[Pod]:
    return [low(f"low-{i}", 1, prio, node_name, **kw) for i in range(1, n + 1)]


SCENARIOS = [
    Scenario("Full PodGroup Preemption", [("node1", 3)], [group("pg1", 100, 3)], _lows(3),
             _members(3, "pg1"), {"high-1", "high-2", "high-3"},
             {"low-1", "low-2", "low-3"}, nominated={"high-1", "high-2", "high-3"}),
    Scenario("Full PodGroup Preemption for basic policy", [("node1", 3)], [group("pg1", 100)],
             _lows(3), _members(3, "pg1"), {"high-1", "high-2", "high-3"},
             {"low-1", "low-2", "low-3"}),
    Scenario("Partial Preemption", [("node1", 2), ("node2", 2)], [group("pg1", 100, 3)],
             [low("low-1", 2, 10, "node1"), low("low-2", 1, 10, "node2")],
             _members(3, "pg1", affinity=PREFER_NODE1),
             {"high-1", "high-2", "high-3", "low-2"}, {"low-1"},
             nominated={"high-1", "high-2", "high-3"}),
    Scenario("Partial Preemption with basic policy", [("node1", 2), ("node2", 2)],
             [group("pg1", 100)],
             [low("low-1", 1, 10, "node1"), low("very-low-1", 1, 5, "node2")],
             _members(3, "pg1", affinity=PREFER_NODE1),
             {"high-1", "high-2", "high-3", "very-low-1"}, {"low-1"}),
    Scenario("PDB Violation Handling (Reprieve)", [("node1", 3)], [group("pg1", 100, 2)],
             [low("low-1", 1, 10, labels={"app": "foo"}),
              low("low-2", 1, 10, labels={"app": "foo"}), low("low-3", 1, 10)],
             _members(2, "pg1", cpu=0.5), {"high-1", "high-2", "low-1", "low-2"}, {"low-3"},
             nominated={"high-1", "high-2"},
             pdbs=[PodDisruptionBudget("foo-pdb", selector=LabelSelector((("app", "foo"),)))]),
    Scenario("Multi-node Preemption", [("node1", 2), ("node2", 2)], [group("pg1", 100, 4)],
             [low("low-1", 1, 10, "node1"), low("low-2", 1, 10, "node1"),
              low("low-3", 1, 10, "node2"), low("low-4", 1, 10, "node2")],
             _members(4, "pg1"), {f"high-{i}" for i in range(1, 5)},
             {f"low-{i}" for i in range(1, 5)}, nominated={f"high-{i}" for i in range(1, 5)}),
    Scenario("Insufficient Resources (No Preemption)", [("node1", 3)], [group("pg1", 100, 3)],
             [low("mid-1", 1, 500), *_lows(2)], _members(3, "pg1"),
             {"mid-1", "low-1", "low-2"}, unschedulable={"high-1", "high-2", "high-3"},
             message="minCount (3) cannot be satisfied: 0 scheduled, 2 remaining, "
             "deallocation and deletion of ResourceClaims completed, pod group preemption: "
             "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"),
    Scenario("Priority-based Victim Selection", [("node1", 3)], [group("pg1", 100, 2)],
             [low("mid-1", 1, 50), *_lows(2)], _members(2, "pg1"),
             {"high-1", "high-2", "mid-1"}, {"low-1", "low-2"}, nominated={"high-1", "high-2"}),
    Scenario("Preempt the whole PodGroup even if preempting a single Pod would suffice",
             [("node1", 3)], [group("pg1", 100, 1), group("pg2", 10, 3, whole=True)],
             _lows(3, pod_group="pg2"), _members(1, "pg1"), {"high-1"},
             {"low-1", "low-2", "low-3"}, nominated={"high-1"}),
    Scenario("Preempt the whole basic PodGroup with a PodGroup disruption mode",
             [("node1", 3)], [group("pg1", 100, 1), group("pg2", 10, whole=True)],
             _lows(3, pod_group="pg2"), _members(1, "pg1"), {"high-1"},
             {"low-1", "low-2", "low-3"}, nominated={"high-1"}),
    Scenario("PodGroup with PreemptNever preemption policy in all pods does not perform "
             "preemption, with PodGroupPreemptionPolicy disabled",
             [("node1", 3)], [group("pg1", 100, 3)], _lows(3),
             _members(3, "pg1", preemption_policy=PreemptionPolicy.NEVER),
             {"low-1", "low-2", "low-3"}, unschedulable={"high-1", "high-2", "high-3"},
             message="minCount (3) cannot be satisfied: 0 scheduled, 2 remaining, "
             "deallocation and deletion of ResourceClaims completed, pod group preemption: "
             "not eligible due to preemptionPolicy=Never."),
    Scenario("Gang scheduling: preemption with node resources", [("node1", 2), ("node2", 2)],
             [group("preemptor-pg", 100, 2)],
             [low("initial-pod", 2, 10, "node1", labels={"app": "initial"})],
             [low(f"preemptor-{i}", 2, 100, pod_group="preemptor-pg") for i in (1, 2)],
             {"preemptor-1", "preemptor-2"}, {"initial-pod"},
             nominated={"preemptor-1", "preemptor-2"}),
    Scenario("Gang scheduling: preemption with node resources, prioritizes reprieval of "
             "higher priority pods", [("node1", 2), ("node2", 2)],
             [group("preemptor-pg", 100, 2)],
             [low("initial-pod-1", 1, 5, "node1", labels={"app": "initial"}),
              low("initial-pod-2", 1, 10, "node1", labels={"app": "initial"})],
             [low(f"preemptor-{i}", 1, 100, pod_group="preemptor-pg",
                  node_selector={HOST: f"node{i}"}) for i in (1, 2)],
             {"preemptor-1", "preemptor-2", "initial-pod-2"}, {"initial-pod-1"},
             nominated={"preemptor-1", "preemptor-2"}),
    Scenario("Gang scheduling: preemption with pod anti-affinity constraints",
             [("node1", 2), ("node2", 2)], [group("preemptor-pg", 100, 2)],
             [low("initial-pod", 0.25, 10, "node1", labels={"app": "initial"})],
             [low(f"preemptor-{i}", 1.5, 100, pod_group="preemptor-pg", affinity=ANTI_APP)
              for i in (1, 2)],
             {"preemptor-1", "preemptor-2"}, {"initial-pod"},
             nominated={"preemptor-1", "preemptor-2"}),
    Scenario("Gang scheduling: preemption with pod node port", [("node1", 2), ("node2", 2)],
             [group("preemptor-pg", 100, 2)],
             [low("initial-pod", 0.25, 10, "node1", ports=PORT_8080)],
             [low(f"preemptor-{i}", 1.5, 100, pod_group="preemptor-pg", ports=PORT_8080)
              for i in (1, 2)],
             {"preemptor-1", "preemptor-2"}, {"initial-pod"},
             nominated={"preemptor-1", "preemptor-2"}),
    Scenario("Gang scheduling: preemption with pod topology spread constraints",
             [("node1", 16), ("node2", 16)], [group("preemptor-pg", 100, 2)],
             [low("initial-pod", 1, 10, "node1", labels={"app": "foo"})],
             [low(f"preemptor-{i}", 1, 100, pod_group="preemptor-pg", labels={"app": "foo"},
                  node_selector={HOST: "node1"}, topology_spread_constraints=SPREAD)
              for i in (1, 2)],
             {"preemptor-1", "preemptor-2"}, {"initial-pod"},
             nominated={"preemptor-1", "preemptor-2"}),
    Scenario("Gang scheduling: preemption with pod topology spread constraints, single "
             "reprieve", [("node1", 16), ("node2", 16)], [group("preemptor-pg", 100, 2)],
             [low("initial-pod", 1, 10, "node1", labels={"app": "foo"}),
              low("initial-pod-2", 1, 5, "node2", labels={"app": "foo"})],
             [low(f"preemptor-{i}", 1, 100, pod_group="preemptor-pg", labels={"app": "foo"},
                  node_selector={HOST: "node1"}, topology_spread_constraints=SPREAD)
              for i in (1, 2)],
             {"preemptor-1", "preemptor-2", "initial-pod-2"}, {"initial-pod"},
             nominated={"preemptor-1", "preemptor-2"}),
    Scenario("Binding first before preemption for gang policy", [("node1", 4)],
             [group("pg1", 100, 2)],
             [low("pg-pod-1", 1, 100, pod_group="pg1"), low("pg-pod-2", 1, 100, pod_group="pg1"),
              low("low-1", 1, 10)],
             _members(2, "pg1"), {"pg-pod-1", "pg-pod-2", "high-1", "high-2"}, {"low-1"}),
    Scenario("Binding first before preemption for basic policy", [("node1", 4)],
             [group("pg1", 100)],
             [low("pg-pod-1", 1, 100, pod_group="pg1"), low("pg-pod-2", 1, 100, pod_group="pg1"),
              low("low-1", 1, 10)],
             _members(2, "pg1"), {"pg-pod-1", "pg-pod-2", "high-1", "high-2"}, {"low-1"}),
]


def _schedule_initial(c: Cluster, pods: Sequence[Pod]) -> None:
    """kube's step 3: the initial pods scheduled (a group's members in their group cycle)."""
    pending = [p for p in pods if not p.node_name]
    if pending:
        out, _ = c.schedule(pending)
        assert all(p.outcome is Outcome.SCHEDULED for p in out), [p.message for p in out]


def _drive(c: Cluster, preemptors: Sequence[Pod]) -> tuple[set[str], set[str], str]:
    """The client's loop: send the group; evict the victims of a preemption and send it
    again; stop when every member is placed or a round changes nothing. The members
    nominated, the pods evicted, and the group's last message."""
    nominated: set[str] = set()
    evicted: set[str] = set()
    message = ""
    for _ in range(6):
        out, _ = c.schedule(list(preemptors))
        placed = {p.pod_uid for p in out if p.outcome is Outcome.SCHEDULED}
        g = out[0].group
        assert g is not None
        message = g.message
        if g.outcome is GroupOutcome.WAITING_ON_PREEMPTION:
            nominated |= {p.pod_uid for p in out if p.nominated_node_name}
            victims = {v.uid for v in g.victims}
            evicted |= victims
            c.update(SnapshotUpdate(remove_pods=sorted(victims)))
            continue
        if len(placed) == len(preemptors) or g.outcome is not GroupOutcome.SCHEDULED:
            break
    return nominated, evicted, message


@pytest.mark.parametrize("s", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_kube_pod_group_preemption_scenario(s: Scenario) -> None:
    c = gang_cluster(
        [node(n, cpu=int(cpu * 1000), memory=4 << 30, pods=32) for n, cpu in s.nodes],
        [p for p in s.initial if p.node_name], s.groups, s.pdbs,
    )
    _schedule_initial(c, s.initial)
    nominated, evicted, message = _drive(c, s.preemptors)
    assert evicted == s.preempted
    on_nodes = set(c.snapshot.pods)
    assert s.scheduled <= on_nodes
    assert not (s.unschedulable & on_nodes)
    assert s.nominated <= nominated
    if s.message:
        assert message == s.message


def test_the_second_cycle_places_each_member_where_preemption_made_room() -> None:
    """After the victims go, the members go through the whole filter stage (kube's second
    cycle: no nominated node first, docs/differences.md) and, preferring node1, land where the
    preemption made room; each nomination ends when its member is placed."""
    c = gang_cluster([node("node1", cpu=2000), node("node2", cpu=2000)],
                     [low("low-1", 2, 10, "node1"), low("low-2", 1, 10, "node2")],
                     [group("pg1", 100, 3)])
    members = _members(3, "pg1", affinity=PREFER_NODE1)
    first, _ = c.schedule(members)
    want = {p.pod_uid: p.nominated_node_name for p in first}
    assert want == {"high-1": "node1", "high-2": "node1", "high-3": "node2"}
    assert {v.uid for v in first[0].group.victims} == {"low-1"}
    assert {u: r.nominated_node_name for u, r in c.snapshot.nominated.items()} == want
    c.update(SnapshotUpdate(remove_pods=["low-1"]))
    second, _ = c.schedule(members)
    assert {p.pod_uid: p.node_name for p in second} == want
    assert second[0].group.outcome is GroupOutcome.SCHEDULED
    assert not c.snapshot.nominated


def test_a_dry_run_preemption_leaves_the_cluster_as_it_was() -> None:
    c = gang_cluster([node("node1", cpu=3000)], _lows(3, node_name="node1"),
                     [group("pg1", 100, 3)])
    before = {u: r.node_name for u, r in c.snapshot.pods.items()}
    out, _ = c.schedule(_members(3, "pg1"), dry_run=True)
    g = out[0].group
    assert g is not None and g.outcome is GroupOutcome.WAITING_ON_PREEMPTION
    assert {v.uid for v in g.victims} == {"low-1", "low-2", "low-3"}
    assert {u: r.node_name for u, r in c.snapshot.pods.items()} == before
    assert not c.snapshot.nominated


def test_members_do_not_count_each_others_nominations() -> None:
    """kube's nominator hands an in-flight member's nomination to the two-pass filter as its
    bare podRef (priority 0, no containers), so m1's nomination to n1 does not keep m0 off n1:
    m0 takes the emptier n1, m1 (2 CPUs) then fits nowhere, and the gang of 2 fails. Counting
    m1 there would have sent m0 to n2 and placed both."""
    c = gang_cluster(
        [node("n1", cpu=2000), node("n2", cpu=2000)],
        [low("keep", 1, 1000, "n2"), low("m1", 2, 100, pod_group="g", nominated_node_name="n1")],
        [group("g", 100, 2)],
    )
    out, _ = c.schedule([low("m0", 1, 100, pod_group="g"),
                         low("m1", 2, 100, pod_group="g", nominated_node_name="n1")])
    g = out[0].group
    assert g is not None and g.outcome is GroupOutcome.UNSCHEDULABLE
    assert out[1].message == "0/2 nodes are available: 2 Insufficient cpu."
    assert not (set(c.snapshot.pods) & {"m0", "m1"})


def test_the_second_cycle_does_not_try_the_nominated_node_first() -> None:
    """kube v1.37.2's second cycle after a group preemption runs its members as pods without
    nominatedNodeName (requeued while its status patches were in flight; kube-oracle's gang
    recordings, tests/data/gangs): a member nominated to node1 lands on node2 when node2 has
    become the better node by then (LeastAllocated: 2 of 4 CPUs free over 0 of 2). Trying the
    nominated node first would have kept it on node1."""
    c = gang_cluster([node("node1", cpu=2000), node("node2", cpu=4000)],
                     [low("low-1", 2, 10, "node1"), low("top", 4, 1000, "node2")],
                     [group("pg1", 100, 1)])
    (member,) = _members(1, "pg1", cpu=2)
    first, _ = c.schedule([member])
    assert first[0].nominated_node_name == "node1"  # only low-1 can go
    assert {v.uid for v in first[0].group.victims} == {"low-1"}
    c.update(SnapshotUpdate(remove_pods=["low-1", "top"]))  # evicted, and top went away too
    second, _ = c.schedule([member])
    assert second[0].node_name == "node2"
    assert not c.snapshot.nominated
