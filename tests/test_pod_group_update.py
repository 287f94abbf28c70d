"""UpdateSnapshot with gang scheduling's objects, through the request handler (no gRPC):
PodGroups and Workloads kept by "namespace/name" and removed by it, duplicates in one request
refused, and a pod's spec.schedulingGroup immutable per uid as kube's pod update validation
keeps it; a rejected update changes nothing. The conversion cache keeps pods of different
groups apart."""

from __future__ import annotations

import pytest

from schedsvc.config import default_config
from schedsvc.engine.scheduler import Engine
from schedsvc.errors import InvalidArgument
from schedsvc.server.convert import Converter
from schedsvc.server.limits import Limits
from schedsvc.server.request_handler import RequestHandler
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node, pb_pod
from tests.builders.pod_groups import pb_basic_group, pb_gang, pb_template, pb_workload


def _handler() -> RequestHandler:
    return RequestHandler(Engine(default_config(), seed=1))


def _in_group(uid: str, group: str, node_name: str = "n1") -> pb.Pod:
    return pb_pod(uid, node_name=node_name,
                  scheduling_group=pb.PodSchedulingGroup(pod_group_name=group))


def test_pod_groups_and_workloads_are_kept_by_key_and_removed_by_it() -> None:
    h = _handler()
    h.update_snapshot(pb.UpdateSnapshotRequest(
        upsert_pod_groups=[pb_gang("g", 3, namespace="ml"), pb_basic_group("b")],
        upsert_workloads=[pb_workload("w", pb_template("t", 3))],
    ))
    snap = h.engine.cluster("default").snapshot
    assert sorted(snap.pod_groups) == ["default/b", "ml/g"]
    assert snap.pod_groups["ml/g"].min_count == 3
    assert list(snap.workloads) == ["default/w"]
    # an upsert replaces the object whole
    h.update_snapshot(pb.UpdateSnapshotRequest(upsert_pod_groups=[pb_gang("g", 5, namespace="ml")]))
    assert snap.pod_groups["ml/g"].min_count == 5
    h.update_snapshot(pb.UpdateSnapshotRequest(
        remove_pod_groups=["ml/g"], remove_workloads=["default/w"]))
    assert list(snap.pod_groups) == ["default/b"] and not snap.workloads


@pytest.mark.parametrize("request_", [
    pb.UpdateSnapshotRequest(upsert_pod_groups=[pb_gang("g", 1), pb_basic_group("g")]),
    pb.UpdateSnapshotRequest(upsert_workloads=[pb_workload("w", pb_template("t")),
                                               pb_workload("w", pb_template("u"))]),
], ids=["a PodGroup twice", "a Workload twice"])
def test_an_object_twice_in_one_request_is_refused(request_: pb.UpdateSnapshotRequest) -> None:
    h = _handler()
    with pytest.raises(InvalidArgument) as exc:
        h.update_snapshot(request_)
    assert exc.value.field.endswith("[1].name")
    assert "duplicate 'default/" in exc.value.description
    snap = h.engine.cluster("default").snapshot
    assert not snap.pod_groups and not snap.workloads


def test_a_known_pods_group_cannot_change_and_the_rejected_update_changes_nothing() -> None:
    h = _handler()
    h.update_snapshot(pb.UpdateSnapshotRequest(
        upsert_nodes=[pb_node("n1")], upsert_pods=[_in_group("p", "g1")]))
    with pytest.raises(InvalidArgument) as exc:
        h.update_snapshot(pb.UpdateSnapshotRequest(
            upsert_pod_groups=[pb_gang("g2", 1)], upsert_pods=[_in_group("p", "g2")]))
    assert exc.value.field == "upsert_pods[0].scheduling_group.pod_group_name"
    assert "field is immutable" in exc.value.description
    snap = h.engine.cluster("default").snapshot
    assert snap.pods["p"].pod.pod_group == "g1" and not snap.pod_groups
    # leaving the group is a change too
    with pytest.raises(InvalidArgument):
        h.update_snapshot(pb.UpdateSnapshotRequest(upsert_pods=[pb_pod("p", node_name="n1")]))


def test_a_group_may_change_with_the_pod_removed_first_or_on_a_replace() -> None:
    h = _handler()
    h.update_snapshot(pb.UpdateSnapshotRequest(
        upsert_nodes=[pb_node("n1")], upsert_pods=[_in_group("p", "g1")]))
    h.update_snapshot(pb.UpdateSnapshotRequest(
        remove_pods=["p"], upsert_pods=[_in_group("p", "g2")]))
    snap = h.engine.cluster("default").snapshot
    assert snap.pods["p"].pod.pod_group == "g2"
    h.update_snapshot(pb.UpdateSnapshotRequest(
        replace=True, upsert_nodes=[pb_node("n1")], upsert_pods=[_in_group("p", "g3")]))
    assert h.engine.cluster("default").snapshot.pods["p"].pod.pod_group == "g3"


def test_an_invalid_pod_group_in_an_update_is_refused_with_its_index() -> None:
    h = _handler()
    with pytest.raises(InvalidArgument) as exc:
        h.update_snapshot(pb.UpdateSnapshotRequest(
            upsert_pod_groups=[pb_gang("ok", 1), pb_gang("bad", 0)]))
    assert exc.value.field == "upsert_pod_groups[1].spec.scheduling_policy.gang.min_count"
    with pytest.raises(InvalidArgument) as exc:
        h.update_snapshot(pb.UpdateSnapshotRequest(remove_workloads=["nope"]))
    assert exc.value.field == "remove_workloads[0]"


def test_pods_differing_only_in_their_group_never_share_a_shape() -> None:
    """The whole-pod cache keys a pod by its serialized bytes but uid and name: the group is
    among those bytes (field 105), so two groups' pods are two shapes, and one group's pods
    one shape."""
    conv = Converter()
    a1, a2 = (conv.pod_from_pb(_in_group(u, "a", node_name=""), "p") for u in ("1", "2"))
    b = conv.pod_from_pb(_in_group("3", "b", node_name=""), "p")
    plain = conv.pod_from_pb(pb_pod("4"), "p")
    assert (a1.pod_group, b.pod_group, plain.pod_group) == ("a", "b", "")
    assert a1.shape is a2.shape
    assert len({id(a1.shape), id(b.shape), id(plain.shape)}) == 3


def test_each_pod_group_list_is_bounded_by_max_pdbs_per_update() -> None:
    h = RequestHandler(Engine(default_config(), seed=1), Limits(max_pdbs_per_update=1))
    h.update_snapshot(pb.UpdateSnapshotRequest(upsert_pod_groups=[pb_gang("a", 1)],
                                               remove_pod_groups=["default/b"]))
    for fname, items in (
        ("upsert_pod_groups", [pb_gang("a", 1), pb_gang("b", 1)]),
        ("remove_workloads", ["default/a", "default/b"]),
    ):
        with pytest.raises(InvalidArgument) as exc:
            h.update_snapshot(pb.UpdateSnapshotRequest(**{fname: items}))
        assert (exc.value.field, exc.value.description) == (fname, "at most 1 entries per request")
