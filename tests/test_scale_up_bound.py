"""scale_up's lower bound (engine/simulate/node_bound.py), worked by hand: the summed requests
and the copies of one shape an empty template node takes, over the pods that must land on a
new node; and the answers it leads to, checked with the real calls on a twin (k template
nodes place every pending pod, k-1 do not), whichever first guess the probes start from."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedsvc.engine.cluster import Cluster
from schedsvc.engine.simulate import scale_up as su
from schedsvc.engine.simulate.node_bound import NodeBound, must_land_on_new_node, node_bound
from schedsvc.engine.simulate.node_steps import new_nodes
from schedsvc.engine.simulate.on_fork import pending_with_shapes
from schedsvc.engine.simulate.steps import ScaleUp
from schedsvc.model import (
    Affinity,
    ContainerPort,
    LabelSelector,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PreemptionPolicy,
    TopologySpreadConstraint,
)
from schedsvc.model_volume import Volume
from tests.builders.clusters import cluster_of
from tests.builders.domain import node, pod
from tests.builders.scale_up_twin import simulated_scale_up, twin_places_all

HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
NEVER = PreemptionPolicy.NEVER
APP_Q = LabelSelector(match_labels=(("app", "q"),))


def _pods(n: int, cpu: int, prefix: str = "q", **kw: object) -> list[Pod]:
    return [pod(f"{prefix}{i}", cpu=cpu, labels={"app": "q"}, preemption_policy=NEVER, **kw)
            for i in range(n)]


def _terms(required: bool) -> PodAffinity:
    term = PodAffinityTerm(HOST, APP_Q)
    return PodAffinity(required=(term,)) if required else PodAffinity()


def _spread(when: str) -> tuple[TopologySpreadConstraint, ...]:
    return (TopologySpreadConstraint(1, ZONE, when, APP_Q),)


LANDING = [
    ("a plain pod", pod("p"), True),
    ("required pod affinity: a pod placed elsewhere may let it onto a node it failed",
     pod("p", affinity=Affinity(pod_affinity=_terms(True))), False),
    ("pod affinity only preferred", pod("p", affinity=Affinity(pod_affinity=_terms(False))), True),
    ("required anti-affinity only forbids more as pods are added",
     pod("p", affinity=Affinity(pod_anti_affinity=_terms(True))), True),
    ("DoNotSchedule spreading: a pod placed elsewhere may raise the minimum",
     pod("p", topology_spread_constraints=_spread("DoNotSchedule")), False),
    ("ScheduleAnyway spreading only scores",
     pod("p", topology_spread_constraints=_spread("ScheduleAnyway")), True),
    ("no constraints of its own but a default selector: the profile's may be DoNotSchedule",
     pod("p", default_selector=APP_Q), False),
    ("its own ScheduleAnyway constraints replace the defaults",
     pod("p", default_selector=APP_Q, topology_spread_constraints=_spread("ScheduleAnyway")),
     True),
]


@pytest.mark.parametrize(("p", "expected"), [c[1:] for c in LANDING], ids=[c[0] for c in LANDING])
def test_must_land_on_new_node(p: Pod, expected: bool) -> None:
    assert must_land_on_new_node(p) is expected


def _one_full_node(*extra: Node) -> Cluster:
    return cluster_of([node("n0", cpu=1000), *extra], [pod("b0", cpu=1000, node_name="n0")])


T = node("t", cpu=1000)
EMPTY_DIR = (Volume(name="scratch", kind="other", other_source="emptyDir"),)
BOUNDS = [
    ("five 600m pods: their requests need 3 nodes, one per node needs 5",
     _pods(5, 600), (), NodeBound(5, True)),
    ("two shapes: 3 x 600m (one per node) and 2 x 300m (three per node); 2400m needs 3",
     _pods(3, 600) + _pods(2, 300, "s"), (), NodeBound(3, False)),
    ("hostname anti-affinity among themselves: one 100m pod per node",
     _pods(4, 100, affinity=Affinity(pod_anti_affinity=_terms(True))), (), NodeBound(4, False)),
    ("pods with volumes: no copies counted (Reserve binds claims), their requests need 3",
     _pods(5, 600, volumes=EMPTY_DIR), (), NodeBound(3, False)),
    ("a node of the cluster carries t-0 as its hostname: no copies counted",
     _pods(5, 600), (node("x", cpu=1000, labels={HOST: "t-0"}),), NodeBound(3, False)),
    ("DoNotSchedule spreading pods count in neither bound",
     _pods(5, 600, topology_spread_constraints=_spread("DoNotSchedule")), (), NodeBound(0, False)),
]


@pytest.mark.parametrize(("pods", "extra", "expected"), [c[1:] for c in BOUNDS],
                         ids=[c[0] for c in BOUNDS])
def test_node_bound(pods: list[Pod], extra: tuple[Node, ...], expected: NodeBound) -> None:
    with _one_full_node(*extra).fork() as f:
        nodes = new_nodes(f.snapshot, T, 10)
        assert node_bound(f, nodes, pending_with_shapes(pods), T, lambda: True) == expected


def _hostname_not(name: str) -> Affinity:
    term = NodeSelectorTerm(match_expressions=(NodeSelectorRequirement(HOST, "NotIn", (name,)),))
    return Affinity(node_affinity=NodeAffinity(required=(term,)))


@pytest.fixture
def estimates(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The binpacking estimates scale_up asks for (their answers, in order)."""
    seen: list[int] = []
    real = su.binpacking_estimate

    def counted(*a: object) -> int:
        seen.append(real(*a))  # type: ignore[arg-type]
        return seen[-1]

    monkeypatch.setattr(su, "binpacking_estimate", counted)
    return seen


MINIMAL = [
    ("one per node by the shape bound: 5, from the bound, the estimate never asked",
     _pods(5, 600), 5, False),
    ("t-1 refuses the pods: the bound (4) fails, the probes go up to 5",
     _pods(4, 600, affinity=_hostname_not("t-1")), 5, False),
    ("two shapes: the estimate is the first guess", _pods(3, 600) + _pods(2, 300, "s"), 3, True),
]


@pytest.mark.parametrize(("pods", "k", "estimated"), [c[1:] for c in MINIMAL],
                         ids=[c[0] for c in MINIMAL])
def test_k_is_minimal_on_a_twin(
    pods: list[Pod], k: int, estimated: bool, estimates: list[int]
) -> None:
    res = simulated_scale_up(_one_full_node, ScaleUp(tuple(pods), (T,), 20))
    est = res.templates[0]
    assert (est.new_nodes, est.fits, est.pending_pod_uids) == (k, True, ())
    assert bool(estimates) is estimated
    ok, placed = twin_places_all(_one_full_node, pods, T, k)
    assert ok
    assert [(p.pod_uid, p.node_name) for p in est.placements] == [
        (p.pod_uid, p.node_name) for p in placed
    ]
    assert not twin_places_all(_one_full_node, pods, T, k - 1)[0]


def _zones() -> Cluster:
    """Zone a: n0 with 300m free and one app=q pod; zone b: n1, full, no app=q pod."""
    return cluster_of(
        [node("n0", cpu=1000, labels={ZONE: "a"}), node("n1", cpu=1000, labels={ZONE: "b"})],
        [pod("b0", cpu=700, labels={"app": "q"}, node_name="n0"),
         pod("b1", cpu=1000, node_name="n1")],
    )


def test_spread_pods_may_land_on_the_cluster_after_a_new_node_so_their_requests_bound_nothing(
    estimates: list[int],
) -> None:
    """Three 200m pods spread by zone (maxSkew 1), new 250m nodes in zone b. Now: zone a has
    one pod, zone b none, so a fourth in a is skew 2 and b has no room. With one new node the
    first lands in b, the second in a (n0, skew 1), the third nowhere (a: skew 2, t-0 full);
    with two, the third goes to t-1 or n0. The answer is 2, although their 600m need 3 nodes
    of 250m (which the new nodes alone would)."""
    t = node("t", cpu=250, labels={ZONE: "b"})
    pods = _pods(3, 200, topology_spread_constraints=_spread("DoNotSchedule"))
    res = simulated_scale_up(_zones, ScaleUp(tuple(pods), (t,), 10))
    est = res.templates[0]
    assert (est.new_nodes, est.fits, est.pending_pod_uids) == (2, True, ())
    assert estimates == [2]  # not monotone: the estimate guessed (its third pod fit no new node)
    assert twin_places_all(_zones, pods, t, 2)[0]
    assert not twin_places_all(_zones, pods, t, 1)[0]


def _kind(kind: str, uid: str, cpu: int) -> Pod:
    """Pods that never preempt, of kinds the bound treats apart: plain and host ports (monotone,
    node-local), hostname anti-affinity (monotone, reads other nodes), zone spreading
    (DoNotSchedule: may land on the cluster after a new node)."""
    kw: dict[str, object] = {}
    if kind == "ports":
        kw["ports"] = (ContainerPort(8080, 8080),)
    elif kind == "anti":
        kw["affinity"] = Affinity(pod_anti_affinity=_terms(True))
    elif kind == "spread":
        kw["topology_spread_constraints"] = _spread("DoNotSchedule")
    return pod(uid, cpu=cpu, labels={"app": "q"}, preemption_policy=NEVER, **kw)


@settings(max_examples=40, deadline=None)
@given(
    specs=st.lists(st.tuples(st.sampled_from(("plain", "ports", "anti", "spread")),
                             st.sampled_from((200, 300, 600))), min_size=1, max_size=6),
    cpu=st.sampled_from((250, 600, 1000)),
)
def test_the_answer_places_every_pod_and_one_node_fewer_does_not(
    specs: list[tuple[str, int]], cpu: int,
) -> None:
    """On the twin: k nodes place every helpable pending pod, k-1 do not, whatever bound
    refuted k-1; with one node-local shape (the probes monotone), no fewer nodes do either.
    (The twin leaves the unhelpable pods out: they fail on the cluster as it is either way.)"""
    pods = [_kind(kind, f"q{i}", c) for i, (kind, c) in enumerate(specs)]
    t = node("t", cpu=cpu, labels={ZONE: "b"})
    res = simulated_scale_up(_zones, ScaleUp(tuple(pods), (t,), 8))
    est = res.templates[0]
    oversized = {p.uid for p in pods if p.containers[0].requests["cpu"] > cpu}
    assert set(est.unhelpable_pod_uids) <= oversized  # those pending, if any
    helped = [p for p in pods if p.uid not in est.unhelpable_pod_uids]
    if not helped:
        return
    if not est.fits:
        assert not twin_places_all(_zones, helped, t, 8)[0]
        return
    ok, placed = twin_places_all(_zones, helped, t, est.new_nodes)
    assert ok
    assert [(p.pod_uid, p.node_name) for p in est.placements] == [
        (p.pod_uid, p.node_name) for p in placed
    ]
    single = len(set(specs)) == 1 and specs[0][0] in ("plain", "ports")
    for k in range(0 if single else max(est.new_nodes - 1, 0), est.new_nodes):
        assert not twin_places_all(_zones, helped, t, k)[0]
