"""StatefulSet-like pods in process (no gRPC): ms per pod of pods with one WaitForFirstConsumer
claim each, through the request handler, on N nodes (one CSINode each) with a CSI PV per five
nodes; optionally under cProfile. What issue 26's per-pod volume work costs, apart from the
transport.

    .venv/bin/python bench/statefulset_inproc.py [--nodes 1000] [--pods 200] [--profile tottime]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.builders.volume_world import World, claim, csi_pv  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=200)
    ap.add_argument("--profile", default="", help="a pstats sort key: cProfile the timed part")
    args = ap.parse_args()
    w = World(args.nodes, 25)
    w.add_pvs(*[csi_pv(f"pv{i}", f"h{i}", f"n{i * 5}") for i in range(args.nodes // 5)])
    w.add_claims(*[claim(f"c{i}") for i in range(args.pods)])
    pods = [w.pod(f"p{i}", [f"c{i}"]) for i in range(args.pods)]
    prof = cProfile.Profile() if args.profile else None
    started = time.perf_counter()
    if prof is not None:
        prof.enable()
    out = w.schedule(pods)
    if prof is not None:
        prof.disable()
    ms = (time.perf_counter() - started) / len(out) * 1000
    placed = sum(1 for p in out if p.node_name)
    print(f"{args.nodes} nodes: {placed}/{len(out)} pods placed, {ms:.1f} ms/pod"
          + (" (profiled)" if prof is not None else ""))
    if prof is not None:
        pstats.Stats(prof).sort_stats(args.profile).print_stats(20)


if __name__ == "__main__":
    main()
