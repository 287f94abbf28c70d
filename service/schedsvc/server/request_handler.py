"""The service's requests without gRPC: proto -> domain -> engine -> proto.

Each method takes a decoded request and returns its response or raises a domain error
(schedsvc.errors); it never sees a gRPC context. The servicer (servicer.py) runs these on its
threads and turns errors into status codes in one place (status.py); benchmarks and tests call
them directly.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..engine.scheduler import Engine, SnapshotUpdate
from ..engine.simulate.steps import SimulationResult
from ..errors import InvalidArgument
from ..v1 import schedule_pb2 as pb
from .admission import Admission
from .cache import request_scope
from .convert import Converter
from .convert_pod_group import pod_group_from_pb, pod_group_ref, workload_from_pb
from .convert_preemption import pdb_key
from .convert_results import explanation_to_pb, group_explanation_to_pb
from .convert_simulation import result_to_pb, steps_from_pb
from .convert_storage_update import STORAGE_LISTS, storage_update_fields
from .limits import Limits
from .memory import MemoryBudget, MemoryLimits
from .pauses import HeapPolicy
from .schedule_call import Caller, ScheduleCall, should_continue, unfinished
from .simulation_limits import check_simulation, live_pods_on
from .simulation_stats import SimulationStats, outcome_of, pods_by_step

__all__ = ["SETTLE_ITEMS", "RequestHandler"]

SETTLE_ITEMS = 256

# UpdateSnapshot's lists beyond upsert_nodes, each with the Limits field that bounds it
_LIST_LIMITS = (
    ("upsert_pods", "max_pods_per_update"),
    ("remove_nodes", "max_nodes_per_update"),
    ("remove_pods", "max_pods_per_update"),
    ("upsert_namespaces", "max_namespaces_per_update"),
    ("upsert_pod_disruption_budgets", "max_pdbs_per_update"),
    ("remove_pod_disruption_budgets", "max_pdbs_per_update"),
    ("upsert_pod_groups", "max_pdbs_per_update"),
    ("remove_pod_groups", "max_pdbs_per_update"),
    ("upsert_workloads", "max_pdbs_per_update"),
    ("remove_workloads", "max_pdbs_per_update"),
    *((fname, "max_storage_objects_per_update") for fname in STORAGE_LISTS),
)


def _check_sizes(request: pb.UpdateSnapshotRequest, lim: Limits) -> None:
    if len(request.upsert_nodes) > lim.max_nodes_per_update:
        raise InvalidArgument(
            "upsert_nodes", f"at most {lim.max_nodes_per_update} nodes per request"
        )
    for fname, limit_name in _LIST_LIMITS:
        limit = getattr(lim, limit_name)
        if len(getattr(request, fname)) > limit:
            raise InvalidArgument(fname, f"at most {limit} entries per request")


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


def _settles(request: pb.UpdateSnapshotRequest) -> bool:
    """Whether an applied update leaves enough long-lived objects to freeze them (pauses.py):
    a replace or a commit, or many upserts; a trickle of small updates is left to the young
    collections."""
    if request.replace or request.commit:
        return True
    return len(request.upsert_nodes) + len(request.upsert_pods) >= SETTLE_ITEMS


def _update_from_pb(conv: Converter, request: pb.UpdateSnapshotRequest) -> SnapshotUpdate:
    return SnapshotUpdate(
        replace=request.replace,
        upsert_nodes=[
            conv.node_from_pb(n, f"upsert_nodes[{i}]") for i, n in enumerate(request.upsert_nodes)
        ],
        remove_nodes=list(request.remove_nodes),
        upsert_pods=[
            conv.pod_from_pb(p, f"upsert_pods[{i}]") for i, p in enumerate(request.upsert_pods)
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
        **storage_update_fields(request, conv.caches, conv.max_items),
        **_pod_group_fields(request, conv.max_items),
    )


def _pod_group_fields(request: pb.UpdateSnapshotRequest, max_items: int) -> dict[str, Any]:
    """scheduling.k8s.io/v1beta1 objects (convert_pod_group.py): PodGroups and Workloads."""
    return {
        "upsert_pod_groups": [
            pod_group_from_pb(g, f"upsert_pod_groups[{i}]", max_items)
            for i, g in enumerate(request.upsert_pod_groups)
        ],
        "remove_pod_groups": [
            pod_group_ref(k, f"remove_pod_groups[{i}]")
            for i, k in enumerate(request.remove_pod_groups)
        ],
        "upsert_workloads": [
            workload_from_pb(w, f"upsert_workloads[{i}]", max_items)
            for i, w in enumerate(request.upsert_workloads)
        ],
        "remove_workloads": [
            pod_group_ref(k, f"remove_workloads[{i}]")
            for i, k in enumerate(request.remove_workloads)
        ],
    }


class RequestHandler:
    """Every RPC of ScheduleService as a plain method over one engine, with its limits,
    per-cluster admission, memory budget and conversion caches."""

    def __init__(
        self, engine: Engine, limits: Limits | None = None, memory: MemoryBudget | None = None
    ) -> None:
        """`memory`: the server-wide budget (memory.py); none by default."""
        self.engine = engine
        self.limits = limits or Limits()
        self.admission = Admission(self.limits.max_queue_per_cluster)
        # Simulate calls queued or running per cluster, taken before `admission`'s slot
        self.simulation_admission = Admission(
            self.limits.max_concurrent_simulations_per_cluster,
            flag="--max-concurrent-simulations-per-cluster", what="simulations",
        )
        self.simulations = SimulationStats()
        self.memory = memory or MemoryBudget(MemoryLimits())
        self.converter = Converter(self.limits.max_items_per_field)
        self.grouped = engine.generic_workload  # GenericWorkload: fixed at the server's start
        self.clock: Callable[[], float] = time.monotonic  # tests move time by hand
        self.heap: HeapPolicy | None = None  # the serving process's (pauses.py)

    def cluster_name(self, name: str) -> str:
        """The cluster a request names ("" is "default"); InvalidArgument when too long."""
        if len(name) > self.limits.max_cluster_name:
            raise InvalidArgument("cluster", "name too long")
        return name or "default"

    def update_snapshot(self, request: pb.UpdateSnapshotRequest) -> pb.UpdateSnapshotResponse:
        with request_scope():
            _check_sizes(request, self.limits)
            _check_staging(request)
            upd = _update_from_pb(self.converter, request)
            res = self.engine.cluster(self.cluster_name(request.cluster)).update(upd)
            if self.heap is not None and _settles(request):
                self.heap.settle()
            return pb.UpdateSnapshotResponse(
                generation=res.generation, nodes=res.nodes, pods=res.pods, epoch=res.epoch,
                staged_replace=res.staged_replace,
            )

    def schedule_call(self, request: pb.ScheduleRequest, caller: Caller) -> ScheduleCall:
        """A Schedule request run in one go on this thread (closed when it returns)."""
        call = ScheduleCall(self, request, caller)
        try:
            call.step()
        finally:
            call.close()
        return call

    def schedule(self, request: pb.ScheduleRequest, caller: Caller) -> pb.ScheduleResponse:
        """A unary Schedule: the placements, or Cancelled / DeadlineExceeded when the batch
        stopped before its first pod."""
        resp = self.schedule_call(request, caller).deliver(unary=True)
        assert resp is not None  # deliver raises instead
        return resp

    def delete_cluster(self, request: pb.DeleteClusterRequest) -> pb.DeleteClusterResponse:
        deleted = self.engine.delete_cluster(self.cluster_name(request.cluster))
        return pb.DeleteClusterResponse(deleted=deleted)

    def explain(self, request: pb.ExplainRequest) -> pb.ExplainResponse:
        with request_scope():
            if request.pod_group_members:
                return self._explain_group(request)
            if not request.HasField("pod"):
                raise InvalidArgument("pod", "required")
            pod = self.converter.pod_from_pb(request.pod, "pod")
            cluster = self.engine.reader(self.cluster_name(request.cluster))
            return explanation_to_pb(cluster.explain(pod))

    def _explain_group(self, request: pb.ExplainRequest) -> pb.ExplainResponse:
        """Explain for one PodGroup's members (Cluster.explain_group): all of one group,
        each uid once, and not with `pod`."""
        if request.HasField("pod"):
            raise InvalidArgument("pod", "set either pod or pod_group_members, not both")
        if len(request.pod_group_members) > self.limits.max_pods_per_request:
            raise InvalidArgument(
                "pod_group_members", f"at most {self.limits.max_pods_per_request} pods"
            )
        pods = [
            self.converter.pod_from_pb(p, f"pod_group_members[{i}]")
            for i, p in enumerate(request.pod_group_members)
        ]
        first, uids = pods[0], set()
        for i, p in enumerate(pods):
            if not p.pod_group or (p.namespace, p.pod_group) != (first.namespace, first.pod_group):
                raise InvalidArgument(
                    f"pod_group_members[{i}].scheduling_group",
                    "every member names the same PodGroup (in the same namespace)",
                )
            if p.uid in uids:
                raise InvalidArgument(f"pod_group_members[{i}].uid", f"duplicate uid {p.uid!r}")
            uids.add(p.uid)
        cluster = self.engine.reader(self.cluster_name(request.cluster))
        return group_explanation_to_pb(cluster.explain_group(pods))

    def simulate(self, request: pb.SimulateRequest, caller: Caller) -> pb.SimulateResponse:
        """The steps on a fork of the cluster (engine Cluster.simulate): checked whole first,
        nothing of the cluster changed. Cancelled / DeadlineExceeded when the run stopped
        before its first step ended; counted once in `simulations`."""
        t0 = time.perf_counter()
        failure: BaseException | None = None
        complete, pods = True, {}
        try:
            with request_scope():
                name = self.cluster_name(request.cluster)
                cluster = self.engine.reader(name)
                check_simulation(request, self.limits, live_pods_on(cluster))
                steps = steps_from_pb(self.converter, request)
                go_on = should_continue(caller, self.limits.deadline_margin_seconds, self.clock)
                res: SimulationResult = cluster.simulate(steps, go_on)
            complete, pods = res.complete, pods_by_step(res.results)
            if not res.results and not res.complete:
                raise unfinished(caller)
            out = pb.SimulateResponse(
                generation=res.generation, epoch=self.engine.epoch, complete=res.complete,
                stopped_at_step=0 if res.complete else res.stopped_at_step,
            )
            for r in res.results:
                result_to_pb(r, out.results.add())
            return out
        except BaseException as exc:
            failure = exc
            raise
        finally:
            self.simulations.record(
                outcome_of(failure, complete), time.perf_counter() - t0, pods)
