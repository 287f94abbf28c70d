"""Many clients on two clusters at once, unary and streaming, some killed mid-call.

Afterwards each cluster must hold exactly the pods some client saw placed, on the node it was
told, plus only pods whose answer was lost because their own client was killed mid-call.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator

import grpc

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc
from tests.builders import pb_pod
from tests.support import Servers, check_books, load, snapshot_pods

CLIENTS = 8
ROUNDS = 6
BATCH = 4


class Ledger:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.placed: dict[tuple[str, str], str] = {}  # (cluster, uid) -> node the client saw
        self.lost: set[tuple[str, str]] = set()  # sent by a killed call, answer never seen

    def saw(self, cluster: str, resp: pb.ScheduleResponse) -> None:
        with self.lock:
            for p in resp.placements:
                assert p.outcome == pb.Placement.SCHEDULED, p
                assert (cluster, p.pod_uid) not in self.placed
                self.placed[(cluster, p.pod_uid)] = p.node_name

    def lose(self, cluster: str, pods: list[pb.Pod]) -> None:
        with self.lock:
            self.lost.update((cluster, p.uid) for p in pods)


def _client(target: str, me: int, ledger: Ledger, errors: list[BaseException]) -> None:
    rng = random.Random(me)
    cluster = "a" if me % 2 else "b"
    channel = grpc.insecure_channel(target)
    stub = pb_grpc.ScheduleServiceStub(channel)
    try:
        for r in range(ROUNDS):
            batches = [[pb_pod(f"{me}-{r}-{k}-{j}", cpu="10m") for j in range(BATCH)]
                       for k in range(3)]
            mode = rng.choice(["unary", "stream", "kill-stream", "kill-unary", "kill-channel"])
            if mode == "unary":
                for b in batches:
                    ledger.saw(cluster, stub.Schedule(pb.ScheduleRequest(cluster=cluster, pods=b),
                                                      timeout=60))
            elif mode == "stream":
                reqs = (pb.ScheduleRequest(cluster=cluster, pods=b) for b in batches)
                for resp in stub.ScheduleStream(reqs, timeout=60):
                    ledger.saw(cluster, resp)
            elif mode == "kill-unary":
                fut = stub.Schedule.future(pb.ScheduleRequest(cluster=cluster, pods=batches[0]),
                                           timeout=60)
                fut.cancel()
                if fut.cancelled():
                    ledger.lose(cluster, batches[0])
                else:
                    ledger.saw(cluster, fut.result())
            else:
                keep = rng.randint(0, 2)  # answers read before the kill
                sent: list[list[pb.Pod]] = []

                def reqs(
                    sent: list[list[pb.Pod]] = sent, batches: list[list[pb.Pod]] = batches
                ) -> Iterator[pb.ScheduleRequest]:
                    for b in batches:
                        sent.append(b)
                        yield pb.ScheduleRequest(cluster=cluster, pods=b)

                call = stub.ScheduleStream(reqs(), timeout=60)
                got = 0
                for resp in call:
                    if got == keep:
                        break
                    ledger.saw(cluster, resp)
                    got += 1
                ledger.lose(cluster, [p for b in batches[got:] for p in b])
                if mode == "kill-channel":
                    channel.close()  # abrupt: every call on it dies
                    channel = grpc.insecure_channel(target)
                    stub = pb_grpc.ScheduleServiceStub(channel)
                else:
                    call.cancel()
    except BaseException as exc:  # noqa: BLE001 - reported by the main thread
        errors.append(exc)
    finally:
        channel.close()


def test_concurrent_clients_with_kills_leave_exactly_the_seen_pods(
    servers: Servers,  # noqa: F811
) -> None:
    server, stub, _ = servers.start(max_workers=16)
    for cluster in ("a", "b"):
        load(stub, 10, cluster=cluster, cpu="64")
    ledger = Ledger()
    errors: list[BaseException] = []
    target = f"127.0.0.1:{server.port}"
    threads = [threading.Thread(target=_client, args=(target, i, ledger, errors), daemon=True)
               for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a client hung"
    assert not errors, errors
    # killed calls may still be running server-side: wait for every cluster to drain
    from tests.support import wait_until

    wait_until(lambda: all(server.handler.admission.in_flight(c) == 0 for c in "ab"),
               what="drain")
    for cluster in ("a", "b"):
        held = snapshot_pods(server, cluster)
        seen = {uid: node for (c, uid), node in ledger.placed.items() if c == cluster}
        lost = {uid for c, uid in ledger.lost if c == cluster}
        for uid, node in seen.items():
            assert held.get(uid) == node, (cluster, uid)
        extra = set(held) - set(seen)
        assert extra <= lost, (cluster, sorted(extra - lost)[:5])
        assert all(uid.split("-")[0].isdigit() for uid in held)
    check_books(server)
    assert len(ledger.placed) > 0
