"""ScheduleService on grpc's asyncio server: idle calls hold no thread.

The event loop reads requests, enforces the stream and in-flight bounds, and writes responses.
Real work (conversion, validation, the engine) runs the synchronous servicer's code on a thread
of `executor`, with one exception: a Schedule request whose cluster's pods are recently fast
starts on the loop itself for a bounded slice (inline.py), since handing a short batch to a
thread and its answer back costs more than the batch; what is left past the slice goes on on
`rest_executor`, the batch keeping its cluster's lock across the move (schedule_call.py). An
open stream waiting for its next request is a suspended coroutine, so any number of them leave
every thread free for other clusters, health and reflection (asyncio servicers that never queue
behind the engine, and wait behind at most one slice per loop iteration).

The synchronous code sees a `_CallContext`: the deadline read once, `is_active` false once
the call is done (gRPC's done callback, set from the loop), and `abort` raising `_Abort`, which
the loop turns into the real status with its trailing metadata (BadRequest, RetryInfo).
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Executor
from typing import Any, NoReturn, TypeAlias, TypeVar

import grpc

from ..engine.scheduler import Cluster
from ..errors import ResourceExhausted, SchedsvcError
from ..v1 import schedule_pb2 as pb
from ..v1 import schedule_pb2_grpc as pb_grpc
from .admission import StreamAdmission
from .decode import LARGE_REQUEST
from .gate import gated, need_of
from .inline import InlinePolicy
from .schedule_call import OutOfSlice, ScheduleCall
from .servicer import ScheduleServicer
from .status import status_for

__all__ = ["AsyncScheduleServicer"]

T = TypeVar("T")
AioContext: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


class _Abort(BaseException):
    """context.abort on an executor thread: carried to the loop, which aborts the real call.
    A BaseException so that no `except Exception` on the way can swallow it."""

    def __init__(self, code: grpc.StatusCode, details: str, trailing: Sequence[Any]) -> None:
        super().__init__(details)
        self.code = code
        self.details = details
        self.trailing = tuple(trailing)


# a request run on the executor: the call (its costs), and its response or its abort; or, for
# a request refused before it became a call, None, the error and the seconds it took
_Outcome: TypeAlias = (
    "tuple[ScheduleCall, pb.ScheduleResponse | None | _Abort] | tuple[None, BaseException, float]"
)


class _Done:
    """Whether the call is over: set on the loop, read by the work between pods. One flag
    (reads and writes of an attribute are atomic under the GIL); a threading.Event would
    build a Condition and a lock on every call for a wait nobody does."""

    __slots__ = ("is_set_",)

    def __init__(self) -> None:
        self.is_set_ = False

    def set(self, _context: object = None) -> None:
        self.is_set_ = True


class _CallContext:
    """The slice of grpc.ServicerContext the synchronous servicer uses, safe off the loop."""

    def __init__(self, context: AioContext, done: _Done) -> None:
        left = context.time_remaining()
        self._deadline = None if left is None else time.monotonic() + left
        self._done = done
        self._metadata = context.invocation_metadata()
        self._trailing: Sequence[Any] = ()

    def time_remaining(self) -> float | None:
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    def is_active(self) -> bool:
        return not self._done.is_set_

    def invocation_metadata(self) -> Any:
        return self._metadata

    def set_trailing_metadata(self, metadata: Sequence[Any]) -> None:
        self._trailing = metadata

    def abort(self, code: grpc.StatusCode, details: str) -> NoReturn:
        raise _Abort(code, details, self._trailing)


async def _abort(context: AioContext, exc: BaseException) -> NoReturn:
    if isinstance(exc, _Abort):
        code, details, trailing = exc.code, exc.details, exc.trailing
    else:
        st = status_for(exc)
        code, details, trailing = st.code, st.details, tuple(st.trailing_metadata)
    if trailing:
        context.set_trailing_metadata(trailing)
    await context.abort(code, details)
    raise AssertionError("unreachable")  # abort raises


def _finish(call: ScheduleCall) -> None:
    """The rest of a batch whose first slice ran on the loop (it holds the cluster's lock)."""
    try:
        call.step()
    finally:
        call.close()


class AsyncScheduleServicer(pb_grpc.ScheduleServiceServicer):
    """Bridges the asyncio server to `sync` on `executor`, bounding streams and work."""

    def __init__(
        self, sync: ScheduleServicer, executor: Executor,
        loop_slice_seconds: float = 0.0, rest_executor: Executor | None = None,
    ) -> None:
        """`rest_executor` runs the rest of batches whose first slice ran on the loop and took
        their cluster's lock: its own threads, since such a batch holds that lock while it
        waits for one, and on the request pool every thread could be a request waiting for
        that very lock. Nothing on it ever waits for a lock, so it always drains. Slices are
        only taken with one (`loop_slice_seconds` > 0)."""
        self.sync = sync
        self.executor = executor
        self.rest_executor = rest_executor
        lim = sync.limits
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
            **self.sync.memory.counts(),
        }

    def _done_on_loop(self) -> None:
        self._in_flight -= 1

    async def _run(
        self, context: AioContext, done: _Done,
        fn: Callable[[Any, Any], T], request: Any,
        cancelled: Callable[[], None] | None = None,
    ) -> T:
        """fn(request, call context) on the executor, if the in-flight bound allows; when it
        does not or fn never starts, `cancelled` runs."""
        if 0 < self.max_in_flight <= self._in_flight:
            if cancelled is not None:
                cancelled()
            await _abort(context, ResourceExhausted(
                f"the server has {self._in_flight} requests in flight (limit "
                f"{self.max_in_flight}, --max-in-flight): retry later", 0.5))
        return await self._submit(
            context, fn, request, _CallContext(context, done), cancelled=cancelled
        )

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
            await _abort(context, exc)
        except _Abort as exc:
            await _abort(context, exc)
        finally:
            if fut.done():
                self._in_flight -= 1
            else:  # the call was cancelled while its work runs: the slot ends with the work
                fut.add_done_callback(lambda _f: loop.call_soon_threadsafe(self._done_on_loop))

    def _whole(self, unary: bool) -> Callable[[pb.ScheduleRequest, Any], _Outcome]:
        """A Schedule request run in one go on an executor thread, its response built there."""

        def run(
            request: pb.ScheduleRequest, context: Any
        ) -> _Outcome:
            t0 = time.perf_counter()
            try:
                call = ScheduleCall(self.sync, request, context)
            except Exception as exc:  # noqa: BLE001 - its cost is recorded, then its status
                return None, exc, time.perf_counter() - t0
            try:
                call.step()
            finally:
                call.close()
            try:
                return call, call.deliver(unary)
            except _Abort as exc:  # recorded on the loop first, then the call's status
                return call, exc

        return run

    async def _on_executor(
        self, request: pb.ScheduleRequest, context: AioContext, done: _Done, unary: bool,
        cluster: Cluster | None,
    ) -> pb.ScheduleResponse | None:
        outcome = await self._run(context, done, self._whole(unary), request)
        if outcome[0] is None:
            _, exc, seconds = outcome
            self.inline.rejected(cluster, seconds, len(request.pods))
            await _abort(context, exc)
        call, resp = outcome
        self.inline.record(call)
        if isinstance(resp, _Abort):
            await _abort(context, resp)
        return resp

    async def _schedule(
        self, request: pb.ScheduleRequest, context: AioContext, done: _Done, unary: bool
    ) -> pb.ScheduleResponse | None:
        """A Schedule request. When the policy allows, its first slice runs right here on the
        loop, and a batch that fits the slice never meets a thread; the rest, or all of it,
        runs on the executor."""
        try:
            cluster = self.sync.engine.find(self.sync.cluster_name(request.cluster))
        except SchedsvcError:
            cluster = None  # the executor's run reports the error
        stop = None if LARGE_REQUEST.get() else self.inline.begin(cluster, len(request.pods))
        if stop is None:
            return await self._on_executor(request, context, done, unary, cluster)
        t0 = time.perf_counter()
        try:
            call = ScheduleCall(
                self.sync, request, _CallContext(context, done), self.inline.past_end
            )
        except OutOfSlice:  # converting it alone outlasted the slice: all of it on a thread
            self.inline.rests += 1
            return await self._on_executor(request, context, done, unary, cluster)
        except (Exception, _Abort) as exc:  # noqa: BLE001 - becomes the call's status
            self.inline.rejected(cluster, time.perf_counter() - t0, len(request.pods))
            await _abort(context, exc)
        try:
            over = call.step(stop, blocking=False)
        except (Exception, _Abort) as exc:  # noqa: BLE001 - step has closed the call
            await _abort(context, exc)
        if over:
            call.close()
        else:
            # the slice ran out: the rest holds the cluster, on the pool that never waits for
            # a lock; or another request holds the cluster: the rest holds nothing and waits
            # for it on the request pool (on the rest pool it could take the thread a batch
            # that takes the lock next needs to end, and neither would)
            pool = self.rest_executor if call.holds_lock else self.executor
            self.inline.rests += 1
            await self._submit(context, _finish, call, cancelled=call.close, executor=pool)
        self.inline.record(call)
        try:
            return call.deliver(unary)
        except _Abort as exc:
            await _abort(context, exc)

    @staticmethod
    def _watch(context: AioContext) -> _Done:
        done = _Done()
        context.add_done_callback(done.set)
        return done

    async def _unary(self, fn: Callable[[Any, Any], T], request: Any, context: AioContext) -> T:
        done = self._watch(context)
        try:
            return await self._run(context, done, fn, request)
        finally:
            done.set()

    async def _per_cluster(
        self, fn: Callable[[Any, Any], T], request: Any, context: AioContext, what: str
    ) -> T:
        """A unary request that takes its cluster's lock: admitted per cluster here on the
        loop, so a refused one never takes a thread; then run through gate.gated."""
        sync = self.sync
        try:
            name = sync.cluster_name(request.cluster)
            sync.admission.enter(name)
        except SchedsvcError as exc:
            await _abort(context, exc)
        work = gated(fn, sync.admission, name, sync.memory, what,
                     need_of(sync.engine, name, request))
        done = self._watch(context)
        try:
            return await self._run(
                context, done, work, request, cancelled=lambda: sync.admission.leave(name)
            )
        finally:
            done.set()

    async def UpdateSnapshot(  # noqa: N802 - gRPC method name
        self, request: pb.UpdateSnapshotRequest, context: AioContext
    ) -> pb.UpdateSnapshotResponse:
        return await self._per_cluster(
            self.sync.UpdateSnapshot, request, context, "this UpdateSnapshot"
        )

    async def Schedule(  # noqa: N802
        self, request: pb.ScheduleRequest, context: AioContext
    ) -> pb.ScheduleResponse:
        done = self._watch(context)
        try:
            resp = await self._schedule(request, context, done, unary=True)
        finally:
            done.set()
        assert resp is not None  # deliver(unary=True) aborts instead
        return resp

    async def Explain(  # noqa: N802
        self, request: pb.ExplainRequest, context: AioContext
    ) -> pb.ExplainResponse:
        return await self._per_cluster(self.sync.Explain, request, context, "this Explain")

    async def DeleteCluster(  # noqa: N802
        self, request: pb.DeleteClusterRequest, context: AioContext
    ) -> pb.DeleteClusterResponse:
        return await self._unary(self.sync.DeleteCluster, request, context)

    async def ScheduleStream(  # noqa: N802
        self, request_iterator: AsyncIterator[pb.ScheduleRequest], context: AioContext
    ) -> AsyncIterator[pb.ScheduleResponse]:
        try:
            self.streams.open()
        except ResourceExhausted as exc:
            await _abort(context, exc)
        joined: set[str] = set()
        done = self._watch(context)
        try:
            async for request in request_iterator:
                try:
                    name = self.sync.cluster_name(request.cluster)
                    if name not in joined:
                        self.streams.join(name)
                        joined.add(name)
                except SchedsvcError as exc:
                    await _abort(context, exc)
                resp = await self._schedule(request, context, done, unary=False)
                if resp is None:  # the caller left mid-batch
                    return
                yield resp
        finally:
            done.set()
            self.streams.close(joined)
