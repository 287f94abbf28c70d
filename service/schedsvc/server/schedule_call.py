"""One Schedule request, scheduled in slices that may run on different threads; no gRPC here.

The asyncio servicer starts a short batch on its event loop (no thread hand-off at all) and
moves what is left past a time budget to an executor thread (servicer.py, inline.py). A call
holds its cluster's admission slot from its conversion to `close`, and its cluster from its
first pod to its last, across that move (Cluster.run_slice keeps the cluster's lock between
slices until the batch's last one), so no other request's work ever lands inside a batch: its
placements and its response's generation stay one consistent view, as when it ran in one go.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from ..engine.pod_group_order import group_key
from ..engine.schedule_one import Placement
from ..engine.scheduler import Engine
from ..errors import Cancelled, DeadlineExceeded, InvalidArgument, SchedsvcError
from ..model import Pod
from ..v1 import schedule_pb2 as pb
from .admission import Admission
from .cache import request_scope
from .convert import Converter, CostlyPod
from .convert_results import fill_placement, fill_pod_group
from .limits import Limits
from .memory import MemoryBudget, estimate

__all__ = [
    "LOOP_MAX_MISS_BYTES", "NOT_ATTEMPTED", "Caller", "OutOfSlice", "ScheduleCall", "Serving",
]

NOT_ATTEMPTED = "not attempted: deadline exceeded"

# how often, at most, a batch asks whether its caller is still there (a call into gRPC's core
# per pod would cost more than a hinted pod's whole scheduling)
ACTIVE_CHECK_SECONDS = 0.005

# the largest pod the caches have not seen that may convert on the event loop: at about a
# microsecond per byte, 8 KiB is a few milliseconds, the longest the loop waits between two
# looks at the slice's clock (one before each pod); real pods are mostly under 2 KiB
LOOP_MAX_MISS_BYTES = 8 * 1024

_STOPPED = (
    "batch stopped before its end: pods placed so far stay assumed; "
    "retry with the same uids to get their placements"
)


class OutOfSlice(Exception):  # noqa: N818 - a signal, not an error
    """Converting the request outlasted the event loop's slice, or would (a pod the caches
    have not seen is larger than LOOP_MAX_MISS_BYTES): nothing was kept or taken; convert it
    on a thread instead (the caches' cost of one request says little of the next: pods they
    have not seen cost many times more)."""


class Caller(Protocol):
    """What a batch asks of whoever waits for its answer (the servicer's call, a test)."""

    def time_remaining(self) -> float | None: ...

    def is_active(self) -> bool: ...


class Serving(Protocol):
    """What a call uses of the request handler (request_handler.RequestHandler)."""

    engine: Engine
    limits: Limits
    admission: Admission
    memory: MemoryBudget
    converter: Converter
    clock: Callable[[], float]
    # the GenericWorkload gate (Engine.generic_workload), read once: a server's gates are
    # fixed at its start, and a plain request's path stays one call into the engine shorter
    grouped: bool

    def cluster_name(self, name: str) -> str: ...


def should_continue(
    caller: Caller, margin: float, clock: Callable[[], float] = time.monotonic
) -> Callable[[], bool]:
    """Asked by the engine between pods: stop once the caller is gone or its deadline is near.
    The deadline is read once and compared on the monotonic clock; whether the caller left is
    asked every ACTIVE_CHECK_SECONDS."""
    left = caller.time_remaining()
    now = clock()
    deadline = math.inf if left is None else now + left - margin
    next_check = now + ACTIVE_CHECK_SECONDS

    def check() -> bool:
        nonlocal next_check
        t = clock()
        if t >= deadline:
            return False
        if t >= next_check:
            next_check = t + ACTIVE_CHECK_SECONDS
            return bool(caller.is_active())
        return True

    return check


def unfinished(caller: Caller) -> SchedsvcError:
    """Why a batch stopped with nothing to deliver. Placements made before the stop stay
    assumed; a retry with the same uids returns them ("already placed") and schedules the
    rest."""
    left = caller.time_remaining()
    if caller.is_active() is False and left is not None and left > 0:
        return Cancelled(_STOPPED)
    return DeadlineExceeded(_STOPPED)


def _convert(
    serving: Serving, request: pb.ScheduleRequest, past_slice: Callable[[], bool] | None
) -> list[Pod]:
    """The request's pods, each uid once; on the loop (`past_slice`), OutOfSlice once the
    slice is over or a pod too costly to convert there comes."""
    pod_from_pb = serving.converter.pod_from_pb
    with request_scope():  # an OutOfSlice drops what the scope cached
        if past_slice is None:
            pods = [pod_from_pb(p, f"pods[{i}]") for i, p in enumerate(request.pods)]
        else:
            pods = []
            for i, msg in enumerate(request.pods):
                if i and past_slice():
                    raise OutOfSlice
                try:
                    pods.append(pod_from_pb(msg, f"pods[{i}]", LOOP_MAX_MISS_BYTES))
                except CostlyPod:
                    raise OutOfSlice from None
    seen: set[str] = set()
    for i, p in enumerate(pods):
        if p.uid in seen:
            raise InvalidArgument(f"pods[{i}].uid", f"duplicate uid {p.uid!r} in the batch")
        seen.add(p.uid)
    return pods


class ScheduleCall:
    """A validated, admitted, converted Schedule request and the placements made so far.

    Raises the request's InvalidArgument or ResourceExhausted from the constructor, holding
    nothing; otherwise `close` must follow (it is idempotent)."""

    def __init__(
        self, serving: Serving, request: pb.ScheduleRequest, caller: Caller,
        past_slice: Callable[[], bool] | None = None,
    ) -> None:
        """`past_slice`, on the event loop: raise OutOfSlice once it is true (asked every few
        pods while converting)."""
        t0 = time.perf_counter()
        lim = serving.limits
        if len(request.pods) > lim.max_pods_per_request:
            raise InvalidArgument("pods", f"at most {lim.max_pods_per_request} pods per request")
        name = serving.cluster_name(request.cluster)
        self._admission = serving.admission
        self._name = name
        self._admission.enter(name)
        self._memory = serving.memory
        self._reserved = 0
        try:
            if past_slice is not None and not self._memory.roomy():
                raise OutOfSlice  # near the memory budget its size is computed: not on the loop
            self._reserved = self._memory.admit("this Schedule request", lambda: estimate(request))
            pods = _convert(serving, request, past_slice)
            # a pod group's members gathered at its first member (GenericWorkload), so every
            # slice, and a deadline's cut, falls between groups
            self.pods: Sequence[Pod] = serving.engine.order_pods(pods) if serving.grouped else pods
            # where each request pod is in self.pods, when they differ (the response keeps
            # the request's order: a client pairs placements with its pods by position)
            self._request_order: list[int] | None = None
            if self.pods is not pods:
                at = {p.uid: k for k, p in enumerate(self.pods)}
                self._request_order = [at[p.uid] for p in pods]
        except BaseException:
            self._memory.release(self._reserved)
            self._admission.leave(name)
            raise
        self.request = request
        self.caller = caller
        self.cluster = serving.engine.reader(name)
        self.epoch = serving.engine.epoch
        self._grouped = serving.grouped  # pods of a PodGroup answer as one
        self.placements: list[Placement] = []
        self.generation = 0
        self._check = should_continue(caller, lim.deadline_margin_seconds, serving.clock)
        self._held = False
        self._closed = False
        self.stopped = False  # the caller's deadline or departure ended the batch early
        self.convert_seconds = time.perf_counter() - t0
        self.max_pod_seconds = 0.0  # the longest single pod so far (what a slice may block)

    @property
    def holds_lock(self) -> bool:
        """Whether the batch holds its cluster (between its first pod and its last)."""
        return self._held

    def over(self) -> bool:
        return self.stopped or len(self.placements) == len(self.pods)

    def _go_on(self, stop: Callable[[], bool] | None) -> Callable[[], bool]:
        """Asked before each pod: times the pod before (the first call starts the clock, the
        cluster taken by then), then asks the slice, then the caller."""
        check = self._check
        clock = time.perf_counter
        last: float | None = None

        def go_on() -> bool:
            nonlocal last
            t = clock()
            if last is not None and t - last > self.max_pod_seconds:
                self.max_pod_seconds = t - last
            last = t
            if stop is not None and stop():
                return False
            if not check():
                self.stopped = True
                return False
            return True

        return go_on

    def step(self, stop: Callable[[], bool] | None = None, blocking: bool = True) -> bool:
        """Schedule pods until all are attempted, the caller stops the batch, or `stop` (asked
        before each pod: a slice's budget) says so. True when the batch is over; the cluster
        is then given back. False when `stop` ended the slice (the cluster stays held for the
        next one) or, with `blocking` false, another request holds the cluster."""
        go_on = self._go_on(stop)
        done = len(self.placements)
        try:
            res = self.cluster.run_slice(
                self.pods[done:], self.request.dry_run, go_on, held=self._held,
                blocking=blocking, stopped=self._caller_stopped,
            )
        except BaseException:
            self._held = False  # an error ends the batch: the engine gave the cluster back
            self.close()
            raise
        if res is None:
            return False
        out, self.generation = res
        self.placements += out
        # the engine gave the cluster back when the batch ended (every pod attempted, or the
        # caller stopped it); else it holds it for the next slice
        self._held = not self.over()
        go_on()  # the last pod's time (it may find the caller gone: then the batch ends here)
        if self.over():
            self._release()
            return True
        return False

    def _caller_stopped(self) -> bool:
        """Asked by the engine after a slice: the caller, not the slice's budget, stopped it."""
        return self.stopped

    def _release(self) -> None:
        if self._held:
            self._held = False
            self.cluster.end_batch()

    def close(self) -> None:
        """Give back the cluster (if held) and the admission slot, once."""
        self._release()
        if not self._closed:
            self._closed = True
            self._memory.release(self._reserved)
            self._admission.leave(self._name)

    def response(self) -> pb.ScheduleResponse | None:
        """The response if it can be sent: complete, or partial with at least one pod
        attempted and the caller still listening; None when there is nothing to deliver."""
        n = len(self.placements)
        if n < len(self.pods) and not (n and self.caller.is_active()):
            return None
        out = pb.ScheduleResponse(generation=self.generation, epoch=self.epoch)
        add = out.placements.add
        if self._request_order is None:
            for placed in self.placements:
                fill_placement(add(), placed)
            for p in self.pods[n:]:
                self._not_attempted(add(), p)
        else:  # groups gathered: answered in the request's order all the same
            for k in self._request_order:
                if k < n:
                    fill_placement(add(), self.placements[k])
                else:
                    self._not_attempted(add(), self.pods[k])
        if self._grouped:
            self._pod_groups(out, n)
        return out

    def _not_attempted(self, out: pb.Placement, pod: Pod) -> None:
        out.pod_uid = pod.uid
        out.message = NOT_ATTEMPTED
        if self._grouped and pod.pod_group:
            out.pod_group = group_key(pod)

    def _pod_groups(self, out: pb.ScheduleResponse, n: int) -> None:
        """One result per group, in the order of its first member: those the engine answered
        (one PodGroupResult shared by a cycle's members), then those past the deadline, each
        whole (the engine attempts a group whole or not at all), OUTCOME_UNSPECIFIED."""
        seen: set[int] = set()
        for placed in self.placements:
            group = placed.group
            if group is not None and id(group) not in seen:
                seen.add(id(group))
                fill_pod_group(out.pod_groups.add(), group)
        pending: set[str] = set()
        for p in self.pods[n:]:
            if p.pod_group and (key := group_key(p)) not in pending:
                pending.add(key)
                out.pod_groups.add(pod_group=key, message=NOT_ATTEMPTED)

    def deliver(self, unary: bool) -> pb.ScheduleResponse | None:
        """The response. A batch stopped with nothing to deliver raises Cancelled or
        DeadlineExceeded for a unary call, or a stream whose caller still listens; a stream
        whose caller left gets None (end it quietly)."""
        resp = self.response()
        if resp is None and (unary or self.caller.is_active()):
            raise unfinished(self.caller)
        return resp
