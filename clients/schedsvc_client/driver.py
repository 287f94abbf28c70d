"""The load driver: runs a workload's ops against a server with one or more clients and
collects what it did. Requests are built before their op is timed, so the figures are the RPCs,
not Python building protobufs."""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import grpc

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc

from .embedded import EmbeddedServer, ProcStats, noop_command, server_command
from .progress import Progress
from .report import (
    Collector,
    Report,
)
from .workload import (
    Barrier,
    Churn,
    CreateNodes,
    CreatePods,
    CreateStatefulSets,
    CreateStorage,
    DeletePods,
    Workload,
)
from .workload_groups import requests_by_group

__all__ = ["RunOptions", "LoadError", "run", "new_stub", "CHANNEL_OPTIONS"]

CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 256 * 1024 * 1024),
    ("grpc.max_send_message_length", 256 * 1024 * 1024),
]
_NODES_PER_UPDATE = 5000


@dataclass(slots=True)
class RunOptions:
    """Everything one run needs; `compare` builds two of these."""

    workload: Workload
    target: str = ""
    noop: bool = False  # embedded no-op server: the client's own cost
    seed: int | None = 1
    config: str | None = None
    feature_gates: str = ""
    mode: str = "unary"
    batch_size: int = 100
    inflight: int = 0  # 0: 1 for unary, 4 for stream
    clients: int = 1
    rate: float = 0.0  # pods/s over all clients; 0 = closed loop, as fast as possible
    progress: bool | None = None
    label: str = ""
    extra: dict[str, str] = field(default_factory=dict)


class LoadError(RuntimeError):
    """The run cannot go on (the server failed an RPC, or would not start)."""


@dataclass(slots=True)
class _Shared:
    """State shared by the clients of one run."""

    measured: Collector
    warmup: Collector
    progress: Progress
    sync: threading.Barrier
    server: EmbeddedServer | None
    at_measure: list[ProcStats | None] = field(default_factory=list)
    nodes_used: Counter[str] = field(default_factory=Counter)
    deleted: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Client:
    """One client driving the whole workload against its own cluster."""

    def __init__(self, opts: RunOptions, shared: _Shared, stub: pb_grpc.ScheduleServiceStub,
                 cluster: str) -> None:
        self.opts = opts
        self.shared = shared
        self.stub = stub
        self.cluster = cluster
        self.live: deque[str] = deque()  # scheduled uids, oldest first, for churn and deletes
        self.churn: Churn | None = None
        self.since_churn = 0
        self.deleter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="churn")
        self.deletes: list[Future[None]] = []
        self.error: BaseException | None = None
        self.inflight = opts.inflight or (4 if opts.mode == "stream" else 1)
        self.rate = opts.rate / opts.clients if opts.rate > 0 else 0.0

    def run(self) -> None:
        try:
            self.stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster=self.cluster, replace=True))
            measuring = False
            for index, op in enumerate(self.opts.workload.ops):
                if isinstance(op, CreateNodes):
                    self._create_nodes(op)
                elif isinstance(op, CreateStorage):
                    self._create_storage(op)
                elif isinstance(op, CreatePods | CreateStatefulSets):
                    if isinstance(op, CreateStatefulSets):
                        self._create_claims(op)  # before the pods, as the controller does
                    if isinstance(op, CreatePods) and op.groups is not None:
                        self._chunked("upsert_pod_groups", op.groups.objects(index, op.count))
                    requests = self._requests(op, index)
                    if op.collect_metrics and not measuring:
                        measuring = True
                        self.shared.sync.wait()
                    self._schedule(requests, op.collect_metrics)
                elif isinstance(op, Churn):
                    self.churn, self.since_churn = op, 0
                elif isinstance(op, DeletePods):
                    self._delete(op.count)
                elif isinstance(op, Barrier):
                    self._drain_deletes()
            if not measuring:
                self.shared.sync.wait()  # keep the other clients' barrier whole
            self._drain_deletes()
        except BaseException as exc:  # reported by the caller, with the others' state
            self.error = exc
            self.shared.sync.abort()
        finally:
            self.deleter.shutdown(wait=True)

    def _create_nodes(self, op: CreateNodes) -> None:
        batch: list[pb.Node] = []
        for node in op.nodes():
            batch.append(node)
            if len(batch) == _NODES_PER_UPDATE:
                self.stub.UpdateSnapshot(
                    pb.UpdateSnapshotRequest(cluster=self.cluster, upsert_nodes=batch))
                batch = []
        if batch:
            self.stub.UpdateSnapshot(
                pb.UpdateSnapshotRequest(cluster=self.cluster, upsert_nodes=batch))

    def _create_storage(self, op: CreateStorage) -> None:
        """The class, driver and PVs, then each node's CSINode, in chunks as nodes are sent."""
        req = op.objects()
        req.cluster = self.cluster
        self.stub.UpdateSnapshot(req)
        self._chunked("upsert_csi_nodes", op.csi_nodes())

    def _create_claims(self, op: CreateStatefulSets) -> None:
        self._chunked("upsert_persistent_volume_claims", op.claims())

    def _chunked(self, field_name: str, objects: Iterator[Any]) -> None:
        """`objects` into UpdateSnapshot's repeated `field_name`, as many per request as nodes."""
        batch: list[Any] = []
        for obj in [*objects, None]:
            if obj is not None:
                batch.append(obj)
            if batch and (obj is None or len(batch) == _NODES_PER_UPDATE):
                req = pb.UpdateSnapshotRequest(cluster=self.cluster)
                getattr(req, field_name).extend(batch)
                self.stub.UpdateSnapshot(req)
                batch = []

    def _requests(
        self, op: CreatePods | CreateStatefulSets, index: int
    ) -> list[pb.ScheduleRequest]:
        pods = list(op.pods(index))
        size = self.opts.batch_size
        if isinstance(op, CreatePods) and op.groups is not None:
            chunks = list(requests_by_group(pods, op.groups, size))  # whole groups each
        else:
            chunks = [pods[i:i + size] for i in range(0, len(pods), size)]
        return [pb.ScheduleRequest(cluster=self.cluster, pods=c) for c in chunks]

    # -- sending -------------------------------------------------------------------------------

    def _schedule(self, requests: list[pb.ScheduleRequest], measured: bool) -> None:
        collector = self.shared.measured if measured else self.shared.warmup
        t0 = time.perf_counter()
        collector.begin(t0)
        if self.opts.mode == "stream":
            self._stream(requests, collector, t0)
        else:
            self._unary(requests, collector, t0)
        collector.finish(time.perf_counter())

    def _pace(self, t0: float, pods_before: int) -> float:
        """Open loop: sleep until this request's planned start; returns that start time."""
        if not self.rate:
            return time.perf_counter()
        due = t0 + pods_before / self.rate
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        return due  # latency counts from the plan, so a late send shows as latency

    def _unary(self, requests: list[pb.ScheduleRequest], c: Collector, t0: float) -> None:
        if self.inflight == 1 and not self.rate:
            for req in requests:
                start = time.perf_counter()
                resp = self.stub.Schedule(req)
                self._record(resp, c, start, time.perf_counter())
            return
        slots = threading.Semaphore(self.inflight)
        failures: list[BaseException] = []
        sent = 0
        for req in requests:
            slots.acquire()
            if failures:
                break
            start = self._pace(t0, sent)
            sent += len(req.pods)
            fut = self.stub.Schedule.future(req)

            def done(f: grpc.Future, start: float = start) -> None:
                try:
                    self._record(f.result(), c, start, time.perf_counter())
                except BaseException as exc:
                    failures.append(exc)
                finally:
                    slots.release()

            fut.add_done_callback(done)
        for _ in range(self.inflight):
            slots.acquire()
        if failures:
            raise failures[0]

    def _stream(self, requests: list[pb.ScheduleRequest], c: Collector, t0: float) -> None:
        slots = threading.Semaphore(self.inflight)
        starts: deque[float] = deque()

        def gen() -> Iterator[pb.ScheduleRequest]:
            sent = 0
            for req in requests:
                slots.acquire()
                starts.append(self._pace(t0, sent))
                sent += len(req.pods)
                yield req

        for resp in self.stub.ScheduleStream(gen()):
            self._record(resp, c, starts.popleft(), time.perf_counter())
            slots.release()

    def _record(self, resp: pb.ScheduleResponse, c: Collector, start: float, end: float) -> None:
        c.record(resp.placements, start, end)
        scheduled = [p for p in resp.placements if p.outcome == pb.Placement.SCHEDULED]
        if c is self.shared.measured:
            with self.shared.lock:
                self.shared.nodes_used.update(p.node_name for p in scheduled)
        self.shared.progress.advance(len(resp.placements))
        if not scheduled:
            return
        with self.shared.lock:
            self.live.extend(p.pod_uid for p in scheduled)
            if self.churn is None:
                return
            self.since_churn += len(scheduled)
            while self.since_churn >= self.churn.every:
                self.since_churn -= self.churn.every
                uids = self._take(self.churn.delete)
                if uids:
                    self.deletes.append(self.deleter.submit(self._remove, uids))

    # -- deleting ------------------------------------------------------------------------------

    def _take(self, n: int) -> list[str]:
        return [self.live.popleft() for _ in range(min(n, len(self.live)))]

    def _remove(self, uids: list[str]) -> None:
        self.stub.UpdateSnapshot(pb.UpdateSnapshotRequest(cluster=self.cluster, remove_pods=uids))
        with self.shared.lock:
            self.shared.deleted += len(uids)

    def _delete(self, n: int) -> None:
        with self.shared.lock:
            uids = self._take(n)
        if uids:
            self._remove(uids)

    def _drain_deletes(self) -> None:
        pending, self.deletes = self.deletes, []
        for f in pending:
            f.result()


def new_stub(channel: grpc.Channel) -> pb_grpc.ScheduleServiceStub:
    return pb_grpc.ScheduleServiceStub(channel)  # type: ignore[no-untyped-call]


def _server_for(opts: RunOptions) -> EmbeddedServer | None:
    if opts.target:
        return None
    if opts.noop:
        return EmbeddedServer(noop_command())
    return EmbeddedServer(server_command(opts.seed, opts.config or opts.workload.config,
                                         opts.feature_gates or opts.workload.feature_gates))


def _raise_first_error(
    name: str, clients: list[_Client], server: EmbeddedServer | None
) -> None:
    """A client's failure as a LoadError with the server's last words (the other clients,
    stopped at the barrier by it, add nothing)."""
    errors = [c.error for c in clients if c.error is not None
              and not isinstance(c.error, threading.BrokenBarrierError)]
    if errors:
        err = errors[0]
        detail = str(err.details()) if isinstance(err, grpc.Call) else str(err)
        tail = server.stderr_tail()[-2000:] if server else ""
        raise LoadError(f"{name}: {detail}" + (f"\nserver stderr:\n{tail}" if tail else "")
                        ) from err


def run(opts: RunOptions) -> Report:
    """Run the workload once; starts and stops an embedded server unless opts.target is set."""
    w = opts.workload
    cpu0 = time.process_time()
    server = _server_for(opts)
    try:
        address = opts.target or (server.address if server else "")
        channels = [grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
                    for _ in range(opts.clients)]
        progress = Progress(w.pods * opts.clients, f"{w.name}/{w.size}", enabled=opts.progress)
        shared: _Shared

        def at_measure() -> None:
            shared.at_measure.append(server.stats() if server else None)
            progress.phase("measuring")

        shared = _Shared(Collector(), Collector(), progress,
                         threading.Barrier(opts.clients, action=at_measure), server)
        clients = [
            _Client(opts, shared, new_stub(ch), f"load-{i}") for i, ch in enumerate(channels)
        ]
        threads = [threading.Thread(target=c.run, name=f"client-{i}")
                   for i, c in enumerate(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        after = server.stats() if server else None
        progress.close()
        for ch in channels:
            ch.close()
        _raise_first_error(w.name, clients, server)
    finally:
        if server is not None:
            server.stop()
    report = Report.from_collector(opts.label or f"{w.name}/{w.size}", shared.measured)
    report.deleted = shared.deleted
    report.client_cpu_s = time.process_time() - cpu0
    if server is not None:
        final = server.final or after
        before = shared.at_measure[0] if shared.at_measure else None
        if final is not None:
            report.server_cpu_s = final.cpu_seconds
            report.server_peak_rss_bytes = final.peak_rss_bytes
            if before is not None and after is not None:
                report.server_cpu_measured_s = after.cpu_seconds - before.cpu_seconds
    report.settings = {
        "Nodes": w.nodes, "Mode": opts.mode, "BatchSize": opts.batch_size,
        "Clients": opts.clients,
        "FeatureGates": opts.feature_gates or w.feature_gates or "default",
        **opts.extra,
    }
    report.nodes_used = len(shared.nodes_used)
    if shared.nodes_used:
        report.pods_per_node = (min(shared.nodes_used.values()), max(shared.nodes_used.values()))
    return report


# -- command line ---------------------------------------------------------------------------------
