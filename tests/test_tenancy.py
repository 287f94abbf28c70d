"""Tenancy is bounded (issue #13, defect 7): clusters are limited and can be deleted, every
repeated field has a count limit, node and namespace names are Kubernetes names, and the
per-cluster metric series are capped.

(Explain and dry runs on unknown names creating no cluster: test_cluster_state.py.)
"""

from __future__ import annotations

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
from schedsvc.server.servicer import Limits
from schedsvc.v1 import schedule_pb2 as pb
from tests.support import WAIT, Servers, pb_node, pb_pod


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


@pytest.mark.parametrize("field", [
    "upsert_nodes", "remove_nodes", "upsert_pods", "remove_pods", "upsert_namespaces",
])
def test_every_repeated_request_field_has_a_count_limit(servers: Servers, field: str) -> None:
    server, stub, _ = servers.start(limits=Limits(
        max_nodes_per_update=3, max_pods_per_update=3, max_namespaces_per_update=3))
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(upsert_nodes=[pb_node("n0")]), timeout=WAIT)
    items: dict[str, list[Any]] = {
        "upsert_nodes": [pb_node(f"m{i}") for i in range(4)],
        "remove_nodes": [f"m{i}" for i in range(4)],
        "upsert_pods": [pb_pod(f"p{i}", node_name="n0") for i in range(4)],
        "remove_pods": [f"p{i}" for i in range(4)],
        "upsert_namespaces": [pb.Namespace(name=f"ns{i}") for i in range(4)],
    }
    req = pb.UpdateSnapshotRequest(**{field: items[field]})
    err = _refused(stub.UpdateSnapshot, req)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _violation(err) == field
    # three are fine
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(**{field: items[field][:3]}), timeout=WAIT)


def test_lists_inside_objects_have_a_count_limit(servers: Servers) -> None:
    _, stub, _ = servers.start(limits=Limits(max_items_per_field=4))
    pod = pb_pod("p")
    pod.tolerations.extend(pb.Toleration(key=f"k{i}", operator="Exists") for i in range(5))
    err = _refused(stub.Schedule, pb.ScheduleRequest(pods=[pod], dry_run=True))
    assert _violation(err) == "pods[0].tolerations"
    node = pb_node("n0")
    node.images.add(names=[f"img:{i}" for i in range(5)], size_bytes=1)
    err = _refused(stub.UpdateSnapshot, pb.UpdateSnapshotRequest(upsert_nodes=[node]))
    assert _violation(err) == "upsert_nodes[0].images[0].names"


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
