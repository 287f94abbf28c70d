"""Prometheus metrics: kube-scheduler's names and labels, gRPC server metrics, process metrics,
a valid exposition (promtool), and a real Prometheus scraping a running server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from schedsvc.config import default_config
from schedsvc.engine.scheduler import Engine
from schedsvc.observability.grpc_metrics import GrpcMetricsInterceptor
from schedsvc.observability.metrics import (
    ClusterCollector,
    PrometheusObserver,
    ServerCollector,
    new_registry,
)
from schedsvc.server.app import Server, ServerOptions
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc
from tests.builders import pb_pod

from .ops_support import ServerProcess, free_port, load_cluster, serve_argv, wait_for

PROFILE = "default-scheduler"
SERVICE = "schedsvc.v1.ScheduleService"

Sample = tuple[str, dict[str, str], float]


def samples(registry: CollectorRegistry) -> list[Sample]:
    text = generate_latest(registry).decode()
    return [
        (s.name, dict(s.labels), s.value)
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    ]


def value(all_samples: list[Sample], name: str, **labels: str) -> float:
    """The sum over samples of `name` whose labels include `labels` (0 when none)."""
    return sum(
        v for n, lab, v in all_samples
        if n == name and all(lab.get(k) == want for k, want in labels.items())
    )


class Instrumented:
    def __init__(self, batching: bool) -> None:
        self.registry = new_registry()
        engine = Engine(
            default_config(), seed=1, batching_enabled=batching,
            observer=PrometheusObserver(self.registry),
        )
        self.registry.register(ClusterCollector(engine))
        self.server = Server(engine, ServerOptions(
            address="127.0.0.1:0", grace_seconds=1,
            interceptors=(GrpcMetricsInterceptor(self.registry),),
        )).start()
        self.registry.register(ServerCollector(self.server.servicer.counts))
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.server.port}")
        self.stub = pb_grpc.ScheduleServiceStub(self.channel)

    def close(self) -> None:
        self.channel.close()
        self.server.stop(0)


@pytest.fixture
def instrumented() -> Iterator[Instrumented]:
    inst = Instrumented(batching=False)
    yield inst
    inst.close()


def test_scheduling_metrics_use_kube_names_and_labels(instrumented: Instrumented) -> None:
    stub = instrumented.stub
    load_cluster(stub, 3)
    resp = stub.Schedule(pb.ScheduleRequest(pods=[pb_pod(f"p{i}") for i in range(30)]), timeout=30)
    assert all(p.node_name for p in resp.placements)
    stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("huge", cpu="64")]), timeout=30)
    s = samples(instrumented.registry)

    assert value(s, "scheduler_schedule_attempts_total", result="scheduled", profile=PROFILE) == 30
    assert value(s, "scheduler_schedule_attempts_total", result="unschedulable",
                 profile=PROFILE) == 1
    assert value(s, "scheduler_scheduling_attempt_duration_seconds_count", result="scheduled",
                 profile=PROFILE) == 30
    ext = "scheduler_framework_extension_point_duration_seconds_count"
    # 31 cycles, all through PreFilter and Filter; 30 had 3 feasible nodes, so were scored
    assert value(s, ext, extension_point="PreFilter", status="Success", profile=PROFILE) == 31
    assert value(s, ext, extension_point="Filter", status="Success", profile=PROFILE) == 30
    assert value(s, ext, extension_point="Filter", status="Unschedulable", profile=PROFILE) == 1
    assert value(s, ext, extension_point="PreScore", status="Success", profile=PROFILE) == 30
    assert value(s, ext, extension_point="Score", status="Success", profile=PROFILE) == 30
    # per-plugin durations are sampled: cycles 10, 20 and 30 of 31
    plug = "scheduler_plugin_execution_duration_seconds_count"
    assert value(s, plug, plugin="NodeResourcesFit", extension_point="PreFilter") == 3
    assert value(s, plug, plugin="NodeResourcesFit", extension_point="Filter") == 3
    assert value(s, plug, plugin="NodeResourcesFit", extension_point="Score") == 3

    # the cache as kube counts it, and per cluster: 30 pods assumed, none confirmed
    assert value(s, "scheduler_cache_size", type="nodes") == 3
    assert value(s, "scheduler_cache_size", type="assumed_pods") == 30
    assert value(s, "schedsvc_cluster_cache_size", cluster="default", type="assumed_pods") == 30
    # process metrics from prometheus-client's default collectors
    assert value(s, "process_cpu_seconds_total") > 0
    assert any(n == "python_info" for n, _, _ in s)


def test_no_pod_or_node_names_in_labels(instrumented: Instrumented) -> None:
    load_cluster(instrumented.stub, 3)
    instrumented.stub.Schedule(pb.ScheduleRequest(pods=[pb_pod(f"uid-{i}") for i in range(12)]))
    for name, labels, _ in samples(instrumented.registry):
        for v in labels.values():
            assert not v.startswith(("uid-", "node-")), (name, labels)


def test_batch_metrics_match_kube_names() -> None:
    inst = Instrumented(batching=True)
    try:
        load_cluster(inst.stub, 5)
        inst.stub.Schedule(pb.ScheduleRequest(pods=[pb_pod(f"p{i}") for i in range(20)]))
        # a different shape right after: kube flushes the batch state as pod_incompatible
        inst.stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("other", cpu="300m")]))
        s = samples(inst.registry)
    finally:
        inst.close()
    # identical pods one after another: the hint is used after the first full cycle
    assert value(s, "scheduler_batch_attempts_total", profile=PROFILE, result="hint_used") > 0
    assert value(s, "scheduler_get_node_hint_duration_seconds_count", hinted="hint",
                 profile=PROFILE) > 0
    assert value(s, "scheduler_store_schedule_results_duration_seconds_count",
                 profile=PROFILE) > 0
    assert value(s, "scheduler_batch_cache_flushed_total", profile=PROFILE,
                 reason="pod_incompatible") == 1


def test_grpc_server_metrics(instrumented: Instrumented) -> None:
    stub = instrumented.stub
    load_cluster(stub, 2)
    for i in range(3):
        stub.Schedule(pb.ScheduleRequest(pods=[pb_pod(f"u{i}")]))
    with pytest.raises(grpc.RpcError) as err:
        stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("bad", cpu="lots")]))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    responses = list(stub.ScheduleStream(
        iter([pb.ScheduleRequest(pods=[pb_pod(f"s{i}")]) for i in range(4)]), timeout=30
    ))
    assert len(responses) == 4
    s = samples(instrumented.registry)
    base = {"grpc_service": SERVICE, "grpc_method": "Schedule", "grpc_type": "unary"}
    assert value(s, "grpc_server_started_total", **base) == 4
    assert value(s, "grpc_server_handled_total", grpc_code="OK", **base) == 3
    assert value(s, "grpc_server_handled_total", grpc_code="InvalidArgument", **base) == 1
    assert value(s, "grpc_server_handling_seconds_count", **base) == 4
    stream = {"grpc_service": SERVICE, "grpc_method": "ScheduleStream", "grpc_type": "bidi_stream"}
    assert value(s, "grpc_server_msg_received_total", **stream) == 4
    assert value(s, "grpc_server_msg_sent_total", **stream) == 4
    assert value(s, "grpc_server_handled_total", grpc_code="OK", **stream) == 1


def test_server_counters_say_where_requests_ran(instrumented: Instrumented) -> None:
    stub = instrumented.stub
    load_cluster(stub, 2)
    # the cluster's first request is measured on a worker thread; the next ones start on the loop
    for i in range(4):
        stub.Schedule(pb.ScheduleRequest(pods=[pb_pod(f"u{i}")]))
    s = samples(instrumented.registry)
    slices = value(s, "schedsvc_loop_slices_total")
    assert 1 <= slices <= 3
    assert slices == instrumented.server.servicer.inline.slices
    assert value(s, "schedsvc_loop_slice_rests_total") == 0  # one-pod batches fit a slice
    assert value(s, "schedsvc_requests_in_flight") == 0
    call = stub.ScheduleStream(iter([pb.ScheduleRequest(pods=[pb_pod("s0")])]), timeout=30)
    assert len(list(call)) == 1
    assert value(samples(instrumented.registry), "schedsvc_streams_open") == 0
    # a slice that runs out: its rest moves to a thread and is counted
    aio = instrumented.server.servicer
    slices = value(samples(instrumented.registry), "schedsvc_loop_slices_total")
    assert slices == aio.inline.slices
    aio.inline.begin = lambda cluster, pods: (lambda: True)  # type: ignore[method-assign]
    stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("r0"), pb_pod("r1")]))
    s = samples(instrumented.registry)
    assert value(s, "schedsvc_loop_slice_rests_total") == 1
    assert value(s, "schedsvc_loop_slices_total") == slices  # the stub took no count


def test_promtool_accepts_the_exposition(instrumented: Instrumented, tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        if os.environ.get("CI"):
            pytest.fail("promtool missing in CI: .ci/run installs Debian's prometheus")
        pytest.skip("promtool not installed (Debian package prometheus; .ci/run installs it)")
    load_cluster(instrumented.stub, 3)
    instrumented.stub.Schedule(pb.ScheduleRequest(pods=[pb_pod(f"p{i}") for i in range(10)]))
    instrumented.stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("big", cpu="64")]))
    text = generate_latest(instrumented.registry)
    res = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, timeout=60
    )
    assert res.returncode == 0, res.stdout.decode() + res.stderr.decode()


def _query(base: str, expr: str) -> list[dict[str, object]]:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    result: list[dict[str, object]] = body["data"]["result"]
    return result


def test_real_prometheus_scrapes_the_server(tmp_path: Path) -> None:
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        if os.environ.get("CI"):
            pytest.fail("prometheus missing in CI: .ci/run installs Debian's prometheus")
        pytest.skip("prometheus not installed (Debian package prometheus; .ci/run installs it)")
    # a 1 s slice: q0 below starts on the loop however loaded the machine (10 ms failed once)
    server = ServerProcess(serve_argv("--metrics-address", "127.0.0.1:0", "--seed", "1",
                                      "--loop-slice-ms", "1000"))
    prom: subprocess.Popen[bytes] | None = None
    try:
        metrics_port = int(server.expect("schedsvc metrics on port "))
        with server.channel() as ch:
            stub = pb_grpc.ScheduleServiceStub(ch)
            load_cluster(stub, 4)
            stub.Schedule(pb.ScheduleRequest(pods=[pb_pod(f"p{i}") for i in range(25)]), timeout=30)
            # measured on a thread, the cluster's next request starts on the loop
            stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("q0")]), timeout=30)
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: schedsvc\n    static_configs:\n"
            f"      - targets: ['127.0.0.1:{metrics_port}']\n"
        )
        web_port = free_port()
        prom = subprocess.Popen(
            [prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
             f"--web.listen-address=127.0.0.1:{web_port}"],
            stdout=subprocess.DEVNULL, stderr=(tmp_path / "prometheus.log").open("wb"),
        )
        base = f"http://127.0.0.1:{web_port}"

        def scraped() -> float | None:
            if prom is not None and prom.poll() is not None:
                raise AssertionError((tmp_path / "prometheus.log").read_text()[-3000:])
            try:
                rows = _query(base, f'scheduler_schedule_attempts_total{{profile="{PROFILE}"}}')
            except OSError:
                return None  # not listening yet
            total = sum(float(r["value"][1]) for r in rows)  # type: ignore[index]
            return total if total > 0 else None

        assert wait_for(scraped, 90, "Prometheus to scrape a scheduling metric", 0.5) == 26
        slices = _query(base, "schedsvc_loop_slices_total")
        assert slices and float(slices[0]["value"][1]) == 1  # type: ignore[index]
        up = _query(base, 'up{job="schedsvc"}')
        assert up and float(up[0]["value"][1]) == 1  # type: ignore[index]
    finally:
        if prom is not None:
            prom.terminate()
            try:
                prom.wait(30)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait()
        server.terminate()
        server.close()
