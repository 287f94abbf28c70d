"""What the loop-slice test modules share: the slice length, a slice that ends after k pods, and
a response's placements as tuples."""

from __future__ import annotations

from collections.abc import Callable

from schedsvc.v1 import schedule_pb2 as pb

SLICE = 0.01


def _after(k: int) -> Callable[[], bool]:
    """A slice that ends after k pods (asked before each pod)."""
    left = iter([False] * k)
    return lambda: next(left, True)


def _placed(resp: pb.ScheduleResponse | None) -> list[tuple[str, str, int]]:
    assert resp is not None
    return [(p.pod_uid, p.node_name, p.outcome) for p in resp.placements]
