"""One ScheduleStream's requests between the event loop and the engine's threads.

A stream's requests are answered in order, one at a time, on an executor thread; an idle stream
holds no thread. The loop reads a request only once the answer before it is taken to be written
(READ_AHEAD), and reads it while that answer is written; the queue's worker goes back to the pool
when the queue is empty. Reading further ahead, so that the engine's thread works queued
requests back to back, gained ~8 % of stream throughput on a quiet 2-core machine but lost
~30 % when other processes kept the cores busy: the loop then takes the GIL from the engine's
thread several times per request, and each hand-off waits for the OS to schedule the other
thread (bench/stream_probe.py, bench/AB-old-new.md).

Anything that ends the stream (a refusal, undecodable bytes, the end of the requests) travels
the same queue as a `Pass`, so it takes effect after the answers to the requests before it.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

__all__ = ["READ_AHEAD", "END", "Pass", "StreamPipe"]

# requests read and not yet taken to be written, per stream (see above for why not more)
READ_AHEAD = 1


class Pass:
    """An outcome that goes to the loop in its place in the queue without running: an
    exception that ends the stream, or END."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value


class _End:
    __slots__ = ()


END = _End()  # the requests are over: the stream ends after the answers before it


class StreamPipe:
    """Queue on the loop, work on one executor thread at a time, answers back in order.

    `step(request)` answers a request (None when the caller left); an exception it raises is
    handed to the loop as the stream's last outcome. `on_done(n)` runs on the loop whenever n
    queued requests are finished or dropped (the server's in-flight count)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        executor: Executor,
        step: Callable[[Any], Any],
        on_done: Callable[[int], None],
    ) -> None:
        self._loop = loop
        self._executor = executor
        self._step = step
        self._on_done = on_done
        self._lock = threading.Lock()  # guards _queue, _running and _closed across threads
        self._queue: deque[Any] = deque()
        self._running = False
        self._closed = False
        self._answers: deque[Any] = deque()  # loop only
        self._waiter: asyncio.Future[None] | None = None
        self.credits = asyncio.Semaphore(READ_AHEAD)

    # -- the loop's side ----------------------------------------------------------------------

    def push(self, item: Any) -> None:
        """Queue a request or a Pass; start a thread on the queue if none works it."""
        with self._lock:
            if self._closed:
                return
            self._queue.append(item)
            if self._running:
                return
            self._running = True
        try:
            # the stream's contextvars (the RPC's tracing span) follow the work to its thread
            self._executor.submit(contextvars.copy_context().run, self._drain)
        except RuntimeError as exc:  # the executor is shut down: the server is stopping
            self._close_queue(exc)

    def _close_queue(self, exc: BaseException) -> None:
        with self._lock:
            dropped = self._drop()
            self._running = False
        self._deliver(Pass(exc), dropped)

    async def next(self) -> Any:
        """The next outcome in order: a response, None (the caller left), END or a Pass."""
        while not self._answers:
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        # taken to be written: the reader may read one more (answers waiting to be written
        # count against READ_AHEAD too, so a client that stops reading stops the stream)
        self.credits.release()
        return self._answers.popleft()

    def close(self) -> None:
        """The stream is over: queued requests never start; one running finishes (it stops
        between pods once its caller is gone) and is counted done when it does."""
        with self._lock:
            self._closed = True
            dropped = self._drop()
        if dropped:
            self._on_done(dropped)

    def _drop(self) -> int:
        """Empty the queue (lock held); how many requests were in it."""
        n = sum(1 for item in self._queue if type(item) is not Pass)
        self._queue.clear()
        return n

    def _deliver(self, outcome: Any, finished: int) -> None:
        if finished:
            self._on_done(finished)
        self._answers.append(outcome)
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    # -- the executor's side ------------------------------------------------------------------

    def _drain(self) -> None:
        """Work the queue until it is empty or the stream's last outcome is reached."""
        while True:
            with self._lock:
                if self._closed or not self._queue:
                    self._running = False
                    return
                item = self._queue.popleft()
            finished = 0
            if type(item) is Pass:
                outcome: Any = item
            else:
                finished = 1
                try:
                    outcome = self._step(item)
                except BaseException as exc:  # _Abort and errors alike: the loop ends the call
                    outcome = Pass(exc)
            last = outcome is None or type(outcome) is Pass
            if last:  # nothing after a stream's last outcome runs
                with self._lock:
                    self._closed = True
                    finished += self._drop()
                    self._running = False
            try:
                self._loop.call_soon_threadsafe(self._deliver, outcome, finished)
            except RuntimeError:  # the loop is closed: the server is gone
                return
            if last:
                return
