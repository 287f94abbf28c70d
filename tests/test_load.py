"""schedsvc-load: every shipped workload at a tiny scale against a real server, and the report's
numbers checked against each other (decided = created, rate x time = pods, ratios in range)."""

from __future__ import annotations

import io
import json

import pytest

from schedsvc.config import load_config
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.load import RunOptions, main, run
from schedsvc_client.progress import Progress
from schedsvc_client.report import (
    Collector,
    Report,
    data_items,
    median_report,
    speedup_summary,
)
from schedsvc_client.workload import (
    CreateNodes,
    CreatePods,
    WorkloadError,
    load_workload,
    shipped_workloads,
)

# Parameters every shipped workload draws its counts from; unused ones are ignored.
TINY = {"nodes": "20", "taintedNodes": "6", "initPods": "5", "pods": "30",
        "churnEvery": "10", "churnDelete": "4", "runLength": "5", "lowPods": "80",
        "highPods": "10", "pods8": "16", "pods100": "100", "bigGang": "20", "noFit": "10",
        "noFitGang": "10"}


def _check_report(r: Report, created: int) -> None:
    assert r.pods == created
    assert r.scheduled + r.unschedulable + r.rejected == created
    assert 0.0 <= r.hint_ratio <= 1.0
    assert r.batched <= r.scheduled
    assert r.duration_s > 0
    assert r.throughput["average"] * r.duration_s == pytest.approx(created, rel=1e-6)
    assert r.rpcs >= 1
    assert r.pod_latency_ms["p50"] <= r.pod_latency_ms["p99"]
    if r.unschedulable:
        assert r.top_reasons, "unschedulable pods must come with their reasons"


@pytest.mark.parametrize("name", sorted(shipped_workloads()))
@pytest.mark.parametrize("mode", ["unary", "stream"])
def test_every_shipped_workload_adds_up(make_server, name: str, mode: str) -> None:
    w = load_workload(name, "small", TINY)
    config = load_config(w.config) if w.config else None
    server, _ = make_server(config, seed=1)
    r = run(RunOptions(workload=w, target=f"127.0.0.1:{server.port}", mode=mode, batch_size=7,
                       progress=False))
    _check_report(r, w.measured_pods)
    assert r.server_cpu_s is None, "a remote server's CPU is not ours to measure"
    if name == "preemption":
        # 4 low pods fill each of the 20 nodes; each high pod needs 2 of them evicted
        assert r.unschedulable == r.nominated == 10
    if name == "churn":
        # 4 deleted up front, then 4 for every 10 pods scheduled (warm-up included)
        assert r.deleted >= 4 + 4 * (30 // 10)
    if name == "pod-anti-affinity":
        # one such pod per node: 20 nodes, 5 warm-up pods, 30 measured -> 15 cannot fit
        assert r.scheduled == 15 and r.unschedulable == 15
        assert r.pods_per_node == (1, 1)


def test_concurrent_clients_each_run_the_whole_workload(make_server) -> None:
    w = load_workload("scheduling-basic", "small", TINY)
    server, _ = make_server(seed=1)
    r = run(RunOptions(workload=w, target=f"127.0.0.1:{server.port}", clients=3,
                       inflight=2, progress=False))
    _check_report(r, 3 * w.measured_pods)


def test_open_loop_rate_paces_the_requests(make_server) -> None:
    w = load_workload("default", "small", {"nodes": "10", "pods": "40"})
    server, _ = make_server(seed=1)
    r = run(RunOptions(workload=w, target=f"127.0.0.1:{server.port}", batch_size=10,
                       rate=400.0, progress=False))
    _check_report(r, 40)
    # the last of 4 requests is due 30 pods / 400 pods/s = 75 ms after the first
    assert r.duration_s >= 0.075


def test_embedded_server_run_and_json(tmp_path, capsys) -> None:
    out = tmp_path / "run.json"
    rc = main(["default", "--param", "nodes=20", "--param", "pods=30", "--batch-size", "8",
               "--json", str(out), "--plot", str(tmp_path / "p.png")])
    assert rc == 0
    text = capsys.readouterr().out
    assert "pods/s average" in text and "batch hint ratio" in text
    doc = json.loads(out.read_text())
    assert doc["version"] == "v1"
    metrics = {item["labels"]["Metric"]: item for item in doc["dataItems"]}
    assert metrics["SchedulingThroughput"]["unit"] == "pods/s"
    assert metrics["pods"]["data"]["Decided"] == 30
    assert metrics["server_cpu"]["data"]["Total"] > 0
    assert metrics["server_peak_rss"]["data"]["Max"] > 0
    assert 0 <= metrics["batch_hint_ratio"]["data"]["Ratio"] <= 1


def test_compare_runs_both_sides(tmp_path, capsys) -> None:
    out = tmp_path / "cmp.json"
    rc = main(["compare", "one-per-node", "--param", "nodes=20", "--param", "pods=20",
               "--a", "--feature-gates OpportunisticBatching=false",
               "--b", "--feature-gates OpportunisticBatching=true", "--json", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "b/a" in text
    items = json.loads(out.read_text())["dataItems"]
    ratios = {i["labels"]["Side"]: i["data"] for i in items
              if i["labels"]["Metric"] == "batch_hint_ratio"}
    assert ratios["a"]["Ratio"] == 0, "batching off must give no hints"
    assert ratios["b"]["Scheduled"] == 20


def test_compare_repeats_rounds_in_alternating_order_and_reports_the_median(
    tmp_path, capsys
) -> None:
    out = tmp_path / "cmp.json"
    rc = main(["compare", "one-per-node", "--param", "nodes=10", "--param", "pods=10",
               "--a", "--feature-gates OpportunisticBatching=false",
               "--b", "--feature-gates OpportunisticBatching=true", "--repeat", "3",
               "--json", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    sides = [line.split()[2] for line in text.splitlines() if line.startswith("-- side")]
    assert sides == ["a", "b", "b", "a", "a", "b"]
    items = json.loads(out.read_text())["dataItems"]
    tput = {(i["labels"]["Round"], i["labels"]["Side"]): i["data"]["Average"] for i in items
            if i["labels"]["Metric"] == "SchedulingThroughput"}
    assert len(tput) == 6
    ratios = sorted(tput[(r, "b")] / tput[(r, "a")] for r in ("1", "2", "3"))
    summary = next(i["data"] for i in items if i["labels"]["Metric"] == "compare_speedup")
    assert summary == {"Median": ratios[1], "Min": ratios[0], "Max": ratios[2], "Rounds": 3.0}
    assert f"median {ratios[1]:.2f}x" in text


def test_median_report_and_speedup_of_an_even_number_of_rounds() -> None:
    def rep(avg: float) -> Report:
        r = Report(name="x")
        r.throughput = {"average": avg}
        return r

    rounds = [{"a": rep(10), "b": rep(40)}, {"a": rep(20), "b": rep(100)}]
    assert speedup_summary(rounds) == {"Median": 4.5, "Min": 4.0, "Max": 5.0, "Rounds": 2.0}
    assert median_report([rep(3), rep(1), rep(2), rep(4)]).throughput["average"] == 2


def test_replay_places_pending_pods_and_keeps_bound_ones(make_server, tmp_path, capsys) -> None:
    server, _ = make_server(seed=1)
    (tmp_path / "nodes.json").write_text(json.dumps({"kind": "NodeList", "items": [
        {"metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "2", "pods": "10"}}},
        {"metadata": {"name": "b"}, "status": {"allocatable": {"cpu": "1", "pods": "10"}}},
    ]}))
    (tmp_path / "pods.yaml").write_text(
        "kind: Pod\nmetadata: {name: bound}\n"
        "spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: '2'}}}]}\n"
        "---\nkind: Pod\nmetadata: {name: fits}\n"
        "spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}\n"
        "---\nkind: Pod\nmetadata: {name: huge}\n"
        "spec: {containers: [{name: c, resources: {requests: {cpu: '3'}}}]}\n")
    rc = main(["replay", "--nodes", str(tmp_path / "nodes.json"),
               "--pods", str(tmp_path / "pods.yaml"), "--target", f"127.0.0.1:{server.port}"])
    assert rc == 0
    lines = capsys.readouterr().out.splitlines()
    assert "default/fits\tSCHEDULED\tb" in lines  # a is full with the bound pod
    assert any(ln.startswith("default/huge\tUNSCHEDULABLE\t0/2 nodes are available")
               for ln in lines)


def test_workload_templates_expand() -> None:
    w = load_workload("taints-affinity", "small", TINY)
    general, gpu = (op for op in w.ops if isinstance(op, CreateNodes))
    nodes = list(general.nodes())
    assert [n.name for n in nodes[:4]] == ["node-0", "node-1", "node-2", "node-3"]
    assert [n.labels["topology.kubernetes.io/zone"] for n in nodes[:4]] == [
        "zone-0", "zone-1", "zone-2", "zone-0"]
    assert nodes[5].labels["kubernetes.io/hostname"] == "node-5"
    tainted = next(gpu.nodes())
    assert tainted.name == "gpu-node-0" and tainted.taints[0].key == "dedicated"
    measured = [op for op in w.ops if isinstance(op, CreatePods) and op.collect_metrics][0]
    pods = list(measured.pods(4))
    apps = [p.labels["app"] for p in pods]
    assert apps[:10] == ["general"] * 10 and apps[10:20] == ["gpu"] * 10
    assert apps[20] == "prefers-gpu"
    assert len({p.uid for p in pods}) == 30


def test_deployment_pods_get_the_default_selector_of_their_replicaset_and_service() -> None:
    w = load_workload("deployments", "small", {**TINY, "pods": "12"})
    measured = next(op for op in w.ops if isinstance(op, CreatePods) and op.collect_metrics)
    assert len(measured.templates) == 10
    pods = list(measured.pods(1))
    # runs of 50 pods: the first 12 pods all belong to Deployment 0
    assert {p.labels["app"] for p in pods} == {"web-0"}
    for tpl in measured.templates[:3]:
        app, pod_hash = tpl.labels["app"], tpl.labels["pod-template-hash"]
        # kube's DefaultSelector: the Service's selector (app) and the controller
        # ReplicaSet's (app + pod-template-hash), merged
        assert dict(tpl.default_selector.match_labels) == {
            "app": app, "pod-template-hash": pod_hash}
        assert not tpl.default_selector.match_expressions
    assert len({t.labels["pod-template-hash"] for t in measured.templates}) == 10


def test_unknown_parameter_and_size_are_errors(tmp_path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text("name: X\nworkloadTemplate:\n- {opcode: createNodes, countParam: $missing}\n")
    with pytest.raises(WorkloadError, match="unknown parameter"):
        load_workload(str(f))
    with pytest.raises(WorkloadError, match="no size"):
        load_workload("default", "huge")


def test_per_second_throughput_counts_full_windows_only() -> None:
    c = Collector()
    c.begin(100.0)
    placements = [pb.Placement(outcome=pb.Placement.SCHEDULED)] * 10
    for t in (100.2, 100.5, 101.5, 102.1, 102.4):  # 20, 10, 20 pods; 2.4 s -> two full windows
        c.record(placements, t - 0.1, t)
    c.finish(102.4)
    r = Report.from_collector("x", c)
    assert r.samples == [20.0, 10.0]
    assert r.throughput["average"] == pytest.approx(50 / 2.4)
    assert r.pod_latency_ms["p99"] == pytest.approx(100.0)
    assert data_items([r])["dataItems"][0]["data"]["Perc50"] == pytest.approx(15.0)


def test_progress_is_silent_when_not_a_tty() -> None:
    buf = io.StringIO()
    p = Progress(10, "x", stream=buf)
    p.advance(10)
    p.close()
    assert buf.getvalue() == ""
    p = Progress(10, "x", stream=buf, enabled=True)
    p.advance(5)
    assert "5/10" in buf.getvalue() and buf.getvalue().startswith("\r")
