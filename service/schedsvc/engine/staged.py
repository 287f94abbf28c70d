"""A staged replace: a cluster's next snapshot built aside over several UpdateSnapshot chunks
and swapped in at once.

A client replaying its state after a server restart sends more than one message holds: nodes
first, their pods later. Applied one by one, a Schedule arriving between them would be placed
against nodes without their pods and over-commit them. Built aside, the chunks are invisible
until the commit, and the cluster refuses Schedule and Explain while one is open (they would
answer from a state its owner is replacing). One staged replace per cluster: a newer one
supersedes it, and one left idle (its client gone) is dropped, so it never blocks a cluster
for long.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import FailedPrecondition
from ..framework.snapshot import Snapshot

if TYPE_CHECKING:
    from .update_types import SnapshotUpdate

__all__ = ["STAGED_IDLE_SECONDS", "Staged", "StagedReplace"]

# a staged replace with no chunk for this long is dropped: a replay's chunks follow each other
# within a round trip; a minute is a client that died mid-replay
STAGED_IDLE_SECONDS = 60.0


@dataclass(slots=True)
class Staged:
    id: str
    snapshot: Snapshot
    touched: float


class StagedReplace:
    """The open staged replace of one cluster, if any. Used under the cluster's lock."""

    def __init__(
        self, idle_seconds: float = STAGED_IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.idle_seconds = idle_seconds
        self.clock = clock
        # the open staged replace, maybe idle past its time (current() drops that one)
        self.open: Staged | None = None

    def current(self) -> Staged | None:
        """The open staged replace; one idle past `idle_seconds` is dropped first."""
        st = self.open
        if st is not None and self.clock() - st.touched > self.idle_seconds:
            self.open = st = None
        return st

    def begin(self, upd: SnapshotUpdate) -> Staged:
        """A new staged state for a first chunk; it supersedes the open one only once `keep`
        takes it (a rejected first chunk leaves the open one as it was)."""
        return Staged(uuid.uuid4().hex, Snapshot(), self.clock())

    def resume(self, upd: SnapshotUpdate) -> Staged:
        """The staged state a later chunk names; FailedPrecondition when it is gone."""
        st = self.current()
        if st is None or st.id != upd.staged_replace:
            raise FailedPrecondition(
                f"no open staged replace {upd.staged_replace!r}: it was committed, superseded "
                f"by a newer one, or idle for more than {self.idle_seconds:g}s; start it again"
            )
        return st

    def keep(self, st: Staged) -> None:
        """`st` took a chunk: it is the open staged replace, and not idle."""
        st.touched = self.clock()
        self.open = st

    def clear(self) -> None:
        self.open = None

    def refuse_if_open(self, cluster: str) -> None:
        """FailedPrecondition while a staged replace is open: the cluster is being replaced."""
        if self.current() is not None:
            raise FailedPrecondition(
                f"cluster {cluster!r} is being replaced (a staged replace is open): "
                "retry after its commit"
            )
