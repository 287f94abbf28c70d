"""A server the load tool starts itself, in a subprocess, and measures from /proc.

`EmbeddedServer` runs `python -m schedsvc.cli serve --address 127.0.0.1:0 ...`, reads the port
from its "listening on port N" line, and reads its CPU time (utime + stime from
/proc/<pid>/stat) and peak RSS (VmHWM from /proc/<pid>/status), so the server's cost is measured
apart from the client's. `python -m schedsvc_client.embedded` serves a no-op ScheduleService
(one empty SCHEDULED placement per pod): what the load client costs when the server costs nothing.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import TracebackType

import grpc

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc

__all__ = ["EmbeddedServer", "ProcStats", "read_proc_stats", "server_command", "noop_command"]

_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class ProcStats:
    cpu_seconds: float
    peak_rss_bytes: int


def read_proc_stats(pid: int) -> ProcStats | None:
    """CPU seconds (user + system) and VmHWM of a live process; None where /proc is missing."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            # the command name (field 2) may contain spaces: split after its closing paren
            fields = f.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            hwm = next((ln for ln in f if ln.startswith("VmHWM:")), "VmHWM: 0 kB")
    except (OSError, IndexError):
        return None
    utime, stime = int(fields[11]), int(fields[12])  # stat fields 14 and 15
    return ProcStats((utime + stime) / _TICKS, int(hwm.split()[1]) * 1024)


def server_command(
    seed: int | None = None, config: str | None = None, feature_gates: str = ""
) -> list[str]:
    cmd = [sys.executable, "-m", "schedsvc.cli", "serve", "--address", "127.0.0.1:0"]
    cmd += ["--log-level", "WARNING"]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if config:
        cmd += ["--config", config]
    if feature_gates:
        cmd += ["--feature-gates", feature_gates]
    return cmd


def noop_command() -> list[str]:
    return [sys.executable, "-m", "schedsvc_client.embedded", "--address", "127.0.0.1:0"]


class EmbeddedServer:
    """A server subprocess on a free loopback port; a context manager that SIGTERMs it."""

    def __init__(self, command: Sequence[str], start_timeout: float = 60.0) -> None:
        self.command = list(command)
        self._proc = subprocess.Popen(
            self.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self._stderr: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.port = self._read_port(start_timeout)
        self.address = f"127.0.0.1:{self.port}"
        self.final: ProcStats | None = None

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _drain_stderr(self) -> None:
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            self._stderr.append(line)
            del self._stderr[:-50]

    def _read_port(self, timeout: float) -> int:
        assert self._proc.stdout is not None
        result: list[int] = []

        def read() -> None:
            assert self._proc.stdout is not None
            for line in self._proc.stdout:
                if "listening on port" in line:
                    result.append(int(line.rsplit(maxsplit=1)[1]))
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        if not result:
            self._proc.kill()
            self._proc.wait()
            raise RuntimeError(
                f"server did not start: {' '.join(self.command)}\n" + "".join(self._stderr)
            )
        return result[0]

    def stats(self) -> ProcStats | None:
        """Live CPU and peak RSS, or the last reading once stopped."""
        if self._proc.poll() is None:
            return read_proc_stats(self._proc.pid) or self.final
        return self.final

    def stop(self, timeout: float = 15.0) -> int:
        """Read the final figures, then SIGTERM (graceful drain) and wait."""
        if self._proc.poll() is None:
            self.final = read_proc_stats(self._proc.pid) or self.final
            self._proc.send_signal(signal.SIGTERM)
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        return self._proc.returncode

    def stderr_tail(self) -> str:
        return "".join(self._stderr)

    def __enter__(self) -> EmbeddedServer:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class NoopServicer(pb_grpc.ScheduleServiceServicer):
    """Does no scheduling: one SCHEDULED placement on no node per pod."""

    def UpdateSnapshot(  # noqa: N802 - gRPC method name
        self, request: pb.UpdateSnapshotRequest, context: grpc.ServicerContext
    ) -> pb.UpdateSnapshotResponse:
        return pb.UpdateSnapshotResponse(generation=1, nodes=len(request.upsert_nodes))

    def Schedule(  # noqa: N802
        self, request: pb.ScheduleRequest, context: grpc.ServicerContext
    ) -> pb.ScheduleResponse:
        return pb.ScheduleResponse(
            placements=[pb.Placement(pod_uid=p.uid, outcome=pb.Placement.SCHEDULED)
                        for p in request.pods]
        )

    def ScheduleStream(  # noqa: N802
        self, request_iterator: Iterator[pb.ScheduleRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.ScheduleResponse]:
        for request in request_iterator:
            yield self.Schedule(request, context)


def _serve_noop(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="a no-op ScheduleService, to time the load client")
    p.add_argument("--address", default="127.0.0.1:0")
    args = p.parse_args(argv)
    server = grpc.server(
        ThreadPoolExecutor(max_workers=8),
        options=[("grpc.max_receive_message_length", 256 * 1024 * 1024),
                 ("grpc.max_send_message_length", 256 * 1024 * 1024)],
    )
    pb_grpc.add_ScheduleServiceServicer_to_server(  # type: ignore[no-untyped-call]
        NoopServicer(), server
    )
    port = server.add_insecure_port(args.address)
    server.start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    print(f"schedsvc-noop listening on port {port}", flush=True)
    done.wait()
    server.stop(1).wait()
    return 0


if __name__ == "__main__":
    sys.exit(_serve_noop())
