"""Nominated pods are seen and bounded (issue 30, defect 6): the nominated-pods gauge counts
the nominations, a cluster holds at most --max-nominated-pods-per-cluster of them (an update
beyond it is refused whole, a preemption beyond it nominates nothing and says why), and pods
whose batching nominations turned off are counted. Engine-level, no gRPC; the flag and the
status code are checked through a real server at the end."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from prometheus_client import CollectorRegistry

from schedsvc.config import default_config
from schedsvc.engine.scheduler import Cluster, Engine, SnapshotUpdate
from schedsvc.errors import InvalidArgument
from schedsvc.model import Outcome, Pod
from schedsvc.observability.metrics import ClusterCollector, PrometheusObserver
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import node, pb_node, pb_pod, pod
from tests.support import WAIT, Servers


def _engine(bound: int | None = None, reg: CollectorRegistry | None = None) -> Engine:
    """An engine with the nomination bound `bound` (None: the default) and metrics in `reg`."""
    options: dict[str, Any] = {}
    if bound is not None:
        options["max_nominated_pods"] = bound
    if reg is not None:
        options["observer"] = PrometheusObserver(reg)
    return Engine(default_config(), seed=1, **options)


def _full_cluster(engine: Engine, n: int) -> Cluster:
    """n nodes of 1 cpu, each full with one priority-0 victim."""
    c = engine.cluster("c")
    c.update(SnapshotUpdate(
        upsert_nodes=[node(f"n{i}", cpu=1000) for i in range(n)],
        upsert_pods=[pod(f"v{i}", cpu=1000, node_name=f"n{i}") for i in range(n)],
    ))
    return c


def _high(uid: str) -> Pod:
    return pod(uid, cpu=1000, priority=100)


def _sample(reg: CollectorRegistry, name: str, **labels: str) -> float:
    return reg.get_sample_value(name, {"profile": "default-scheduler", **labels}) or 0.0


def test_the_nominated_pods_gauge_counts_nominations() -> None:
    engine = _engine()
    c = _full_cluster(engine, 2)
    c.update(SnapshotUpdate(upsert_pods=[pod("sent", priority=5, nominated_node_name="n0")]))
    out, _ = c.schedule([_high("hi")])
    assert out[0].nominated_node_name  # preemption nominated it
    reg = CollectorRegistry()
    reg.register(ClusterCollector(engine))

    def gauge(kind: str) -> float | None:
        return reg.get_sample_value("schedsvc_cluster_cache_size", {"cluster": "c", "type": kind})

    assert gauge("nominated_pods") == 2  # one sent nominated, one nominated by preemption
    assert gauge("pods") == 2  # the two victims; nominations are not pods on nodes
    engine.close()


def test_a_preemption_beyond_the_bound_nominates_nothing_and_says_why() -> None:
    reg = CollectorRegistry()
    engine = _engine(2, reg)
    c = _full_cluster(engine, 3)
    first, _ = c.schedule([_high("h1"), _high("h2")])
    assert all(p.nominated_node_name and p.victims for p in first)  # below the bound: kube's
    held = dict(c.snapshot.nominated)
    assert len(held) == 2
    out, _ = c.schedule([_high("h3")])
    p = out[0]
    assert p.outcome is Outcome.UNSCHEDULABLE
    assert (p.nominated_node_name, p.victims) == ("", ())
    assert p.message.startswith("0/3 nodes are available: ")  # the FitError stays
    assert "not nominated" in p.message and "--max-nominated-pods-per-cluster 2" in p.message
    assert dict(c.snapshot.nominated) == held  # nothing dropped, nothing added
    assert _sample(reg, "schedsvc_nominations_refused_total") == 1
    # a dry run answers as the real run would, and counts nothing
    dry, _ = c.schedule([_high("h4")], dry_run=True)
    assert (dry[0].nominated_node_name, dry[0].message) == ("", p.message.replace("h3", "h4"))
    assert _sample(reg, "schedsvc_nominations_refused_total") == 1
    # Explain too: the candidates kube weighed, but no nomination
    e = c.explain(_high("h5"))
    assert e.candidates and e.nominated_node == ""
    assert "--max-nominated-pods-per-cluster 2" in e.message
    # a pod already nominated keeps its place under the bound: preempting again is allowed
    again, _ = c.schedule([_high("h1")])
    assert again[0].nominated_node_name and again[0].victims
    assert set(c.snapshot.nominated) == {"h1", "h2"}
    engine.close()


def test_an_update_beyond_the_bound_is_refused_whole() -> None:
    engine = _engine(2)
    c = engine.cluster("c")
    c.update(SnapshotUpdate(upsert_nodes=[node("n0")]))
    before = c.snapshot.generation

    def nominated(uid: str) -> Pod:
        return pod(uid, nominated_node_name="n0")

    with pytest.raises(InvalidArgument) as err:
        c.update(SnapshotUpdate(
            upsert_nodes=[node("n1")],
            upsert_pods=[nominated("a"), nominated("b"), nominated("c")],
        ))
    assert err.value.field == "upsert_pods"
    assert "--max-nominated-pods-per-cluster 2" in err.value.description
    assert (c.snapshot.generation, c.snapshot.num_nodes, c.snapshot.nominated) == (before, 1, {})
    c.update(SnapshotUpdate(upsert_pods=[nominated("a"), nominated("b")]))
    # binding one and nominating another in the same update keeps the count at the bound
    c.update(SnapshotUpdate(upsert_pods=[pod("a", node_name="n0"), nominated("c")]))
    # so does removing one and nominating another; replace starts from none
    c.update(SnapshotUpdate(remove_pods=["b"], upsert_pods=[nominated("d")]))
    with pytest.raises(InvalidArgument):
        c.update(SnapshotUpdate(upsert_pods=[nominated("e")]))
    c.update(SnapshotUpdate(
        replace=True, upsert_nodes=[node("n0")], upsert_pods=[nominated("e"), nominated("f")]))
    assert set(c.snapshot.nominated) == {"e", "f"}
    engine.close()


def test_pods_that_nominations_keep_from_batching_are_counted() -> None:
    reg = CollectorRegistry()
    engine = _engine(reg=reg)
    c = engine.cluster("c")
    c.update(SnapshotUpdate(
        upsert_nodes=[node(f"n{i}") for i in range(4)],
        upsert_pods=[pod("waiting", priority=10, nominated_node_name="n0")],
    ))
    low, _ = c.schedule([pod(f"low{i}", priority=0) for i in range(3)])
    assert not any(p.batched for p in low)
    assert _sample(reg, "schedsvc_batch_skipped_total", reason="nominated_pods") == 3
    assert _sample(reg, "scheduler_batch_cache_flushed_total", reason="nominated_pods") == 3
    # a nomination of lower priority does not count for a pod (kube's addGENominatedPods)
    high, _ = c.schedule([pod(f"high{i}", priority=20) for i in range(3)])
    assert any(p.batched for p in high)
    assert _sample(reg, "schedsvc_batch_skipped_total", reason="nominated_pods") == 3
    engine.close()


def test_the_flag_bounds_a_server_and_the_refusal_is_invalid_argument(
    servers: Servers,
) -> None:
    server, stub, _ = servers.start(engine_options={"max_nominated_pods": 1})
    stub.UpdateSnapshot(pb.UpdateSnapshotRequest(upsert_nodes=[pb_node("n0")]), timeout=WAIT)
    two = [pb_pod(f"p{i}", nominated_node_name="n0") for i in range(2)]
    with pytest.raises(grpc.RpcError) as err:
        stub.UpdateSnapshot(pb.UpdateSnapshotRequest(upsert_pods=two), timeout=WAIT)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "--max-nominated-pods-per-cluster 1" in (err.value.details() or "")
    assert server.engine.cluster("default").snapshot.nominated == {}
