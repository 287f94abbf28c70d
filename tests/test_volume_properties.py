"""Properties of the four volume plugins together, through the request handler as a client
drives it (issue 26): across requests of pods with claims (CSI PVs with and without node
affinity, WaitForFirstConsumer claims the CSI driver provisions, ReadWriteOncePod claims),
retries of a request (same uids), dry runs, removals, confirmations of the placements
(UpdateSnapshot, as kube's binder updates pods, claims and PVs) and preemption by
higher-priority pods with volumes, after every step: no PV is bound or assumed to two claims,
no node holds more of the driver's volumes than its CSINode allows, and no ReadWriteOncePod
claim is used by two pods. The checks read the snapshot only (tests/builders/volume_world.py),
and the last test shows they catch a profile without NodeVolumeLimits."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.v1 import schedule_pb2 as pb
from tests.builders.volume_world import World, claim, csi_pv, violations

NODES = 3
LIMIT = 2
CLAIMS = tuple(f"c{i}" for i in range(8))
MODES = ("ReadWriteOnce", "ReadWriteOncePod")

pv_hosts = st.lists(st.sampled_from(("n0", "n1", "n2", "")), max_size=6)
claim_modes = st.lists(st.sampled_from(MODES), min_size=len(CLAIMS), max_size=len(CLAIMS))
pod_specs = st.lists(
    st.tuples(st.lists(st.sampled_from(CLAIMS), min_size=1, max_size=3, unique=True),
              st.sampled_from((0, 0, 100))),
    min_size=1, max_size=4,
)
ACTIONS = ("schedule", "schedule", "dry_run", "retry", "remove", "bind", "add_pv")
steps = st.lists(st.tuples(st.sampled_from(ACTIONS), pod_specs), min_size=1, max_size=8)


def _world(hosts: list[str], modes: list[str]) -> World:
    w = World(NODES, LIMIT)
    w.add_pvs(*(csi_pv(f"pv{i}", f"h{i}", host, mode=MODES[i % 2]) for i, host in enumerate(hosts)))
    w.add_claims(*(claim(c, m) for c, m in zip(CLAIMS, modes, strict=True)))
    return w


def _retry(w: World, last: list[pb.Pod]) -> None:
    """The last request again, same uids: a pod still placed keeps its node."""
    before = {p.uid: w.live[p.uid].node_name for p in last if p.uid in w.live}
    out = w.schedule(last)
    for p in out:
        if p.pod_uid in before and not p.victims:
            assert p.outcome == pb.Placement.SCHEDULED, p
            assert p.node_name == before[p.pod_uid], p


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hosts=pv_hosts, modes=claim_modes, plan=steps)
def test_no_pv_twice_no_node_over_its_attach_limit_no_rwop_claim_shared(
    hosts: list[str], modes: list[str], plan: list[tuple[str, list[tuple[list[str], int]]]]
) -> None:
    w = _world(hosts, modes)
    last: list[pb.Pod] = []
    n = 0
    for action, specs in plan:
        if action == "retry" and last:
            _retry(w, last)
        elif action == "remove" and w.live:
            w.remove([sorted(w.live)[0]])
        elif action == "bind":
            w.bind()
        elif action == "add_pv":
            w.add_pvs(csi_pv(f"extra{n}", f"x{n}", f"n{n % NODES}"))
            n += 1
        else:
            pods = [w.pod(f"p{n + i}", claims, prio) for i, (claims, prio) in enumerate(specs)]
            n += len(pods)
            before = w.snapshot.storage.generation
            out = w.schedule(pods, dry_run=action == "dry_run")
            if action == "dry_run":
                assert all(not p.volume_bindings for p in out)
                assert w.snapshot.storage.generation == before  # a dry run assumes nothing
            else:
                last = pods
        assert violations(w.snapshot) == [], (action, violations(w.snapshot))
        taken = [(b.volume_name, b.claim) for p in w.live.values() for b in p.volume_bindings
                 if not b.provisioned]
        assert len({pv for pv, _ in taken}) == len(set(taken)), taken  # none assumed twice


def test_preemption_frees_a_rwop_claim_for_a_higher_priority_pod() -> None:
    """The property's preemption path does happen: the victim is evicted, the preemptor placed."""
    w = World(1, LIMIT)
    w.add_claims(claim("data", "ReadWriteOncePod"))
    (low,) = w.schedule([w.pod("low", ["data"])])
    assert low.outcome == pb.Placement.SCHEDULED
    out = w.schedule([w.pod("high", ["data"], priority=100)])
    assert [v.uid for v in out[0].victims] == ["low"]
    assert out[-1].outcome == pb.Placement.SCHEDULED and set(w.live) == {"high"}
    assert violations(w.snapshot) == []


def test_the_checks_catch_a_profile_without_node_volume_limits() -> None:
    """A planted bug: with NodeVolumeLimits' filter disabled, a third claim lands on a node
    whose CSINode allows two, and `violations` says so; with the plugin, it does not."""
    disabled = {"profiles": [{"schedulerName": "default-scheduler", "plugins": {
        "filter": {"disabled": [{"name": "NodeVolumeLimits"}]}}}]}
    for config, placed in (({}, 2), (disabled, 3)):
        w = World(1, LIMIT, config)
        w.add_claims(*(claim(c) for c in CLAIMS[:3]))
        out = w.schedule([w.pod(f"p{i}", [c]) for i, c in enumerate(CLAIMS[:3])])
        assert sum(p.outcome == pb.Placement.SCHEDULED for p in out) == placed
        assert bool(violations(w.snapshot)) == (placed > LIMIT), violations(w.snapshot)


def test_a_pv_two_pods_rely_on_stays_taken_when_the_first_goes() -> None:
    """Found by tests/plugins/test_volume_binding_properties.py: two pods of one request share
    claim c0, the first is removed before it is bound. The second still reports c0 -> pv0, so
    pv0 stays assumed for c0 (kube's assume cache would free it: docs/differences.md) and the
    next claim is provisioned instead."""
    w = World(1, 5)
    w.add_pvs(csi_pv("pv0", "h0", "n0"))
    w.add_claims(claim("c0"), claim("c1"))
    w.schedule([w.pod("p0", ["c0"]), w.pod("p1", ["c0"])])
    w.remove(["p0"])
    w.schedule([w.pod("p2", ["c1"])])
    taken = {(b.volume_name, b.claim) for p in w.live.values() for b in p.volume_bindings}
    assert taken == {("pv0", "default/c0"), ("", "default/c1")}
