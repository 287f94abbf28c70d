"""The package as a user gets it: build the sdist and wheel, install the wheel into a fresh venv,
start `schedsvc serve` from that venv and check it answers.

    python3 tools/wheel_smoke.py [--wheel dist/schedsvc-*.whl] [--keep]

Without `--wheel`, `python -m build` (in a venv of its own) builds the sdist and then the wheel
from that sdist, as PyPA's frontend does, so a file the build needs but the sdist lacks fails
here. The fresh venv gets the wheel only (`pip install WHEEL`, never `-e`); the server runs on a
port the system picks, and the same file, run by that venv's interpreter with `-I` (no source
tree on sys.path), asks it through the installed `schedsvc_client`: health SERVING, one
UpdateSnapshot, one Schedule placing a pod where only one node fits. Exit 0 when all of it holds.
Needs only the standard library (and PyPI, through pip, for the build and the dependencies).
"""

from __future__ import annotations

import argparse
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from schedsvc.v1 import schedule_pb2 as pb

__all__ = ["main"]

REPO = Path(__file__).resolve().parent.parent
LISTENING = re.compile(r"schedsvc listening on port (\d+)")
START_TIMEOUT = 120.0


class SmokeError(RuntimeError):
    """A step failed; the message says which and how."""


def _run(argv: Sequence[str | Path], cwd: Path | None = None,
         env: Mapping[str, str] | None = None, show: bool = False) -> None:
    """Run a step; its output is shown when it fails or `show` (a build is hundreds of lines)."""
    print("+", " ".join(str(a) for a in argv), flush=True)
    res = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                         text=True, check=False)
    if res.returncode != 0:
        raise SmokeError(f"exit {res.returncode}:\n{res.stdout[-6000:]}{res.stderr[-6000:]}")
    if show:
        print(res.stdout, end="")


def _venv(path: Path) -> Path:
    """A fresh venv's interpreter (the venv made by the interpreter running this script)."""
    _run([sys.executable, "-m", "venv", path])
    return path / "bin" / "python"


def build_wheel(work: Path) -> Path:
    """sdist, then the wheel from the sdist, with `python -m build` (isolated builds)."""
    py = _venv(work / "build-venv")
    _run([py, "-m", "pip", "install", "-q", "build"])
    dist = work / "dist"
    _run([py, "-m", "build", "--outdir", dist, REPO], cwd=work)
    wheels = sorted(dist.glob("schedsvc-*.whl"))
    if len(wheels) != 1:
        raise SmokeError(f"expected one wheel in {dist}, found {[w.name for w in wheels]}")
    return wheels[0]


def install(wheel: Path, work: Path) -> Path:
    """The wheel (and its dependencies) in a venv of its own; its bin directory."""
    py = _venv(work / "venv")
    _run([py, "-m", "pip", "install", "-q", wheel], cwd=work)
    return py.parent


def _clean_env() -> dict[str, str]:
    """This environment without anything that could put the source tree on sys.path."""
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSAFEPATH")}


def _wait_for_port(proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> int:
    """The port the server announces on stdout; fails if it exits or stays silent."""
    deadline = time.monotonic() + START_TIMEOUT
    seen: list[str] = []
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if line is None:
            break
        seen.append(line)
        if m := LISTENING.search(line):
            return int(m.group(1))
    proc.kill()
    raise SmokeError("schedsvc serve did not announce its port:\n" + "".join(seen[-40:]))


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        sys.stdout.write(f"  serve| {line}")
        lines.put(line)
    lines.put(None)


def serve_and_check(bindir: Path, work: Path) -> None:
    """`schedsvc serve` from the venv on a free port, checked by the venv's own interpreter."""
    argv = [str(bindir / "schedsvc"), "serve", "--address", "127.0.0.1:0"]
    print("+", " ".join(argv), flush=True)
    proc = subprocess.Popen(argv, cwd=work, env=_clean_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
    try:
        port = _wait_for_port(proc, lines)
        _run([bindir / "python", "-I", Path(__file__).resolve(), "--check", f"127.0.0.1:{port}"],
             cwd=work, env=_clean_env(), show=True)
    finally:
        proc.terminate()
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise SmokeError("schedsvc serve did not stop within 30 s of SIGTERM") from None
    if code != 0:
        raise SmokeError(f"schedsvc serve exited {code} after SIGTERM (expected a clean drain)")


def check(address: str, site: str) -> None:
    """Run inside the fresh venv: the installed packages answer as a user would use them."""
    import schedsvc.v1 as contract
    from schedsvc.healthcheck import check as health
    from schedsvc_client import node_from_kube, pod_from_kube
    from schedsvc_client.client import SchedClient

    for mod in (contract, sys.modules["schedsvc_client"]):
        if not str(Path(str(mod.__file__)).resolve()).startswith(site):
            raise SmokeError(f"{mod.__name__} imported from {mod.__file__}, not from {site}")
    deadline = time.monotonic() + 30
    while (status := health(address)) != "SERVING":
        if time.monotonic() > deadline:
            raise SmokeError(f"health of {address}: {status}, not SERVING")
        time.sleep(0.2)

    def node(name: str, cpu: str) -> pb.Node:
        return node_from_kube({"metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name}}, "status": {"allocatable": {
                "cpu": cpu, "memory": "8Gi", "pods": "110"}}})

    pod = pod_from_kube({"metadata": {"name": "smoke", "namespace": "default", "uid": "smoke-1"},
                         "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {
                             "requests": {"cpu": "2", "memory": "1Gi"}}}]}})
    with SchedClient(address, cluster="wheel-smoke") as client:
        client.update_snapshot(replace=True, upsert_nodes=[node("small", "1"), node("big", "4")],
                               timeout=30)
        (placed,) = client.schedule([pod], timeout=30)
    if placed.node_name != "big" or placed.outcome != type(placed).SCHEDULED:
        raise SmokeError(f"expected smoke-1 on node big, got {placed}")
    print(f"health SERVING; pod smoke-1 placed on {placed.node_name} (schedsvc.v1 from "
          f"{Path(str(contract.__file__)).parent})")


def smoke(wheel: Path | None, work: Path) -> None:
    wheel = wheel.resolve() if wheel else build_wheel(work)
    print(f"wheel: {wheel}", flush=True)
    serve_and_check(install(wheel, work), work)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tools/wheel_smoke.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--wheel", type=Path, help="install this wheel instead of building one")
    p.add_argument("--keep", action="store_true", help="keep the work directory (printed)")
    p.add_argument("--check", metavar="ADDRESS", help=argparse.SUPPRESS)  # the venv's half
    args = p.parse_args(argv)
    try:
        if args.check:
            check(args.check, str(Path(sys.prefix).resolve()))
            return 0
        work = Path(tempfile.mkdtemp(prefix="schedsvc-wheel-smoke-"))
        try:
            smoke(args.wheel, work)
        finally:
            if args.keep:
                print(f"work directory kept: {work}")
            else:
                shutil.rmtree(work, ignore_errors=True)
    except SmokeError as exc:
        print(f"wheel smoke FAILED: {exc}", file=sys.stderr)
        return 1
    print("wheel smoke passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
