"""One in-process server with a given loop slice, the load client as a subprocess: pods/s,
the server's CPU and context switches, and how many requests began on the event loop.

    flock /tmp/bench.lock env SLICE=0.01 [CFG=bench/pct100.yaml] [ROUNDS=1] \\
        .venv/bin/python bench/loop_slice_probe.py <schedsvc-load workload and args>

Alternate SLICE=0.01 and SLICE=0 runs to compare the loop slice with the worker threads alone.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

from schedsvc.config import default_config, load_config
from schedsvc.engine.scheduler import Engine
from schedsvc.server.app import Server, ServerOptions

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)


def main() -> None:
    slice_s = float(os.environ.get("SLICE", "0.01"))
    cfg = os.environ.get("CFG")
    for _ in range(int(os.environ.get("ROUNDS", "1"))):
        engine = Engine(load_config(cfg) if cfg else default_config(), seed=1)
        srv = Server(engine, ServerOptions(address="127.0.0.1:0", loop_slice_seconds=slice_s))
        srv.start()
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.time()
        subprocess.run(
            [os.path.join(BIN, "schedsvc-load"), *sys.argv[1:], "--target",
             f"127.0.0.1:{srv.port}", "--json", "/tmp/ab.json", "--no-progress"],
            capture_output=True, text=True, check=True,
        )
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime
        csw = (ru1.ru_nvcsw - ru0.ru_nvcsw, ru1.ru_nivcsw - ru0.ru_nivcsw)
        tput = subprocess.run(
            [sys.executable, os.path.join(HERE, "ab_read.py")], capture_output=True, text=True
        ).stdout.strip()
        slices = srv.servicer.inline.slices
        print(f"slice={slice_s} {tput} pods/s cpu={cpu:.2f}s wall={time.time() - t0:.1f}s "
              f"csw(vol,invol)={csw} slices={slices}", flush=True)
        srv.stop(0)


if __name__ == "__main__":
    main()
