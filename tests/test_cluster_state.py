"""What a cluster holds follows what clients put in it (issue #13, defects 2, 4 and 5).

- Read-only requests (Explain, dry-run Schedule) change nothing: no resource column, no cluster.
- Interned names (resources, taints, label keys and values, images, host ports) are dropped
  when the nodes and pods that used them are gone, and a churned cluster decides exactly as a
  fresh one holding the same nodes and pods.
- Usage is checked at validation: no INTERNAL, no wrapped sum, and a rejected update changes
  nothing, not even a node upserted before the offending pod.
- The nominated-pods two-pass never touches a pod the client sent, whatever its uid.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from schedsvc.framework.snapshot import Snapshot
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node, pb_pod
from tests.support import WAIT, Servers, snapshot_pods


def _interned(snap: Snapshot) -> dict[str, int]:
    """Counted from attributes the snapshot had before compaction existed, so this reads the
    same on old code."""
    return {
        "resources": len(snap.resource_index),
        "resource_columns": int(snap.allocatable.shape[1]),
        "taints": len(snap.taint_list),
        "label_keys": len(snap.labels),
        "label_values": sum(len(c.vocab) for c in snap.labels.values()),
        "images": len(snap.image_rows),
        "host_ports": sum(len(ips) for ips in snap.host_ports.values()),
    }


# ---- read-only requests ---------------------------------------------------------------------
def test_explain_and_dry_run_add_no_column_and_create_no_cluster(servers: Servers) -> None:
    server, stub, _ = servers.start()
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster="c", upsert_nodes=[pb_node(f"n{i}") for i in range(20)]), timeout=WAIT)
    snap = server.engine.clusters()["c"].snapshot
    before, gen = _interned(snap), snap.generation
    for r in range(4):
        pod = pb_pod(f"x{r}")
        pod.containers[0].requests.update({f"example.com/r{r}-{j}": "1" for j in range(30)})
        if r % 2:
            resp = stub.Explain(pb.ExplainRequest(cluster="c", pod=pod), timeout=WAIT)
            # a resource no node has fails everywhere, as kube's Insufficient
            assert not any(n.feasible for n in resp.nodes)
            assert resp.message.startswith("0/20 nodes are available: 20 Insufficient example.com/")
        else:
            out = stub.Schedule(pb.ScheduleRequest(cluster="c", pods=[pod], dry_run=True),
                                timeout=WAIT)
            assert out.placements[0].outcome == pb.Placement.UNSCHEDULABLE
    assert _interned(server.engine.clusters()["c"].snapshot) == before
    assert server.engine.clusters()["c"].snapshot.generation == gen
    # read-only requests and Schedule on names the server does not hold create nothing, and
    # answer as an empty cluster would (kube's ErrNoNodesAvailable)
    exp = stub.Explain(pb.ExplainRequest(cluster="nowhere", pod=pb_pod("p")), timeout=WAIT)
    assert list(exp.nodes) == []
    for dry in (True, False):
        s = stub.Schedule(pb.ScheduleRequest(cluster="nowhere", pods=[pb_pod("p")],
                                             dry_run=dry), timeout=WAIT)
        assert s.placements[0].outcome == pb.Placement.UNSCHEDULABLE
        assert s.placements[0].message == "no nodes available to schedule pods"
    assert set(server.engine.clusters()) == {"c"}


# ---- interned names follow what the cluster holds ----------------------------------------
def _churn_node(i: int, gen: int) -> pb.Node:
    """A node whose every interned name is unique to this generation of it."""
    return pb.Node(
        name=f"n{i}",
        labels={"kubernetes.io/hostname": f"n{i}-g{gen}", f"k{gen}.example.com/x": "v",
                "zone": f"z{i % 3}"},
        taints=[pb.Taint(key=f"t{gen}", value=f"v{i}", effect="PreferNoSchedule")],
        allocatable={"cpu": "4", "memory": "8Gi", "pods": "110", f"example.com/g{gen}": "2"},
        images=[pb.ContainerImage(names=[f"img{gen}-{i}:1"], size_bytes=300 * 1024 * 1024)],
    )


def _churn_pod(uid: str, node: str, gen: int) -> pb.Pod:
    pod = pb_pod(uid, node_name=node)
    pod.containers[0].ports.add(container_port=80, host_port=1000 + gen, host_ip=f"10.0.0.{gen}")
    pod.containers[0].requests[f"example.com/p{gen}"] = "1"
    return pod


def test_churn_frees_interned_names_and_decides_as_a_fresh_cluster(servers: Servers) -> None:
    server, stub, _ = servers.start()
    n = 12
    sizes = []
    for gen in range(200):
        stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
            cluster="churn", replace=gen % 50 == 0,
            upsert_nodes=[_churn_node(i, gen) for i in range(n)],
            remove_pods=[f"p{gen - 1}-{i}" for i in range(n)],
            upsert_pods=[_churn_pod(f"p{gen}-{i}", f"n{i}", gen) for i in range(n)],
        ), timeout=WAIT)
        sizes.append(_interned(server.engine.clusters()["churn"].snapshot))
    # what one generation holds: 4 base + 1 node + 1 pod resources, 1 taint per node, 3 label
    # keys, hostnames + 1 + zones values, an image per node, a host port per pod. Dead names
    # are kept until they are as many as live ones and at least 64 (amortized compaction), so
    # the bound is a constant, where without compaction they grow by a generation each time.
    last = sizes[-1]
    assert last["resources"] <= 6 + 64 + 1
    assert last["taints"] <= 2 * n + 64
    assert last["label_keys"] <= 3 + 64 + 1
    assert last["label_values"] <= 2 * (n + 1 + 3) + 64 * 3 + 64
    assert last["images"] == n
    assert last["host_ports"] == 1  # one (ip, port) per generation, all its pods share it
    # the churned cluster and a fresh one holding the same state give identical verdicts
    final = 199
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster="fresh", replace=True, upsert_nodes=[_churn_node(i, final) for i in range(n)],
        upsert_pods=[_churn_pod(f"p{final}-{i}", f"n{i}", final) for i in range(n)],
    ), timeout=WAIT)
    probes = [pb_pod("probe", cpu="3900m"), pb_pod("probe2")]
    probes[1].containers[0].requests[f"example.com/g{final}"] = "2"
    probes[1].containers[0].ports.add(container_port=80, host_port=1000 + final)
    probes[1].tolerations.add(key=f"t{final}", operator="Exists")
    probes[1].affinity.node_affinity.required_during_scheduling_ignored_during_execution \
        .node_selector_terms.add().match_expressions.add(
            key=f"k{final}.example.com/x", operator="In", values=["v"])
    for probe in probes:
        a = stub.Explain(pb.ExplainRequest(cluster="churn", pod=probe), timeout=WAIT)
        b = stub.Explain(pb.ExplainRequest(cluster="fresh", pod=probe), timeout=WAIT)
        assert a.nodes and list(a.nodes) == list(b.nodes)
        assert a.message == b.message


# ---- usage checked at validation -------------------------------------------------------------
def _code_and_state(stub: Any, req: pb.UpdateSnapshotRequest) -> tuple[grpc.StatusCode, Any]:
    try:
        stub.UpdateSnapshot(req, timeout=WAIT)
        code = grpc.StatusCode.OK
    except grpc.RpcError as err:
        code = err.code()
    return code, stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster=req.cluster))


def test_requests_summing_past_the_limit_are_invalid_and_change_nothing(
    servers: Servers,
) -> None:
    server, stub, _ = servers.start()
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster="o", upsert_nodes=[pb_node("n0", cpu="4")]), timeout=WAIT)
    before = stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster="o"))
    # one pod whose containers sum past int64
    big = pb.Pod(uid="big", node_name="n0", containers=[
        pb.Container(name="a", requests={"cpu": "4611686018427387904m"}),
        pb.Container(name="b", requests={"cpu": "4611686018427387904m"})])
    code, after = _code_and_state(stub, pb.UpdateSnapshotRequest(
        cluster="o", upsert_nodes=[pb_node("added-first")], upsert_pods=[big]))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert (after.generation, after.nodes, after.pods) == (
        before.generation, before.nodes, before.pods)
    # two pods each within the limit whose sum on one node is not
    half = f"{2**61}m"
    code, after = _code_and_state(stub, pb.UpdateSnapshotRequest(
        cluster="o", upsert_nodes=[pb_node("added-first")],
        upsert_pods=[pb_pod("w1", cpu=half, node_name="n0"),
                     pb_pod("w2", cpu=half, node_name="n0")]))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert (after.generation, after.nodes, after.pods) == (
        before.generation, before.nodes, before.pods)
    # the node's usage did not wrap: a 4-core pod still fits exactly, a 4001m one does not
    ok = stub.Schedule(pb.ScheduleRequest(cluster="o", dry_run=True, pods=[
        pb_pod("fits", cpu="4"), pb_pod("too-big", cpu="4001m")]), timeout=WAIT)
    assert [p.outcome for p in ok.placements] == [
        pb.Placement.SCHEDULED, pb.Placement.UNSCHEDULABLE]
    assert snapshot_pods(server, "o") == {}


@pytest.mark.parametrize(
    "where", ["requests", "overhead", "init", "allocatable", "explain", "sum"]
)
def test_huge_quantities_anywhere_are_invalid_argument_never_internal(
    servers: Servers, where: str
) -> None:
    _, stub, _ = servers.start()
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(upsert_nodes=[pb_node("n0")]), timeout=WAIT)
    huge = "9223372036854775807"
    pod = pb_pod("p")
    if where == "requests":
        pod.containers[0].requests["memory"] = huge
    elif where == "overhead":
        pod.overhead["cpu"] = f"{huge}m"
    elif where == "init":
        pod.init_containers.add(name="i", requests={"example.com/gpu": huge})
    elif where == "sum":  # each container within the limit, their sum not
        for i in range(5):
            pod.containers.add(name=f"c{i}", requests={"memory": str(2**61)})
    with pytest.raises(grpc.RpcError) as err:
        if where == "allocatable":
            stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
                upsert_nodes=[pb_node("n1", memory=huge)]), timeout=WAIT)
        elif where == "explain":
            pod.containers[0].requests["cpu"] = f"{huge}"
            stub.Explain(pb.ExplainRequest(pod=pod), timeout=WAIT)
        else:
            stub.Schedule(pb.ScheduleRequest(pods=[pod]), timeout=WAIT)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


# ---- nominated pods' two-pass -----------------------------------------------------------------
def test_a_uid_like_a_two_pass_temporary_is_never_touched(servers: Servers) -> None:
    """The two-pass once added and removed temporaries under "\\x00nominated\\x00" + uid; a
    client pod with that uid was deleted by it."""
    server, stub, _ = servers.start()
    victim = "\x00nominated\x00nom"
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster="n", replace=True,
        upsert_nodes=[pb_node("n0", cpu="1"), pb_node("n1", cpu="1")],
        upsert_pods=[pb_pod(victim, cpu="1", node_name="n0"),
                     pb_pod("nom", cpu="100m", nominated_node_name="n1", priority=10)],
    ), timeout=WAIT)
    r = stub.Schedule(pb.ScheduleRequest(cluster="n", pods=[pb_pod("q", cpu="1")]),
                      timeout=WAIT)
    # n0 is full (the victim), n1 is taken by the higher-priority nominated pod's 100m
    assert r.placements[0].outcome == pb.Placement.UNSCHEDULABLE
    # DefaultPreemption runs: no pod of lower priority than q's 0 is bound anywhere
    assert r.placements[0].message == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )
    assert snapshot_pods(server, "n") == {victim: "n0"}
    assert stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster="n")).pods == 1  # + nominated
    r = stub.Schedule(pb.ScheduleRequest(cluster="n", pods=[pb_pod("q2", cpu="1")]),
                      timeout=WAIT)
    assert r.placements[0].outcome == pb.Placement.UNSCHEDULABLE
    assert snapshot_pods(server, "n") == {victim: "n0"}
