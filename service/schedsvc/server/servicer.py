"""ScheduleService, the server's one servicer, on grpc's asyncio server: idle calls hold no
thread.

The event loop reads requests, enforces the stream and in-flight bounds, and writes responses.
Real work (conversion, validation, the engine) is the request handler's (request_handler.py,
no gRPC there) and runs on a thread of `executor`, with one exception: a Schedule request whose
cluster's pods are recently fast starts on the loop itself for a bounded slice (inline.py),
since handing a short batch to a thread and its answer back costs more than the batch; what is
left past the slice goes on on `rest_executor`, the batch keeping its cluster across the move
(schedule_call.py). An open stream waiting for its next request is a suspended coroutine, so
any number of them leave every thread free for other clusters, health and reflection (asyncio
servicers that never queue behind the engine, and wait behind at most one slice per loop
iteration).

The work sees a `_Caller`: the deadline read once and `is_active` false once the call is done
(gRPC's done callback, set from the loop). Whatever it raises reaches the loop, which ends the
call with that error's status (status.abort, the one place errors become status codes).
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor
from typing import Any, TypeAlias, TypeVar

import grpc

from ..engine.scheduler import Cluster
from ..errors import Cancelled, DeadlineExceeded, ResourceExhausted, SchedsvcError
from ..v1 import schedule_pb2 as pb
from ..v1 import schedule_pb2_grpc as pb_grpc
from .admission import Admission, StreamAdmission
from .decode import LARGE_REQUEST
from .gate import gated, need_of
from .inline import InlinePolicy
from .request_handler import RequestHandler
from .schedule_call import OutOfSlice, ScheduleCall
from .status import abort

__all__ = ["ScheduleServicer"]

T = TypeVar("T")
AioContext: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


# a request run on the executor: the call (its costs), and its response or why it stopped
# with nothing to deliver; or, for a request refused before it became a call, None, the error
# and the seconds it took
_Outcome: TypeAlias = (
    "tuple[ScheduleCall, pb.ScheduleResponse | None | SchedsvcError]"
    " | tuple[None, BaseException, float]"
)
_UNFINISHED = (Cancelled, DeadlineExceeded)


class _Done:
    """Whether the call is over: set on the loop, read by the work between pods. One flag
    (reads and writes of an attribute are atomic under the GIL); a threading.Event would
    build a Condition and a lock on every call for a wait nobody does."""

    __slots__ = ("is_set_",)

    def __init__(self) -> None:
        self.is_set_ = False

    def set(self, _context: object = None) -> None:
        self.is_set_ = True


class _Caller:
    """The caller as the work sees it off the loop (schedule_call.Caller)."""

    __slots__ = ("_deadline", "_done")

    def __init__(self, context: AioContext, done: _Done) -> None:
        left = context.time_remaining()
        self._deadline = None if left is None else time.monotonic() + left
        self._done = done

    def time_remaining(self) -> float | None:
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    def is_active(self) -> bool:
        return not self._done.is_set_


def _watch(context: AioContext) -> _Done:
    done = _Done()
    context.add_done_callback(done.set)
    return done


def _finish(call: ScheduleCall) -> None:
    """The rest of a batch whose first slice ran on the loop (it holds the cluster's lock)."""
    try:
        call.step()
    finally:
        call.close()


class ScheduleServicer(pb_grpc.ScheduleServiceServicer):
    """Bridges the asyncio server to the request handler on `executor`, bounding streams and
    work."""

    def __init__(
        self, handler: RequestHandler, executor: Executor,
        loop_slice_seconds: float = 0.0, rest_executor: Executor | None = None,
    ) -> None:
        """`rest_executor` runs the rest of batches whose first slice ran on the loop and took
        their cluster: its own threads, since such a batch holds its cluster while it waits
        for one, and on the request pool every thread could be a request waiting for that very
        cluster. Nothing on it ever waits for a cluster, so it always drains. Slices are only
        taken with one (`loop_slice_seconds` > 0)."""
        self.handler = handler
        self.executor = executor
        self.rest_executor = rest_executor
        lim = handler.limits
        self.streams = StreamAdmission(lim.max_streams, lim.max_streams_per_cluster)
        self.max_in_flight = lim.max_in_flight
        self._in_flight = 0  # touched on the loop only
        self.inline = InlinePolicy(loop_slice_seconds if rest_executor is not None else 0.0)

    def in_flight(self) -> int:
        """Requests handed to the executor and not finished (queued or running)."""
        return self._in_flight

    def counts(self) -> dict[str, int]:
        """The server's counters for metrics (observability/metrics.py ServerCollector)."""
        return {
            "loop_slices": self.inline.slices,
            "loop_slice_rests": self.inline.rests,
            "requests_in_flight": self._in_flight,
            "streams_open": self.streams.open_streams(),
            **self.handler.memory.counts(),
        }

    def _done_on_loop(self) -> None:
        self._in_flight -= 1

    async def _run(
        self, context: AioContext, fn: Callable[[Any], T], request: Any,
        cancelled: Callable[[], None] | None = None,
    ) -> T:
        """fn(request) on the executor, if the in-flight bound allows; when it does not or fn
        never starts, `cancelled` runs."""
        if 0 < self.max_in_flight <= self._in_flight:
            if cancelled is not None:
                cancelled()
            await abort(context, ResourceExhausted(
                f"the server has {self._in_flight} requests in flight (limit "
                f"{self.max_in_flight}, --max-in-flight): retry later", 0.5))
        return await self._submit(context, fn, request, cancelled=cancelled)

    async def _submit(
        self, context: AioContext, fn: Callable[..., T], *args: Any,
        cancelled: Callable[[], None] | None = None, executor: Executor | None = None,
    ) -> T:
        """fn(*args) on the executor. Work still queued when the call is cancelled never
        starts (then `cancelled` runs); work already running finishes (it stops between pods
        once the caller is gone) and holds its in-flight slot until then. Its errors become
        the call's status."""
        loop = asyncio.get_running_loop()
        self._in_flight += 1
        # the caller's contextvars (the RPC's tracing span) follow the work to its thread
        ctx = contextvars.copy_context()
        try:
            fut = (executor or self.executor).submit(ctx.run, fn, *args)
        except BaseException:  # a pool already shut down: nothing will ever run it
            self._in_flight -= 1
            if cancelled is not None:
                cancelled()
            raise
        if cancelled is not None:
            fut.add_done_callback(lambda f: cancelled() if f.cancelled() else None)
        try:
            return await asyncio.wrap_future(fut)
        except Exception as exc:  # noqa: BLE001 - the call's boundary: a status, not a trace
            await abort(context, exc)
        finally:
            if fut.done():
                self._in_flight -= 1
            else:  # the call was cancelled while its work runs: the slot ends with the work
                fut.add_done_callback(lambda _f: loop.call_soon_threadsafe(self._done_on_loop))

    def _whole(self, caller: _Caller, unary: bool) -> Callable[[pb.ScheduleRequest], _Outcome]:
        """A Schedule request run in one go on an executor thread, its response built there."""

        def run(request: pb.ScheduleRequest) -> _Outcome:
            t0 = time.perf_counter()
            try:
                call = ScheduleCall(self.handler, request, caller)
            except Exception as exc:  # noqa: BLE001 - its cost is recorded, then its status
                return None, exc, time.perf_counter() - t0
            try:
                call.step()
            finally:
                call.close()
            try:
                return call, call.deliver(unary)
            except _UNFINISHED as exc:  # recorded on the loop first, then the call's status
                return call, exc

        return run

    async def _on_executor(
        self, request: pb.ScheduleRequest, context: AioContext, done: _Done, unary: bool,
        cluster: Cluster | None,
    ) -> pb.ScheduleResponse | None:
        outcome = await self._run(context, self._whole(_Caller(context, done), unary), request)
        if outcome[0] is None:
            _, exc, seconds = outcome
            self.inline.rejected(cluster, seconds, len(request.pods))
            await abort(context, exc)
        call, resp = outcome
        self.inline.record(call)
        if isinstance(resp, SchedsvcError):
            await abort(context, resp)
        return resp

    async def _schedule(
        self, request: pb.ScheduleRequest, context: AioContext, done: _Done, unary: bool
    ) -> pb.ScheduleResponse | None:
        """A Schedule request. When the policy allows, its first slice runs right here on the
        loop, and a batch that fits the slice never meets a thread; the rest, or all of it,
        runs on the executor."""
        handler = self.handler
        try:
            cluster = handler.engine.find(handler.cluster_name(request.cluster))
        except SchedsvcError:
            cluster = None  # the executor's run reports the error
        stop = None if LARGE_REQUEST.get() else self.inline.begin(cluster, len(request.pods))
        if stop is None:
            return await self._on_executor(request, context, done, unary, cluster)
        t0 = time.perf_counter()
        try:
            call = ScheduleCall(handler, request, _Caller(context, done), self.inline.past_end)
        except OutOfSlice:  # converting it alone outlasted the slice: all of it on a thread
            self.inline.rests += 1
            return await self._on_executor(request, context, done, unary, cluster)
        except Exception as exc:  # noqa: BLE001 - becomes the call's status
            self.inline.rejected(cluster, time.perf_counter() - t0, len(request.pods))
            await abort(context, exc)
        return await self._slices(call, stop, context, unary)

    async def _slices(
        self, call: ScheduleCall, stop: Callable[[], bool], context: AioContext, unary: bool
    ) -> pb.ScheduleResponse | None:
        """A call's first slice here on the loop, and the rest, if any, on a thread."""
        try:
            over = call.step(stop, blocking=False)
        except Exception as exc:  # noqa: BLE001 - step has closed the call
            await abort(context, exc)
        if over:
            call.close()
        else:
            # the slice ran out: the rest holds the cluster, on the pool that never waits for
            # a cluster; or another request holds the cluster: the rest holds nothing and
            # waits for it on the request pool (on the rest pool it could take the thread a
            # batch that takes the cluster next needs to end, and neither would)
            pool = self.rest_executor if call.holds_lock else self.executor
            self.inline.rests += 1
            await self._submit(context, _finish, call, cancelled=call.close, executor=pool)
        self.inline.record(call)
        try:
            return call.deliver(unary)
        except _UNFINISHED as exc:
            await abort(context, exc)

    async def _per_cluster(
        self, fn: Callable[[Any], T], request: Any, context: AioContext, what: str,
        first: Admission | None = None,
    ) -> T:
        """A unary request that takes its cluster's lock: admitted per cluster here on the
        loop (by `first`, then by the cluster's queue), so a refused one never takes a
        thread; then run through gate.gated, which gives the slots back when it ends."""
        handler = self.handler
        slots = (handler.admission,) if first is None else (first, handler.admission)
        taken: list[Admission] = []
        try:
            name = handler.cluster_name(request.cluster)
            for a in slots:
                a.enter(name)
                taken.append(a)
        except SchedsvcError as exc:
            for a in taken:
                a.leave(name)
            await abort(context, exc)

        def leave() -> None:
            for a in slots:
                a.leave(name)

        work = gated(fn, leave, handler.memory, what, need_of(handler.engine, name, request))
        return await self._run(context, work, request, cancelled=leave)

    async def UpdateSnapshot(  # noqa: N802 - gRPC method name
        self, request: pb.UpdateSnapshotRequest, context: AioContext
    ) -> pb.UpdateSnapshotResponse:
        return await self._per_cluster(
            self.handler.update_snapshot, request, context, "this UpdateSnapshot"
        )

    async def Schedule(  # noqa: N802
        self, request: pb.ScheduleRequest, context: AioContext
    ) -> pb.ScheduleResponse:
        done = _watch(context)
        try:
            resp = await self._schedule(request, context, done, unary=True)
        finally:
            done.set()
        assert resp is not None  # deliver(unary=True) raises instead
        return resp

    async def Explain(  # noqa: N802
        self, request: pb.ExplainRequest, context: AioContext
    ) -> pb.ExplainResponse:
        return await self._per_cluster(self.handler.explain, request, context, "this Explain")

    async def Simulate(  # noqa: N802
        self, request: pb.SimulateRequest, context: AioContext
    ) -> pb.SimulateResponse:
        """Always on the executor (a step can outlast any loop slice and holds the lock), with
        its own per-cluster bound before the queue's."""
        done = _watch(context)
        caller = _Caller(context, done)
        try:
            return await self._per_cluster(
                lambda r: self.handler.simulate(r, caller), request, context, "this Simulate",
                first=self.handler.simulation_admission,
            )
        finally:
            done.set()

    async def DeleteCluster(  # noqa: N802
        self, request: pb.DeleteClusterRequest, context: AioContext
    ) -> pb.DeleteClusterResponse:
        return await self._run(context, self.handler.delete_cluster, request)

    async def ScheduleStream(  # noqa: N802
        self, request_iterator: AsyncIterator[pb.ScheduleRequest], context: AioContext
    ) -> AsyncIterator[pb.ScheduleResponse]:
        try:
            self.streams.open()
        except ResourceExhausted as exc:
            await abort(context, exc)
        joined: set[str] = set()
        done = _watch(context)
        try:
            async for request in request_iterator:
                try:
                    name = self.handler.cluster_name(request.cluster)
                    if name not in joined:
                        self.streams.join(name)
                        joined.add(name)
                except SchedsvcError as exc:
                    await abort(context, exc)
                resp = await self._schedule(request, context, done, unary=False)
                if resp is None:  # the caller left mid-batch
                    return
                yield resp
        finally:
            done.set()
            self.streams.close(joined)
