"""kill -9 under load, restart on the same port: the client library resyncs and carries on."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.client import RetryPolicy, SchedClient
from tests.builders import pb_node, pb_pod
from tests.support import wait_until

BATCHES = 30
BATCH = 10


def _spawn(address: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "schedsvc.cli", "serve", "--address", address,
         "--log-level", "WARNING"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until bound, or EOF if it died
    m = re.search(r"listening on port (\d+)", line)
    if m is None:
        proc.kill()
        proc.wait(30)
        raise OSError(f"server did not start: {line!r}")
    return proc, int(m.group(1))


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    out: list[subprocess.Popen[str]] = []
    yield out
    for p in out:
        if p.poll() is None:
            p.kill()
        p.wait(30)


def test_kill_9_and_restart_on_same_port_client_resyncs_and_places_all_once(
    procs: list[subprocess.Popen[str]],
) -> None:
    first, port = _spawn("127.0.0.1:0")
    procs.append(first)
    target = f"127.0.0.1:{port}"
    client = SchedClient(target, retry=RetryPolicy(budget_seconds=90, max_backoff=0.5))
    client.update_snapshot(upsert_nodes=[pb_node(f"n{i}", cpu="64") for i in range(20)])
    old_epoch = client.epoch
    results: list[pb.Placement] = []
    errors: list[BaseException] = []

    def load() -> None:
        try:
            for b in range(BATCHES):
                results.extend(client.schedule([pb_pod(f"p{b}-{j}", cpu="10m")
                                                for j in range(BATCH)]))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    t = threading.Thread(target=load, daemon=True)
    t.start()
    wait_until(lambda: len(results) >= 5 * BATCH or not t.is_alive(), what="load underway")
    first.send_signal(signal.SIGKILL)
    first.wait(30)
    end = time.monotonic() + 60
    while True:  # the port may take a moment to be free again
        try:
            second, _ = _spawn(target)
            break
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.2)
    procs.append(second)
    t.join(120)
    assert not t.is_alive(), "the client never finished"
    assert not errors, errors
    uids = [f"p{b}-{j}" for b in range(BATCHES) for j in range(BATCH)]
    assert [p.pod_uid for p in results] == uids
    assert all(p.outcome == pb.Placement.SCHEDULED for p in results)
    assert client.epoch != old_epoch and client.resyncs >= 1
    # the new server holds every pod once, on the node the client was told
    state = client.update_snapshot()
    assert (state.nodes, state.pods) == (20, len(uids))
    held = client.desired_pods()
    assert {u: held[u].node_name for u in uids} == {p.pod_uid: p.node_name for p in results}
    again = client.schedule([pb_pod(u, cpu="10m") for u in uids[:BATCH]])
    assert {p.message for p in again} == {"already placed"}
    client.close()
