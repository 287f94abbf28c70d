"""OpenTelemetry: the span tree of a Schedule call, OTLP export to a receiver on loopback, and
tracing off by default at no cost."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent import futures

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from schedsvc.config import default_config
from schedsvc.engine.scheduler import Engine
from schedsvc.observability.setup import tracing_requested
from schedsvc.observability.tracing import CYCLE_SPAN, Tracing, setup_tracing
from schedsvc.server.app import Server, ServerOptions
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc
from tests.builders import pb_pod

from .ops_support import ServerProcess, load_cluster, serve_argv, wait_for

RPC_SPAN = "/schedsvc.v1.ScheduleService/Schedule"


class Traced:
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracing: Tracing = setup_tracing(self.exporter, batch=False)
        engine = Engine(default_config(), seed=1, observer=self.tracing.observer)
        self.server = Server(engine, ServerOptions(
            address="127.0.0.1:0", grace_seconds=1, interceptors=(self.tracing.interceptor,),
        )).start()
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.server.port}")
        self.stub = pb_grpc.ScheduleServiceStub(self.channel)

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())


@pytest.fixture
def traced() -> Iterator[Traced]:
    t = Traced()
    yield t
    t.channel.close()
    t.server.stop(0)
    t.tracing.shutdown()


def test_schedule_call_span_tree(traced: Traced) -> None:
    load_cluster(traced.stub, 3)
    traced.exporter.clear()
    resp = traced.stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("pod-a")]), timeout=30)
    assert resp.placements[0].node_name
    spans = traced.spans()
    rpc = [s for s in spans if s.name == RPC_SPAN]
    assert len(rpc) == 1 and rpc[0].kind == SpanKind.SERVER
    cycles = [s for s in spans if s.name == CYCLE_SPAN]
    assert len(cycles) == 1
    cycle = cycles[0]
    assert cycle.parent is not None
    assert cycle.parent.span_id == rpc[0].context.span_id
    assert cycle.context.trace_id == rpc[0].context.trace_id
    attrs = dict(cycle.attributes or {})
    assert attrs["schedsvc.pod.uid"] == "pod-a"
    assert attrs["schedsvc.profile"] == "default-scheduler"
    assert attrs["schedsvc.outcome"] == "SCHEDULED"
    assert attrs["schedsvc.nodes.evaluated"] == 3
    assert attrs["schedsvc.nodes.feasible"] == 3
    children = {
        s.name: s for s in spans
        if s.parent is not None and s.parent.span_id == cycle.context.span_id
    }
    # the first pod gets no batch hint, so it runs the whole cycle
    assert {"BatchHint", "PreFilter", "Filter", "PreScore", "Score"} <= set(children)
    for child in children.values():
        assert child.start_time is not None and child.end_time is not None
        assert cycle.start_time is not None and cycle.end_time is not None
        assert cycle.start_time <= child.start_time <= child.end_time <= cycle.end_time


def test_one_cycle_span_per_pod_with_outcomes(traced: Traced) -> None:
    load_cluster(traced.stub, 2)
    traced.exporter.clear()
    traced.stub.Schedule(pb.ScheduleRequest(
        pods=[pb_pod("ok-1"), pb_pod("ok-2"), pb_pod("x", cpu="64")]))
    cycles = {
        str((s.attributes or {})["schedsvc.pod.uid"]): s
        for s in traced.spans() if s.name == CYCLE_SPAN
    }
    assert set(cycles) == {"ok-1", "ok-2", "x"}
    assert (cycles["x"].attributes or {})["schedsvc.outcome"] == "UNSCHEDULABLE"
    assert (cycles["x"].attributes or {})["schedsvc.nodes.feasible"] == 0
    assert len({s.context.trace_id for s in cycles.values()}) == 1  # all under one RPC


def test_health_checks_are_not_traced(traced: Traced) -> None:
    health = health_pb2_grpc.HealthStub(traced.channel)
    assert health.Check(health_pb2.HealthCheckRequest()).status == \
        health_pb2.HealthCheckResponse.SERVING
    assert traced.spans() == []


@pytest.mark.parametrize(
    ("flag", "env", "want"),
    [
        (False, {}, False),
        (True, {}, True),
        (False, {"OTEL_TRACES_EXPORTER": "otlp"}, True),
        (True, {"OTEL_SDK_DISABLED": "true"}, False),
        (True, {"OTEL_TRACES_EXPORTER": "none"}, False),
        (False, {"OTEL_SDK_DISABLED": "false"}, False),
    ],
    ids=[
        "off by default", "the flag turns it on", "OTEL_TRACES_EXPORTER=otlp turns it on",
        "OTEL_SDK_DISABLED wins over the flag", "exporter none wins over the flag",
        "OTEL_SDK_DISABLED=false alone does not turn it on",
    ],
)
def test_when_tracing_is_on(flag: bool, env: dict[str, str], want: bool) -> None:
    assert tracing_requested(flag, env) is want


def test_tracing_off_imports_nothing_and_keeps_the_null_observer() -> None:
    code = (
        "import sys\n"
        "from schedsvc.engine.observer import NULL_OBSERVER\n"
        "from schedsvc.observability.setup import setup_observability\n"
        "o = setup_observability('', False)\n"
        "assert o.observer is NULL_OBSERVER and o.interceptors == ()\n"
        "bad = [m for m in sys.modules if m.startswith(('opentelemetry', 'prometheus_client'))]\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr


class _Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    """A minimal OTLP trace collector: keeps what it is sent."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[trace_service_pb2.ExportTraceServiceRequest] = []

    def Export(  # noqa: N802
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: grpc.ServicerContext
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        with self.lock:
            self.requests.append(request)
        return trace_service_pb2.ExportTraceServiceResponse()

    def spans(self) -> list[tuple[str, str]]:
        """(service.name, span name) of every span received."""
        out = []
        with self.lock:
            for req in self.requests:
                for rs in req.resource_spans:
                    service = next(
                        (a.value.string_value for a in rs.resource.attributes
                         if a.key == "service.name"), "",
                    )
                    for ss in rs.scope_spans:
                        out.extend((service, s.name) for s in ss.spans)
        return out


def test_spans_reach_an_otlp_receiver() -> None:
    receiver = _Receiver()
    grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(receiver, grpc_server)
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    grpc_server.start()
    server = None
    try:
        server = ServerProcess(serve_argv("--tracing"), env={
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
            "OTEL_EXPORTER_OTLP_INSECURE": "true",
            "OTEL_BSP_SCHEDULE_DELAY": "200",
        })
        with server.channel() as ch:
            stub = pb_grpc.ScheduleServiceStub(ch)
            load_cluster(stub, 3)
            stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("otlp-1"), pb_pod("otlp-2")]), timeout=30)

        def arrived() -> list[tuple[str, str]] | None:
            got = receiver.spans()
            names = [n for _, n in got]
            return got if names.count(CYCLE_SPAN) >= 2 and RPC_SPAN in names else None

        got = wait_for(arrived, 60, "spans at the OTLP receiver")
        assert {svc for svc, _ in got} == {"schedsvc"}
        assert {"Filter", "Score"} <= {n for _, n in got}
        assert server.terminate() == 0
    finally:
        if server is not None:
            server.close()
        grpc_server.stop(0)
