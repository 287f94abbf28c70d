"""Tenancy is bounded (issue #13, defect 7): clusters are limited and can be deleted, every
repeated field has a count limit, node and namespace names are Kubernetes names, and the
per-cluster metric series are capped.

(Explain and dry runs on unknown names creating no cluster: test_cluster_state.py.)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from prometheus_client import CollectorRegistry

from schedsvc.config import default_config
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.model import Node
from schedsvc.observability.metrics import ClusterCollector
from schedsvc.server.limits import Limits
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node, pb_pod
from tests.builders.message_walk import fill_path, list_paths
from tests.builders.pod_groups import gang_config, pb_gang, pb_member, pb_template, pb_workload
from tests.builders.simulation import fake_simulate
from tests.support import WAIT, Servers


def _violation(err: grpc.RpcError) -> str:
    """The field a BadRequest names."""
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None
    for d in status.details:
        if d.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            br = error_details_pb2.BadRequest()
            d.Unpack(br)
            return str(br.field_violations[0].field)
    raise AssertionError("no BadRequest detail")


def _refused(call: Any, req: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        call(req, timeout=WAIT)
    return err.value


def test_max_clusters_and_delete_cluster(servers: Servers) -> None:
    server, stub, _ = servers.start(engine_options={"max_clusters": 2})
    first = [stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster=name, upsert_nodes=[pb_node("n0")]), timeout=WAIT) for name in ("a", "b")]
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster="a", upsert_pods=[pb_pod("bound", node_name="n0")]), timeout=WAIT)
    err = _refused(stub.UpdateSnapshot, pb.UpdateSnapshotRequest(
        cluster="c", upsert_nodes=[pb_node("n0")]))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "--max-clusters" in (err.details() or "")
    assert set(server.engine.clusters()) == {"a", "b"}
    # reads on a name the server does not hold answer as an empty cluster, and create nothing
    out = stub.Schedule(pb.ScheduleRequest(cluster="c", pods=[pb_pod("p")]), timeout=WAIT)
    assert out.placements[0].message == "no nodes available to schedule pods"
    assert set(server.engine.clusters()) == {"a", "b"}
    # deleting one frees its place; deleting it again is a no-op
    assert stub.DeleteCluster(pb.DeleteClusterRequest(cluster="a"), timeout=WAIT).deleted
    assert not stub.DeleteCluster(pb.DeleteClusterRequest(cluster="a"), timeout=WAIT).deleted
    resp = stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster="c", upsert_nodes=[pb_node("n0")]), timeout=WAIT)
    assert resp.nodes == 1
    assert set(server.engine.clusters()) == {"b", "c"}
    # a deleted cluster comes back as new: its pod and generations are gone
    stub.DeleteCluster(pb.DeleteClusterRequest(cluster="c"), timeout=WAIT)
    again = stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        cluster="a", upsert_nodes=[pb_node("n0")]), timeout=WAIT)
    assert (again.generation, again.nodes, again.pods) == (first[0].generation, 1, 0)
    # an over-long name is refused, as everywhere else
    err = _refused(stub.DeleteCluster, pb.DeleteClusterRequest(cluster="x" * 254))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and _violation(err) == "cluster"


def _repeated_request_fields() -> list[str]:
    """Every repeated field of every request message, read from the service descriptor, so a
    field added to the proto is a case here (and fails until it has a limit)."""
    service = pb.DESCRIPTOR.services_by_name["ScheduleService"]
    inputs = {m.input_type.name: m.input_type for m in service.methods}
    return sorted(
        f"{name}.{fd.name}" for name, msg in inputs.items() for fd in msg.fields if fd.is_repeated
    )


def _pdb(name: str) -> pb.PodDisruptionBudget:
    return pb.PodDisruptionBudget(name=name, selector=pb.LabelSelector(match_labels={"a": "b"}))


# a valid storage object of each kind, named `name`, by the request field that upserts it
_STORAGE: dict[str, Any] = {
    "upsert_persistent_volumes": lambda name: pb.PersistentVolume(name=name, other="nfs"),
    "upsert_persistent_volume_claims": lambda name: pb.PersistentVolumeClaim(name=name),
    "upsert_storage_classes": lambda name: pb.StorageClass(name=name),
    "upsert_csi_nodes": lambda name: pb.CSINode(name=name),
    "upsert_csi_drivers": lambda name: pb.CSIDriver(name=name),
    "upsert_csi_storage_capacities": lambda name: pb.CSIStorageCapacity(
        name=name, storage_class_name="sc"),
    "upsert_volume_attachments": lambda name: pb.VolumeAttachment(name=name),
}

# four of each (one above the limit of 3 set below); the request holds them in field `field`
_FOUR: dict[str, Any] = {
    "UpdateSnapshotRequest.upsert_nodes": [pb_node(f"m{i}") for i in range(4)],
    "UpdateSnapshotRequest.remove_nodes": [f"m{i}" for i in range(4)],
    "UpdateSnapshotRequest.upsert_pods": [pb_pod(f"p{i}", node_name="n0") for i in range(4)],
    "UpdateSnapshotRequest.remove_pods": [f"p{i}" for i in range(4)],
    "UpdateSnapshotRequest.upsert_namespaces": [pb.Namespace(name=f"ns{i}") for i in range(4)],
    "UpdateSnapshotRequest.upsert_pod_disruption_budgets": [_pdb(f"b{i}") for i in range(4)],
    "UpdateSnapshotRequest.remove_pod_disruption_budgets": [f"default/b{i}" for i in range(4)],
    "ScheduleRequest.pods": [pb_pod(f"s{i}") for i in range(4)],
    "SimulateRequest.steps": [pb.SimulationStep(remove_nodes=pb.RemoveNodesStep(names=["n0"]))
                              for _ in range(4)],
    **{f"UpdateSnapshotRequest.{f}": [f"ns/o{i}" for i in range(4)] for f in (
        "remove_persistent_volume_claims", "remove_csi_storage_capacities")},
    "UpdateSnapshotRequest.upsert_pod_groups": [pb_gang(f"g{i}", 1) for i in range(4)],
    "UpdateSnapshotRequest.remove_pod_groups": [f"default/g{i}" for i in range(4)],
    "UpdateSnapshotRequest.upsert_workloads": [
        pb_workload(f"w{i}", pb_template("t")) for i in range(4)],
    "UpdateSnapshotRequest.remove_workloads": [f"default/w{i}" for i in range(4)],
    "ExplainRequest.pod_group_members": [pb_member(f"m{i}", "g") for i in range(4)],
    **{f"UpdateSnapshotRequest.remove_{f}": [f"o{i}" for i in range(4)] for f in (
        "persistent_volumes", "storage_classes", "csi_nodes", "csi_drivers",
        "volume_attachments")},
    **{f"UpdateSnapshotRequest.{f}": [o(f"o{i}") for i in range(4)] for f, o in _STORAGE.items()},
}


@pytest.mark.parametrize("field", _repeated_request_fields())
def test_every_repeated_request_field_has_a_count_limit(
    servers: Servers, field: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert field in _FOUR, f"{field} is a repeated request field with no count limit tested"
    fake_simulate(monkeypatch)  # the limits are the server's: no engine run needed
    # every per-request count limit at 3; a group's Explain needs GenericWorkload
    server, stub, _ = servers.start(config=gang_config(), limits=Limits(
        max_simulation_steps=3, **{
            f.name: 3 for f in dataclasses.fields(Limits)
            if f.name.endswith(("_per_update", "_per_request"))}))
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(upsert_nodes=[pb_node("n0")]), timeout=WAIT)
    request, name = field.split(".")
    rpc = {"UpdateSnapshotRequest": stub.UpdateSnapshot, "ScheduleRequest": stub.Schedule,
           "SimulateRequest": stub.Simulate, "ExplainRequest": stub.Explain}
    build = getattr(pb, request)
    err = _refused(rpc[request], build(**{name: _FOUR[field]}))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _violation(err) == name
    assert server.engine.cluster("default").snapshot.pdbs == {}  # nothing half-applied
    # three are fine
    rpc[request](build(**{name: _FOUR[field][:3]}), timeout=WAIT)


# the objects a request carries, each valid as far as the checks before the count limit go
_OBJECTS: list[tuple[str, str, Any]] = [
    ("UpdateSnapshotRequest", "upsert_nodes", pb_node("n1")),
    ("UpdateSnapshotRequest", "upsert_pods", pb_pod("p", node_name="n0")),
    ("UpdateSnapshotRequest", "upsert_namespaces", pb.Namespace(name="ns")),
    ("UpdateSnapshotRequest", "upsert_pod_disruption_budgets", _pdb("b")),
    ("ScheduleRequest", "pods", pb_pod("p")),
    ("ExplainRequest", "pod", pb_pod("p")),
    ("ExplainRequest", "pod_group_members", pb_member("p", "g")),
    # a step's own lists and the pods and nodes inside steps: test_simulate_limits.py
    ("SimulateRequest", "steps", pb.SimulationStep()),
    *(("UpdateSnapshotRequest", f, o("o")) for f, o in _STORAGE.items()),
    ("UpdateSnapshotRequest", "upsert_pod_groups", pb_gang("g", 1)),
    ("UpdateSnapshotRequest", "upsert_workloads", pb_workload("w", pb_template("t"))),
]
_WALKED = [o for o in _OBJECTS if o[0] != "SimulateRequest"]


# objects with no repeated or map field at any depth (nothing to bound)
_NO_LISTS = frozenset({"upsert_csi_drivers", "upsert_volume_attachments"})


def _object_fields() -> list[str]:
    """Every message-typed field of every request message, from the descriptor."""
    service = pb.DESCRIPTOR.services_by_name["ScheduleService"]
    return sorted({
        f"{m.input_type.name}.{fd.name}" for m in service.methods
        for fd in m.input_type.fields if fd.message_type is not None
    })


def test_every_object_field_of_a_request_is_covered() -> None:
    assert sorted(f"{r}.{f}" for r, f, _ in _OBJECTS) == _object_fields()


@pytest.mark.parametrize("request_name,field,sample", _WALKED, ids=[
    f"{r}.{f}" for r, f, _ in _WALKED])
def test_lists_inside_objects_have_a_count_limit(
    servers: Servers, request_name: str, field: str, sample: Any
) -> None:
    """Every repeated or map field at any depth of every object a request carries (walked
    from the descriptor) is refused with one entry more than --max-items-per-field, naming
    the field, and the cluster is unchanged."""
    server, stub, _ = servers.start(limits=Limits(max_items_per_field=4))
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(upsert_nodes=[pb_node("n0")]), timeout=WAIT)
    rpc = {"UpdateSnapshotRequest": stub.UpdateSnapshot, "ScheduleRequest": stub.Schedule,
           "ExplainRequest": stub.Explain}[request_name]
    repeated = getattr(pb, request_name).DESCRIPTOR.fields_by_name[field].is_repeated
    paths = list_paths(sample.DESCRIPTOR)
    assert bool(paths) == (field not in _NO_LISTS)
    before = server.engine.cluster("default").snapshot.generation
    for path in paths:
        obj = type(sample)()
        obj.CopyFrom(sample)
        where = f"{field}[0]" if repeated else field
        where += fill_path(obj, path, 5)
        req = getattr(pb, request_name)(**{field: [obj] if repeated else obj})
        err = _refused(rpc, req)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, where
        assert _violation(err) == where
    assert server.engine.cluster("default").snapshot.generation == before


@pytest.mark.parametrize("name,ok", [
    ("node-1.example.com", True),
    ("n\x00", False),  # NUL
    ("Node", False),  # upper case
    ("n" * 253, True),  # no hostname label here: a label value holds 63 at most
    ("n" * 254, False),  # longer than a DNS subdomain
    ("n" * (1 << 20), False),  # 1 MiB
])
def test_node_names_are_dns_subdomains(servers: Servers, name: str, ok: bool) -> None:
    _, stub, _ = servers.start()
    node = pb.Node(name=name, allocatable={"cpu": "1", "pods": "110"})
    req = pb.UpdateSnapshotRequest(upsert_nodes=[node])
    if ok:
        assert stub.UpdateSnapshot(req, timeout=WAIT).nodes == 1
        return
    err = _refused(stub.UpdateSnapshot, req)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _violation(err) == "upsert_nodes[0].name"
    assert len(err.details() or "") < 1000  # the error does not echo a huge name back
    assert stub.UpdateSnapshot(pb.UpdateSnapshotRequest(), timeout=WAIT).nodes == 0


@pytest.mark.parametrize("name,ok", [
    ("team-a", True),
    ("ns\x00", False),
    ("a.b", False),  # a DNS label: no dots
    ("n" * 63, True),
    ("n" * 64, False),
    ("n" * (1 << 20), False),
])
def test_namespace_names_are_dns_labels(servers: Servers, name: str, ok: bool) -> None:
    _, stub, _ = servers.start()
    req = pb.UpdateSnapshotRequest(upsert_namespaces=[pb.Namespace(name=name)])
    if ok:
        stub.UpdateSnapshot(req, timeout=WAIT)
        return
    err = _refused(stub.UpdateSnapshot, req)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _violation(err) == "upsert_namespaces[0].name"


_BIG = "N" * (1 << 20) + " not a name!"


@pytest.mark.parametrize("budget,remove,where", [
    (pb.PodDisruptionBudget(name=_BIG), "", "upsert_pod_disruption_budgets[0].name"),
    (pb.PodDisruptionBudget(name="Budget"), "", "upsert_pod_disruption_budgets[0].name"),
    (pb.PodDisruptionBudget(name="b" * 254), "", "upsert_pod_disruption_budgets[0].name"),
    (pb.PodDisruptionBudget(name="b", namespace="a.b"), "",
     "upsert_pod_disruption_budgets[0].namespace"),
    (pb.PodDisruptionBudget(name="b", namespace=_BIG), "",
     "upsert_pod_disruption_budgets[0].namespace"),
    (pb.PodDisruptionBudget(name="b", disrupted_pods=["ok", "p" * 254]), "",
     "upsert_pod_disruption_budgets[0].disrupted_pods[1]"),
    (None, "default/" + _BIG, "remove_pod_disruption_budgets[0]"),
    (None, "Default/b", "remove_pod_disruption_budgets[0]"),
], ids=["1 MiB name", "upper case", "254 characters", "namespace with a dot",
        "1 MiB namespace", "disrupted pod name too long", "1 MiB removal", "bad removal"])
def test_pdb_names_are_kube_names(
    servers: Servers, budget: pb.PodDisruptionBudget | None, remove: str, where: str
) -> None:
    """A budget is named as kube names it, and a bad one changes nothing, not even the node
    upserted before it in the same request; the error never echoes a huge value back."""
    server, stub, _ = servers.start()
    req = pb.UpdateSnapshotRequest(
        upsert_nodes=[pb_node("n0")],
        upsert_pod_disruption_budgets=[budget] if budget is not None else [],
        remove_pod_disruption_budgets=[remove] if remove else [])
    err = _refused(stub.UpdateSnapshot, req)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _violation(err) == where
    assert len(err.details() or "") < 1000
    assert server.engine.find("default") is None  # not even created
    # the longest names kube allows are fine
    ok = pb.PodDisruptionBudget(name="b" * 253, namespace="n" * 63, disrupted_pods=["p" * 253])
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(upsert_pod_disruption_budgets=[ok]),
                        timeout=WAIT)
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(
        remove_pod_disruption_budgets=["n" * 63 + "/" + "b" * 253]), timeout=WAIT)


def test_per_cluster_metric_series_are_capped() -> None:
    engine = Engine(default_config(), seed=1)
    for i in range(5):
        engine.cluster(f"c{i}").update(SnapshotUpdate(upsert_nodes=[
            Node(name=f"n{j}", allocatable={"cpu": 1000, "memory": 1 << 30, "pods": 110})
            for j in range(i + 1)]))
    registry = CollectorRegistry()
    registry.register(ClusterCollector(engine, cluster_series=2))
    per = {
        s.labels["cluster"] for m in registry.collect() for s in m.samples
        if m.name == "schedsvc_cluster_cache_size"
    }
    assert per == {"c0", "c1"}
    # the total still counts every cluster's nodes: 1 + 2 + 3 + 4 + 5
    assert registry.get_sample_value("scheduler_cache_size", {"type": "nodes"}) == 15
    assert registry.get_sample_value("schedsvc_clusters") == 5
    engine.close()
