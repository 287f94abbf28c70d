"""A stream reads ahead and works its queued requests back to back (server/stream_pipe.py), yet
answers in order, ends where a bad request stands, and holds no thread while idle."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest

from schedsvc.server.servicer import Limits
from schedsvc.server.stream_pipe import END, READ_AHEAD, Pass, StreamPipe
from schedsvc.v1 import schedule_pb2 as pb
from tests.support import WAIT, Servers, load, pb_pod, snapshot_pods, wait_until

MALFORMED = b"\x12\x05\xff"  # field 2, length 5, one byte present


def _request(prefix: str, n: int, cluster: str = "") -> pb.ScheduleRequest:
    return pb.ScheduleRequest(cluster=cluster, pods=[pb_pod(f"{prefix}{i}") for i in range(n)])


def test_requests_before_a_malformed_one_are_answered_and_none_after_it_runs(
    servers: Servers,
) -> None:
    server, stub, channel = servers.start()
    load(stub, 4)
    call = channel.stream_stream("/schedsvc.v1.ScheduleService/ScheduleStream",
                                 request_serializer=None, response_deserializer=None)
    sent = [_request("a", 3).SerializeToString(), _request("b", 3).SerializeToString(),
            MALFORMED, _request("c", 3).SerializeToString()]
    answers: list[pb.ScheduleResponse] = []
    with pytest.raises(grpc.RpcError) as err:
        for raw in call(iter(sent), timeout=WAIT):
            answers.append(pb.ScheduleResponse.FromString(raw))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "malformed" in (err.value.details() or "")
    assert [[p.pod_uid for p in a.placements] for a in answers] == [
        ["a0", "a1", "a2"], ["b0", "b1", "b2"]]
    placed = snapshot_pods(server)
    assert {"a0", "b2"} <= set(placed) and not any(uid.startswith("c") for uid in placed)
    wait_until(lambda: server.aio_servicer.in_flight() == 0, what="in-flight back to 0")
    wait_until(lambda: server.aio_servicer.streams.open_streams() == 0, what="stream closed")


def test_a_refused_cluster_ends_the_stream_after_the_answers_before_it(servers: Servers) -> None:
    server, stub, _ = servers.start(limits=Limits(max_streams_per_cluster=1))
    load(stub, 2, cluster="a")
    load(stub, 2, cluster="b")
    hold = threading.Event()

    def holder() -> Iterator[pb.ScheduleRequest]:
        yield _request("h", 1, cluster="a")
        hold.wait(WAIT)

    held = stub.ScheduleStream(holder(), timeout=WAIT)
    assert next(held).placements[0].outcome == pb.Placement.SCHEDULED
    answers = []
    with pytest.raises(grpc.RpcError) as err:
        for resp in stub.ScheduleStream(iter([_request("x", 1, cluster="b"),
                                              _request("y", 1, cluster="a")]), timeout=WAIT):
            answers.append([p.pod_uid for p in resp.placements])
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert answers == [["x0"]]
    assert "y0" not in snapshot_pods(server, "a")
    hold.set()
    wait_until(lambda: server.aio_servicer.streams.open_streams() == 0, what="streams closed")
    assert server.aio_servicer.in_flight() == 0


# -- the pipe alone --------------------------------------------------------------------------


async def _drain_all(pipe: StreamPipe) -> list[Any]:
    out = []
    while True:
        item = await asyncio.wait_for(pipe.next(), WAIT)
        out.append(item)
        if item is None or type(item) is Pass:
            return out


def test_answers_come_in_order_and_nothing_runs_after_the_last() -> None:
    ran: list[int] = []
    finished: list[int] = []

    def step(n: int) -> Any:
        ran.append(n)
        return None if n == 3 else n * 10

    async def main() -> list[Any]:
        with ThreadPoolExecutor(1) as ex:
            pipe = StreamPipe(asyncio.get_running_loop(), ex, step, finished.append)
            for n in (1, 2, 3, 4, 5):  # 3's caller left: 4 and 5 never run
                pipe.push(n)
            return await _drain_all(pipe)

    assert asyncio.run(main()) == [10, 20, None]
    assert ran == [1, 2, 3]
    assert sum(finished) == 5  # three finished, two dropped: the in-flight count is whole


def test_an_error_in_a_step_ends_the_stream_in_its_place() -> None:
    boom = ValueError("boom")

    def step(n: int) -> Any:
        if n == 2:
            raise boom
        return n

    async def main() -> list[Any]:
        with ThreadPoolExecutor(1) as ex:
            pipe = StreamPipe(asyncio.get_running_loop(), ex, step, lambda n: None)
            for n in (1, 2, 3):
                pipe.push(n)
            return await _drain_all(pipe)

    out = asyncio.run(main())
    assert out[0] == 1 and type(out[1]) is Pass and out[1].value is boom and len(out) == 2


def test_an_idle_stream_gives_its_thread_back() -> None:
    """Two streams on a pool of ONE thread: the second is served while the first is open and
    idle, and the first is served again after; a stream that kept its thread would hang."""

    async def main() -> list[Any]:
        with ThreadPoolExecutor(1) as ex:
            loop = asyncio.get_running_loop()
            first = StreamPipe(loop, ex, lambda n: ("first", n), lambda n: None)
            second = StreamPipe(loop, ex, lambda n: ("second", n), lambda n: None)
            first.push(1)
            got = [await asyncio.wait_for(first.next(), WAIT)]
            second.push(1)
            got.append(await asyncio.wait_for(second.next(), WAIT))
            first.push(2)
            got.append(await asyncio.wait_for(first.next(), WAIT))
            first.push(Pass(END))
            got.append(await asyncio.wait_for(first.next(), WAIT))
            return got

    got = asyncio.run(main())
    assert got[:3] == [("first", 1), ("second", 1), ("first", 2)]
    assert type(got[3]) is Pass and got[3].value is END


def test_close_drops_what_is_queued_and_counts_it() -> None:
    started, release = threading.Event(), threading.Event()
    ran: list[int] = []
    finished: list[int] = []

    def step(n: int) -> int:
        ran.append(n)
        started.set()
        release.wait(WAIT)
        return n

    async def main() -> None:
        with ThreadPoolExecutor(1) as ex:
            pipe = StreamPipe(asyncio.get_running_loop(), ex, step, finished.append)
            for n in (1, 2, 3):
                pipe.push(n)
            await asyncio.get_running_loop().run_in_executor(None, started.wait, WAIT)
            pipe.close()  # 1 is running; 2 and 3 never start
            assert finished == [2]
            release.set()
            await asyncio.wait_for(pipe.next(), WAIT)  # 1's answer still comes back
            assert finished == [2, 1]

    asyncio.run(main())
    assert ran == [1]


def test_the_reader_waits_for_answers_to_be_taken() -> None:
    """At most READ_AHEAD requests are read and not yet taken to be written."""

    async def main() -> tuple[bool, bool]:
        with ThreadPoolExecutor(1) as ex:
            pipe = StreamPipe(asyncio.get_running_loop(), ex, lambda n: n, lambda n: None)
            for _ in range(READ_AHEAD):
                await asyncio.wait_for(pipe.credits.acquire(), WAIT)
            blocked = pipe.credits.locked()
            pipe.push(1)
            await asyncio.wait_for(pipe.next(), WAIT)
            return blocked, pipe.credits.locked()

    blocked, after = asyncio.run(main())
    assert blocked and not after
