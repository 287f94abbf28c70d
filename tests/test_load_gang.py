"""The load client's gang workload (workloads/gang.yaml, workload_groups.py): pods stamped into
PodGroups, the PodGroups sent before their pods, requests cut at group boundaries, and a run
against a server with GenericWorkload on placing gangs whole or not at all."""

from __future__ import annotations

import pytest

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.load import RunOptions, run
from schedsvc_client.workload import CreatePods, WorkloadError, load_workload
from schedsvc_client.workload_groups import (
    PodGroups,
    batches_keeping_groups,
    parse_pod_groups,
    requests_by_group,
)
from tests.builders.pod_groups import gang_config

TINY = {"nodes": "20", "initPods": "8", "pods8": "16", "pods100": "100", "bigGang": "20",
        "noFit": "10", "noFitGang": "10"}


def test_pods_are_stamped_into_pod_groups_of_the_ops_size() -> None:
    w = load_workload("gang", "small", TINY)
    assert w.feature_gates == "GenericWorkload=true"
    ops = [op for op in w.ops if isinstance(op, CreatePods)]
    assert [(op.groups.size, op.groups.min_count) for op in ops if op.groups] == [
        (8, 8), (8, 8), (100, 100), (20, 20), (10, 10)]
    pods = list(ops[1].pods(2))
    assert [p.scheduling_group.pod_group_name for p in pods] == ["op2-g0"] * 8 + ["op2-g1"] * 8
    assert ops[1].groups is not None
    groups = list(ops[1].groups.objects(2, len(pods)))
    assert [(g.name, g.namespace, g.spec.scheduling_policy.gang.min_count) for g in groups] == [
        ("op2-g0", "default", 8), ("op2-g1", "default", 8)]


def test_requests_hold_whole_groups() -> None:
    pods = [pb.Pod(uid=str(i)) for i in range(20)]
    cut = [len(r) for r in requests_by_group(pods, PodGroups(8, 8), 7)]
    assert cut == [8, 8, 4]  # one group per request when a group exceeds the batch size
    assert [len(r) for r in requests_by_group(pods, PodGroups(3, 3), 7)] == [6, 6, 6, 2]


def test_a_basic_policy_and_bad_fields() -> None:
    basic = parse_pod_groups({"size": 4, "policy": "basic"}, "w", "ns")
    assert basic == PodGroups(4, None, "ns")
    assert next(basic.objects(0, 4)).spec.scheduling_policy.HasField("basic")
    for raw, field in [({"size": 0}, "w.size"), ({"size": 2, "minCount": 0}, "w.minCount"),
                       ({"size": 2, "policy": "basic", "minCount": 1}, "w.minCount"),
                       ({"size": 2, "policy": "x"}, "w.policy"), ({"size": 2, "extra": 1}, "w")]:
        with pytest.raises(ValueError, match=field):
            parse_pod_groups(raw, "w", "")


def test_a_workload_file_with_bad_pod_groups_names_the_op(tmp_path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text("workloadTemplate:\n  - {opcode: createPods, count: 2, podGroups: {size: -1},\n"
                 "     podTemplate: {spec: {containers: [{name: c}]}}}\n")
    with pytest.raises(WorkloadError, match=r"workloadTemplate\[0\]\.podGroups\.size"):
        load_workload(str(f))


def test_a_gang_run_places_groups_whole_or_not_at_all(make_server) -> None:
    """20 nodes of 4 CPU (40 pods of 100m each): the 8 warm-up pods, 16 in gangs of 8, 100 in
    one gang of 100 and 20 in one of 20 fit (144 of 800); the gang of 10 pods of 5 CPU fits
    nowhere: its first member's FitError, the other nine the group's status."""
    w = load_workload("gang", "small", TINY)
    server, _ = make_server(gang_config(), seed=1)
    r = run(RunOptions(workload=w, target=f"127.0.0.1:{server.port}", batch_size=50,
                       progress=False))
    assert (r.pods, r.scheduled, r.unschedulable) == (146, 136, 10)
    reasons = dict(r.top_reasons)
    # the nine never tried: the group's status as it was before PodGroupPostFilter
    assert reasons.get("minCount (10) cannot be satisfied: 0 scheduled, 9 remaining") == 9


def test_replay_batches_never_split_a_group() -> None:
    """`schedsvc-load replay --batch-size` cuts between groups only: a group's members that
    follow one another stay in one request, however long it is."""
    def p(uid: str, group: str = "") -> pb.Pod:
        pod = pb.Pod(uid=uid, name=uid, namespace="default")
        if group:
            pod.scheduling_group.pod_group_name = group
        return pod

    pods = [p("a"), p("g0", "g"), p("g1", "g"), p("g2", "g"), p("b"), p("c"), p("h0", "h")]
    got = [[q.uid for q in b] for b in batches_keeping_groups(pods, 2)]
    assert got == [["a", "g0", "g1", "g2"], ["b", "c"], ["h0"]]
