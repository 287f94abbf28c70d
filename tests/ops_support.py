"""Support for the operations tests: a cluster to schedule on, and `schedsvc serve` as a real
subprocess whose announced ports are read from its stdout."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import grpc

from schedsvc.v1 import schedule_pb2_grpc as pb_grpc
from tests.builders import replace_nodes

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
T = TypeVar("T")


def load_cluster(stub: pb_grpc.ScheduleServiceStub, n: int = 3, cluster: str = "") -> None:
    stub.UpdateSnapshot(
        replace_nodes(n, cluster, prefix="node-", cpu="4", memory="32Gi"), timeout=30
    )


def free_port() -> int:
    """A loopback port free right now (for programs that cannot be told to pick one)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(probe: Callable[[], T | None], timeout: float, what: str, every: float = 0.1) -> T:
    """Poll `probe` until it returns something not None; fail with `what` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        got = probe()
        if got is not None:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(every)


class ServerProcess:
    """`argv` run as a subprocess; stdout lines are collected so the announced ports can be
    read ("schedsvc listening on port N", "schedsvc metrics on port N")."""

    def __init__(
        self, argv: Sequence[str], env: Mapping[str, str] | None = None, timeout: float = 60
    ) -> None:
        full_env = dict(os.environ)
        full_env["PYTHONUNBUFFERED"] = "1"
        full_env["PATH"] = f"{BIN}{os.pathsep}{full_env.get('PATH', '')}"
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=full_env, cwd=REPO,
        )
        self.lines: list[str] = []
        self._q: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.port = int(self.expect("schedsvc listening on port ", timeout))

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            self._q.put(line.rstrip("\n"))
        self._q.put(None)

    def expect(self, prefix: str, timeout: float = 60) -> str:
        """The rest of the first line (already seen or coming) that starts with `prefix`."""
        for line in self.lines:
            if line.startswith(prefix):
                return line[len(prefix):]
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {prefix!r} line; output so far:\n{self.output()}")
            try:
                line = self._q.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(
                    f"server exited ({self.proc.wait()}) before {prefix!r}:\n{self.output()}"
                )
            if line.startswith(prefix):
                return line[len(prefix):]

    def output(self) -> str:
        return "\n".join(self.lines)

    def channel(self) -> grpc.Channel:
        return grpc.insecure_channel(f"127.0.0.1:{self.port}")

    def terminate(self, timeout: float = 60) -> int:
        """SIGTERM, then the exit code (killed, and the test failed, past the timeout)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"no exit {timeout}s after SIGTERM:\n{self.output()}") from None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def serve_argv(*extra: str) -> list[str]:
    return [sys.executable, "-m", "schedsvc.cli", "serve", "--address", "127.0.0.1:0", *extra]
