"""ScheduleService: a thin adapter, proto -> domain -> engine -> domain -> proto."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import grpc

from ..engine.scheduler import Engine, Explanation, Placement, SnapshotUpdate
from ..errors import InvalidArgument
from ..model import Outcome
from ..v1 import schedule_pb2 as pb
from ..v1 import schedule_pb2_grpc as pb_grpc
from .convert import namespace_from_pb, node_from_pb, pod_from_pb
from .status import mapped_errors

__all__ = ["Limits", "ScheduleServicer", "placement_to_pb", "explanation_to_pb"]

_OUTCOME = {
    Outcome.SCHEDULED: pb.Placement.SCHEDULED,
    Outcome.UNSCHEDULABLE: pb.Placement.UNSCHEDULABLE,
    Outcome.REJECTED: pb.Placement.REJECTED,
}


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-request limits: a request beyond them is INVALID_ARGUMENT, before any work."""

    max_pods_per_request: int = 10_000
    max_nodes_per_update: int = 100_000
    max_pods_per_update: int = 1_000_000
    max_cluster_name: int = 253


def placement_to_pb(p: Placement) -> pb.Placement:
    return pb.Placement(
        pod_uid=p.pod_uid,
        node_name=p.node_name,
        outcome=_OUTCOME[p.outcome],
        message=p.message,
        reasons=p.reasons,
        batched=p.batched,
        cycle=p.cycle,
        score=p.score,
        nodes_evaluated=p.nodes_evaluated,
        nodes_feasible=p.nodes_feasible,
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
    return out


class ScheduleServicer(pb_grpc.ScheduleServiceServicer):
    def __init__(self, engine: Engine, limits: Limits | None = None) -> None:
        self.engine = engine
        self.limits = limits or Limits()

    def _cluster_name(self, name: str) -> str:
        if len(name) > self.limits.max_cluster_name:
            raise InvalidArgument("cluster", "name too long")
        return name or "default"

    def UpdateSnapshot(  # noqa: N802 - gRPC method name
        self, request: pb.UpdateSnapshotRequest, context: grpc.ServicerContext
    ) -> pb.UpdateSnapshotResponse:
        with mapped_errors(context):
            lim = self.limits
            if len(request.upsert_nodes) > lim.max_nodes_per_update:
                raise InvalidArgument(
                    "upsert_nodes", f"at most {lim.max_nodes_per_update} nodes per request"
                )
            if len(request.upsert_pods) > lim.max_pods_per_update:
                raise InvalidArgument(
                    "upsert_pods", f"at most {lim.max_pods_per_update} pods per request"
                )
            upd = SnapshotUpdate(
                replace=request.replace,
                upsert_nodes=[
                    node_from_pb(n, f"upsert_nodes[{i}]")
                    for i, n in enumerate(request.upsert_nodes)
                ],
                remove_nodes=list(request.remove_nodes),
                upsert_pods=[
                    pod_from_pb(p, f"upsert_pods[{i}]") for i, p in enumerate(request.upsert_pods)
                ],
                remove_pods=list(request.remove_pods),
                upsert_namespaces=[
                    namespace_from_pb(ns, f"upsert_namespaces[{i}]")
                    for i, ns in enumerate(request.upsert_namespaces)
                ],
                expected_generation=request.expected_generation,
                expected_epoch=request.expected_epoch,
            )
            res = self.engine.cluster(self._cluster_name(request.cluster)).update(upd)
            return pb.UpdateSnapshotResponse(
                generation=res.generation, nodes=res.nodes, pods=res.pods, epoch=res.epoch
            )
        raise AssertionError("unreachable")

    def _schedule(self, request: pb.ScheduleRequest) -> pb.ScheduleResponse:
        if len(request.pods) > self.limits.max_pods_per_request:
            raise InvalidArgument(
                "pods", f"at most {self.limits.max_pods_per_request} pods per request"
            )
        pods = [pod_from_pb(p, f"pods[{i}]") for i, p in enumerate(request.pods)]
        seen: set[str] = set()
        for i, p in enumerate(pods):
            if p.uid in seen:
                raise InvalidArgument(f"pods[{i}].uid", f"duplicate uid {p.uid!r} in the batch")
            seen.add(p.uid)
        cluster = self.engine.cluster(self._cluster_name(request.cluster))
        placements, generation = cluster.schedule(pods, dry_run=request.dry_run)
        return pb.ScheduleResponse(
            placements=[placement_to_pb(p) for p in placements],
            generation=generation,
            epoch=self.engine.epoch,
        )

    def Schedule(  # noqa: N802
        self, request: pb.ScheduleRequest, context: grpc.ServicerContext
    ) -> pb.ScheduleResponse:
        with mapped_errors(context):
            return self._schedule(request)
        raise AssertionError("unreachable")

    def ScheduleStream(  # noqa: N802
        self, request_iterator: Iterator[pb.ScheduleRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.ScheduleResponse]:
        with mapped_errors(context):
            for request in request_iterator:
                yield self._schedule(request)

    def Explain(  # noqa: N802
        self, request: pb.ExplainRequest, context: grpc.ServicerContext
    ) -> pb.ExplainResponse:
        with mapped_errors(context):
            if not request.HasField("pod"):
                raise InvalidArgument("pod", "required")
            pod = pod_from_pb(request.pod, "pod")
            cluster = self.engine.cluster(self._cluster_name(request.cluster))
            return explanation_to_pb(cluster.explain(pod))
        raise AssertionError("unreachable")
