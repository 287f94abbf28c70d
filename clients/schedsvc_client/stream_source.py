"""The caller's batches behind ScheduleStream: pulled by one stream attempt at a time, each
pulled batch pending until its answer comes, so a broken stream's unanswered batches can be
sent again in order."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence

from schedsvc.v1 import schedule_pb2 as pb

__all__ = ["BatchSource"]


class BatchSource:
    def __init__(self, batches: Iterable[Sequence[pb.Pod]]) -> None:
        self._source = iter(batches)
        self._lock = threading.Lock()  # one stream attempt pulls from `_source` at a time
        self.exhausted = threading.Event()

    def requests(
        self,
        pending: deque[list[pb.Pod]],
        dead: threading.Event,
        request: Callable[[list[pb.Pod]], pb.ScheduleRequest],
    ) -> Iterator[pb.ScheduleRequest]:
        """One attempt's requests: each batch pulled is appended to `pending` before it is
        sent; the attempt stops pulling once `dead` is set."""
        while True:
            with self._lock:
                if dead.is_set():
                    return
                try:
                    b = list(next(self._source))
                except StopIteration:
                    self.exhausted.set()
                    return
                pending.append(b)
            yield request(b)

    def unanswered(self, pending: deque[list[pb.Pod]]) -> list[list[pb.Pod]]:
        """A dead attempt's pending batches, once no pull of it is still adding to them."""
        with self._lock:
            return list(pending)
