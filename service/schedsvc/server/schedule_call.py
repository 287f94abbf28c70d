"""One Schedule request, scheduled in slices that may run on different threads.

The asyncio server starts a short batch on its event loop (no thread hand-off at all) and moves
what is left past a time budget to an executor thread (aio_service.py, inline.py). A call holds
its cluster's admission slot from its conversion to `close`, and the cluster's lock from its
first pod to its last, across that move (a threading.Lock may be released by another thread
than the one that took it), so no other request's work ever lands inside a batch: its
placements and its response's generation stay one consistent view, as when it ran in one go.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

import grpc

from ..engine.schedule_one import Placement
from ..errors import InvalidArgument
from ..model import Outcome
from ..v1 import schedule_pb2 as pb
from .cache import request_scope
from .convert import CostlyPod
from .memory import estimate

if TYPE_CHECKING:
    from .servicer import ScheduleServicer

__all__ = ["LOOP_MAX_MISS_BYTES", "NOT_ATTEMPTED", "OutOfSlice", "ScheduleCall"]

NOT_ATTEMPTED = "not attempted: deadline exceeded"

# how often, at most, a batch asks gRPC whether its caller is still there (a call into the core
# per pod would cost more than a hinted pod's whole scheduling)
ACTIVE_CHECK_SECONDS = 0.005

_OUTCOME = {
    Outcome.SCHEDULED: pb.Placement.SCHEDULED,
    Outcome.UNSCHEDULABLE: pb.Placement.UNSCHEDULABLE,
    Outcome.REJECTED: pb.Placement.REJECTED,
}


class OutOfSlice(Exception):  # noqa: N818 - a signal, not an error
    """Converting the request outlasted the event loop's slice, or would (a pod the caches
    have not seen is larger than LOOP_MAX_MISS_BYTES): nothing was kept or taken; convert it
    on a thread instead (the caches' cost of one request says little of the next: pods they
    have not seen cost many times more)."""


# the largest pod the caches have not seen that may convert on the event loop: at about a
# microsecond per byte, 8 KiB is a few milliseconds, the longest the loop waits between two
# looks at the slice's clock (one before each pod); real pods are mostly under 2 KiB
LOOP_MAX_MISS_BYTES = 8 * 1024


def should_continue(
    context: grpc.ServicerContext, margin: float, clock: Callable[[], float] = time.monotonic
) -> Callable[[], bool]:
    """Asked by the engine between pods: stop once the caller is gone or its deadline is near.
    The deadline is read once and compared on the monotonic clock; whether the caller left is
    asked every ACTIVE_CHECK_SECONDS."""
    left = context.time_remaining()
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
            return bool(context.is_active())
        return True

    return check


def abort_unfinished(context: grpc.ServicerContext) -> NoReturn:
    """The batch stopped with nothing to deliver. Placements made before the stop stay assumed;
    a retry with the same uids returns them ("already placed") and schedules the rest."""
    left = context.time_remaining()
    code = (
        grpc.StatusCode.CANCELLED
        if context.is_active() is False and left is not None and left > 0
        else grpc.StatusCode.DEADLINE_EXCEEDED
    )
    context.abort(
        code,
        "batch stopped before its end: pods placed so far stay assumed; "
        "retry with the same uids to get their placements",
    )
    raise AssertionError("unreachable")  # abort raises


def _fill_placement(out: pb.Placement, p: Placement) -> None:
    """Set only what is set: a message built in place is 4x cheaper than one built from
    keyword arguments and appended (it is once per pod)."""
    out.pod_uid = p.pod_uid
    if p.node_name:
        out.node_name = p.node_name
    out.outcome = _OUTCOME[p.outcome]
    if p.message:
        out.message = p.message
    if p.reasons:
        out.reasons.update(p.reasons)
    if p.batched:
        out.batched = True
    out.cycle = p.cycle
    out.score = p.score
    out.nodes_evaluated = p.nodes_evaluated
    out.nodes_feasible = p.nodes_feasible
    if p.nominated_node_name:
        out.nominated_node_name = p.nominated_node_name
        for v in p.victims:
            out.victims.add(uid=v.uid, namespace=v.namespace, name=v.name, priority=v.priority)


class ScheduleCall:
    """A validated, admitted, converted Schedule request and the placements made so far.

    Raises the request's InvalidArgument or ResourceExhausted from the constructor, holding
    nothing; otherwise `close` must follow (it is idempotent)."""

    def __init__(
        self, servicer: ScheduleServicer, request: pb.ScheduleRequest,
        context: grpc.ServicerContext, past_slice: Callable[[], bool] | None = None,
    ) -> None:
        """`past_slice`, on the event loop: raise OutOfSlice once it is true (asked every few
        pods while converting)."""
        t0 = time.perf_counter()
        lim = servicer.limits
        if len(request.pods) > lim.max_pods_per_request:
            raise InvalidArgument("pods", f"at most {lim.max_pods_per_request} pods per request")
        name = servicer.cluster_name(request.cluster)
        self._admission = servicer.admission
        self._name = name
        self._admission.enter(name)
        self._memory = servicer.memory
        self._reserved = 0
        try:
            if past_slice is not None and not self._memory.roomy():
                raise OutOfSlice  # near the memory budget its size is computed: not on the loop
            self._reserved = self._memory.admit("this Schedule request", lambda: estimate(request))
            pod_from_pb = servicer.converter.pod_from_pb
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
                    raise InvalidArgument(
                        f"pods[{i}].uid", f"duplicate uid {p.uid!r} in the batch"
                    )
                seen.add(p.uid)
        except BaseException:
            self._memory.release(self._reserved)
            self._admission.leave(name)
            raise
        self.request = request
        self.context = context
        self.pods = pods
        self.cluster = servicer.engine.reader(name)
        self.epoch = servicer.engine.epoch
        self.placements: list[Placement] = []
        self.generation = 0
        self._check = should_continue(context, lim.deadline_margin_seconds, servicer.clock)
        self._locked = False
        self._closed = False
        self.stopped = False  # the caller's deadline or departure ended the batch early
        self.convert_seconds = time.perf_counter() - t0
        self.max_pod_seconds = 0.0  # the longest single pod so far (what a slice may block)

    @property
    def holds_lock(self) -> bool:
        """Whether the batch holds its cluster's lock (between its first pod and its last)."""
        return self._locked

    def over(self) -> bool:
        return self.stopped or len(self.placements) == len(self.pods)

    def step(self, stop: Callable[[], bool] | None = None, blocking: bool = True) -> bool:
        """Schedule pods until all are attempted, the caller stops the batch, or `stop` (asked
        before each pod: a slice's budget) says so. True when the batch is over; the cluster
        lock is then given back. False when `stop` ended the slice (the lock stays held for
        the next one) or, with `blocking` false, another request holds the lock."""
        if not self._locked:
            if not self.cluster.lock.acquire(blocking):
                return False
            self._locked = True
        check = self._check
        clock = time.perf_counter
        last = clock()

        def go_on() -> bool:
            nonlocal last
            t = clock()
            if t - last > self.max_pod_seconds:
                self.max_pod_seconds = t - last
            last = t
            if stop is not None and stop():
                return False
            if not check():
                self.stopped = True
                return False
            return True

        try:
            done = len(self.placements)
            out, self.generation = self.cluster.schedule_held(
                self.pods[done:], self.request.dry_run, go_on
            )
            self.placements += out
            go_on()  # the last pod's time
        except BaseException:
            self.close()
            raise
        if self.over():
            self._release()
            return True
        return False

    def _release(self) -> None:
        if self._locked:
            self._locked = False
            self.cluster.lock.release()

    def close(self) -> None:
        """Give back the lock (if held) and the admission slot, once."""
        self._release()
        if not self._closed:
            self._closed = True
            self._memory.release(self._reserved)
            self._admission.leave(self._name)

    def response(self) -> pb.ScheduleResponse | None:
        """The response if it can be sent: complete, or partial with at least one pod
        attempted and the caller still listening; None when there is nothing to deliver."""
        n = len(self.placements)
        if n < len(self.pods) and not (n and self.context.is_active()):
            return None
        out = pb.ScheduleResponse(generation=self.generation, epoch=self.epoch)
        add = out.placements.add
        for placed in self.placements:
            _fill_placement(add(), placed)
        for p in self.pods[n:]:
            add(pod_uid=p.uid, message=NOT_ATTEMPTED)
        return out

    def deliver(self, unary: bool) -> pb.ScheduleResponse | None:
        """The response; a batch stopped with nothing to deliver aborts the call (unary) or
        the stream, unless the stream's caller left (None: end it quietly)."""
        resp = self.response()
        if resp is None and (unary or self.context.is_active()):
            abort_unfinished(self.context)
        return resp
