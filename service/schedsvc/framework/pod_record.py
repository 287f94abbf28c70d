"""The records of the pods a snapshot holds, and the indexes that follow them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..model import Pod
from .podinfo import PodInfo

__all__ = ["NominatedKey", "PodRecord", "PodListener"]


@dataclass(frozen=True, slots=True)
class NominatedKey:
    """The key of a nominated pod counted on its node for a two-pass filter. It is not a str,
    so it can never equal a pod uid a client sends."""

    uid: str


@dataclass(slots=True)
class PodRecord:
    """A pod the cluster holds: bound or assumed on `node_name`, or only nominated.

    A pod we assumed is kept as it was sent (its own node_name empty): the node is
    `node_name`, which is all any reader asks; building a bound copy cost a Pod and a
    PodInfo per placement."""

    info: PodInfo
    node_name: str  # "" for a pod that is only nominated
    assumed: bool  # placed by us, not (yet) confirmed by the client
    nominated_node_name: str = ""
    # set on the temporary record of a nominated pod counted for a two-pass filter
    temporary: NominatedKey | None = None

    @property
    def pod(self) -> Pod:
        return self.info.pod

    @property
    def key(self) -> str | NominatedKey:
        """What indexes key this record by: the uid, or the temporary's own key."""
        return self.temporary if self.temporary is not None else self.info.pod.uid


class PodListener(Protocol):
    """An incremental index over the pods on nodes (counts per selector, affinity terms)."""

    def pod_added(self, rec: PodRecord, row: int) -> None: ...
    def pod_removed(self, rec: PodRecord, row: int) -> None: ...
    def grow(self, capacity: int) -> None: ...
