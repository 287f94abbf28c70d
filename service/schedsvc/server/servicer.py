"""ScheduleService: a thin adapter, proto -> domain -> engine -> domain -> proto."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import grpc

from ..engine.explain import Explanation
from ..engine.scheduler import Engine, SnapshotUpdate
from ..errors import InvalidArgument
from ..v1 import schedule_pb2 as pb
from ..v1 import schedule_pb2_grpc as pb_grpc
from .admission import Admission
from .cache import request_scope
from .convert import Converter
from .convert_preemption import pdb_key
from .counts import DEFAULT_MAX_ITEMS
from .memory import MemoryBudget, MemoryLimits
from .pauses import HeapPolicy
from .schedule_call import NOT_ATTEMPTED, ScheduleCall
from .status import mapped_errors

__all__ = ["NOT_ATTEMPTED", "Limits", "ScheduleServicer", "explanation_to_pb"]

@dataclass(frozen=True, slots=True)
class Limits:
    """Per-request limits: a request beyond them is INVALID_ARGUMENT, before any work."""

    max_pods_per_request: int = 10_000
    max_nodes_per_update: int = 100_000
    max_pods_per_update: int = 1_000_000
    # also the bound of remove_nodes (by max_nodes_per_update) and remove_pods (max_pods_...)
    max_namespaces_per_update: int = 100_000
    # PodDisruptionBudgets upserted, and removed, by one UpdateSnapshot: a list of their own,
    # as namespaces have, since budgets are neither nodes nor pods
    max_pdbs_per_update: int = 100_000
    max_cluster_name: int = 253
    # entries in any repeated or map field inside a pod, node or namespace (server/counts.py)
    max_items_per_field: int = DEFAULT_MAX_ITEMS
    # requests queued or running per cluster (Schedule, UpdateSnapshot, Explain: all that take
    # its lock); more is RESOURCE_EXHAUSTED (0 = no bound)
    max_queue_per_cluster: int = 8
    # open ScheduleStream calls in total and per cluster; more is RESOURCE_EXHAUSTED (0 = none)
    max_streams: int = 1024
    max_streams_per_cluster: int = 16
    # requests handed to the engine's threads and not finished, over all clusters (0 = none)
    max_in_flight: int = 256
    # stop a batch this long before the caller's deadline, so the partial answer still arrives
    deadline_margin_seconds: float = 0.05


def _requests(
    it: Iterator[pb.ScheduleRequest], context: grpc.ServicerContext
) -> Iterator[pb.ScheduleRequest]:
    """The stream's requests; ends quietly when the client goes away mid-read."""
    try:
        yield from it
    except grpc.RpcError:
        if context.is_active():
            raise


def _check_staging(request: pb.UpdateSnapshotRequest) -> None:
    """A staged replace's fields go together: the first chunk is replace + stage, a later one
    stage + staged_replace, and commit ends either."""
    if not request.stage:
        for fname in ("staged_replace", "commit"):
            if getattr(request, fname):
                raise InvalidArgument(fname, "only with stage (a chunk of a staged replace)")
        return
    if request.replace and request.staged_replace:
        raise InvalidArgument(
            "staged_replace", "a first chunk (replace) starts a new staged replace: no id"
        )
    if not request.replace and not request.staged_replace:
        raise InvalidArgument(
            "staged_replace", "required on a later chunk (the first chunk's answer names it)"
        )


def explanation_to_pb(e: Explanation) -> pb.ExplainResponse:
    out = pb.ExplainResponse(chosen_node=e.chosen_node, message=e.message, profile=e.profile)
    for n in e.nodes:
        v = out.nodes.add(
            name=n.name, feasible=n.feasible, plugin=n.plugin, reasons=list(n.reasons),
            total_score=n.total,
        )
        for plugin, (score, weight) in n.scores.items():
            v.scores.add(plugin=plugin, score=score, weight=weight, weighted=score * weight)
    for c in e.candidates:
        pc = out.candidates.add(node_name=c.node_name, num_pdb_violations=c.num_pdb_violations)
        for vic in c.victims:
            pc.victims.add(
                uid=vic.uid, namespace=vic.namespace, name=vic.name, priority=vic.priority
            )
    out.nominated_node_name = e.nominated_node
    return out


SETTLE_ITEMS = 256


def _settles(request: pb.UpdateSnapshotRequest) -> bool:
    """Whether an applied update leaves enough long-lived objects to freeze them (pauses.py):
    a replace or a commit, or many upserts; a trickle of small updates is left to the young
    collections."""
    if request.replace or request.commit:
        return True
    return len(request.upsert_nodes) + len(request.upsert_pods) >= SETTLE_ITEMS


class ScheduleServicer(pb_grpc.ScheduleServiceServicer):
    def __init__(
        self, engine: Engine, limits: Limits | None = None, memory: MemoryBudget | None = None
    ) -> None:
        """`memory`: the server-wide budget (memory.py); none by default."""
        self.engine = engine
        self.limits = limits or Limits()
        self.admission = Admission(self.limits.max_queue_per_cluster)
        self.memory = memory or MemoryBudget(MemoryLimits())
        self.converter = Converter(self.limits.max_items_per_field)
        self.clock: Callable[[], float] = time.monotonic  # tests move time by hand
        self.heap: HeapPolicy | None = None  # the serving process's (pauses.py)

    def cluster_name(self, name: str) -> str:
        """The cluster a request names ("" is "default"); InvalidArgument when too long."""
        if len(name) > self.limits.max_cluster_name:
            raise InvalidArgument("cluster", "name too long")
        return name or "default"

    def UpdateSnapshot(  # noqa: N802 - gRPC method name
        self, request: pb.UpdateSnapshotRequest, context: grpc.ServicerContext
    ) -> pb.UpdateSnapshotResponse:
        with mapped_errors(context), request_scope():
            lim = self.limits
            if len(request.upsert_nodes) > lim.max_nodes_per_update:
                raise InvalidArgument(
                    "upsert_nodes", f"at most {lim.max_nodes_per_update} nodes per request"
                )
            for fname, limit in (
                ("upsert_pods", lim.max_pods_per_update),
                ("remove_nodes", lim.max_nodes_per_update),
                ("remove_pods", lim.max_pods_per_update),
                ("upsert_namespaces", lim.max_namespaces_per_update),
                ("upsert_pod_disruption_budgets", lim.max_pdbs_per_update),
                ("remove_pod_disruption_budgets", lim.max_pdbs_per_update),
            ):
                if len(getattr(request, fname)) > limit:
                    raise InvalidArgument(fname, f"at most {limit} entries per request")
            _check_staging(request)
            conv = self.converter
            upd = SnapshotUpdate(
                replace=request.replace,
                upsert_nodes=[
                    conv.node_from_pb(n, f"upsert_nodes[{i}]")
                    for i, n in enumerate(request.upsert_nodes)
                ],
                remove_nodes=list(request.remove_nodes),
                upsert_pods=[
                    conv.pod_from_pb(p, f"upsert_pods[{i}]")
                    for i, p in enumerate(request.upsert_pods)
                ],
                remove_pods=list(request.remove_pods),
                upsert_namespaces=[
                    conv.namespace_from_pb(ns, f"upsert_namespaces[{i}]")
                    for i, ns in enumerate(request.upsert_namespaces)
                ],
                expected_generation=request.expected_generation,
                expected_epoch=request.expected_epoch,
                upsert_pod_disruption_budgets=[
                    conv.pdb_from_pb(b, f"upsert_pod_disruption_budgets[{i}]")
                    for i, b in enumerate(request.upsert_pod_disruption_budgets)
                ],
                remove_pod_disruption_budgets=[
                    pdb_key(k, f"remove_pod_disruption_budgets[{i}]")
                    for i, k in enumerate(request.remove_pod_disruption_budgets)
                ],
                stage=request.stage,
                staged_replace=request.staged_replace,
                commit=request.commit,
            )
            res = self.engine.cluster(self.cluster_name(request.cluster)).update(upd)
            if self.heap is not None and _settles(request):
                self.heap.settle()
            return pb.UpdateSnapshotResponse(
                generation=res.generation, nodes=res.nodes, pods=res.pods, epoch=res.epoch,
                staged_replace=res.staged_replace,
            )
        raise AssertionError("unreachable")

    def schedule_call(
        self, request: pb.ScheduleRequest, context: grpc.ServicerContext
    ) -> ScheduleCall:
        """A Schedule request run in one go on this thread (closed when it returns)."""
        call = ScheduleCall(self, request, context)
        try:
            call.step()
        finally:
            call.close()
        return call

    def Schedule(  # noqa: N802
        self, request: pb.ScheduleRequest, context: grpc.ServicerContext
    ) -> pb.ScheduleResponse:
        with mapped_errors(context):
            call = self.schedule_call(request, context)
        resp = call.deliver(unary=True)
        assert resp is not None  # deliver aborts instead
        return resp

    def stream_step(
        self, request: pb.ScheduleRequest, context: grpc.ServicerContext
    ) -> pb.ScheduleResponse | None:
        """One request of a stream: its response, or None when the caller left (end the
        stream quietly); a batch stopped by the deadline aborts the stream."""
        with mapped_errors(context):
            call = self.schedule_call(request, context)
        return call.deliver(unary=False)

    def ScheduleStream(  # noqa: N802
        self, request_iterator: Iterator[pb.ScheduleRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.ScheduleResponse]:
        for request in _requests(request_iterator, context):
            resp = self.stream_step(request, context)
            if resp is None:
                return
            yield resp

    def DeleteCluster(  # noqa: N802
        self, request: pb.DeleteClusterRequest, context: grpc.ServicerContext
    ) -> pb.DeleteClusterResponse:
        with mapped_errors(context):
            deleted = self.engine.delete_cluster(self.cluster_name(request.cluster))
            return pb.DeleteClusterResponse(deleted=deleted)
        raise AssertionError("unreachable")

    def Explain(  # noqa: N802
        self, request: pb.ExplainRequest, context: grpc.ServicerContext
    ) -> pb.ExplainResponse:
        with mapped_errors(context), request_scope():
            if not request.HasField("pod"):
                raise InvalidArgument("pod", "required")
            pod = self.converter.pod_from_pb(request.pod, "pod")
            cluster = self.engine.reader(self.cluster_name(request.cluster))
            return explanation_to_pb(cluster.explain(pod))
        raise AssertionError("unreachable")
