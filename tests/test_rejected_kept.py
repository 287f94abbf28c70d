"""Rejected and read-only input is not kept (issue #13, defect 3)."""

from __future__ import annotations

import gc
import tracemalloc

import grpc
import pytest

from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node, pb_pod
from tests.support import WAIT, Servers, load

MIB = 1024 * 1024


def _traced_growth(run: object) -> int:
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    run()  # type: ignore[operator]
    gc.collect()
    return tracemalloc.get_traced_memory()[0] - before


@pytest.fixture()
def traced() -> object:
    tracemalloc.start()
    yield
    tracemalloc.stop()


def test_rejected_requests_keep_nothing(servers: Servers, traced: object) -> None:
    _, stub, _ = servers.start()
    load(stub, 3)
    bad = "x" * MIB  # a label value longer than 63: invalid

    def run() -> None:
        for i in range(100):
            node = pb_node(f"m{i}")
            node.labels["ok"] = bad[: MIB - i]  # distinct each time, as a hostile client's
            pod = pb_pod(f"p{i}")
            pod.labels["app"] = bad[: MIB - i]
            for call, req in (
                (stub.UpdateSnapshot, pb.UpdateSnapshotRequest(upsert_nodes=[node])),
                (stub.Schedule, pb.ScheduleRequest(pods=[pod], dry_run=True)),
            ):
                with pytest.raises(grpc.RpcError) as err:
                    call(req, timeout=WAIT)
                assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT

    # 200 MiB of rejected input went through; what stays is noise
    growth = _traced_growth(run)
    assert growth < 8 * MIB, growth


def test_dry_runs_with_huge_valid_names_keep_a_bounded_amount(
    servers: Servers, traced: object
) -> None:
    _, stub, _ = servers.start()
    load(stub, 3)

    def run() -> None:
        for i in range(150):
            pod = pb_pod(f"p{i}")
            pod.containers[0].image = f"registry.example.com/{i}/" + "a" * (256 * 1024)
            out = stub.Schedule(pb.ScheduleRequest(pods=[pod], dry_run=True), timeout=WAIT)
            assert out.placements[0].outcome == pb.Placement.SCHEDULED

    # 37.5 MiB of distinct image names: the conversion caches are bounded in bytes, so only
    # what fits their budget (a few MiB of pods and containers) may stay
    growth = _traced_growth(run)
    assert growth < 32 * MIB, growth
