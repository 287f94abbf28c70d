"""Follow one placement call by call, from the request handler to the response.

Prints the modules a unary Schedule of one pod enters, in order, and every call back into an
engine module after all of that module's frames had returned (a placement that "comes back to
a file it left"). `tests/test_architecture.py` holds the counts; docs/architecture.md walks the
path. Run: `python -m tools.placement_path [--hint] [--nodes N] [--pod KIND]`; KIND is plain
(the default), spread (a soft PodTopologySpread constraint: batching keeps a WindowCache) or
unfit (a pod no node can hold: the FitError path, its cycle refused).
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from schedsvc.config import default_config
from schedsvc.engine.scheduler import Engine
from schedsvc.server.request_handler import RequestHandler
from schedsvc.v1 import schedule_pb2 as pb

__all__ = ["POD_KINDS", "Path", "follow", "placement_path"]

ENGINE = "schedsvc.engine"


@dataclass
class Path:
    entered: list[str] = field(default_factory=list)  # modules in the order first entered
    returns: list[tuple[str, str]] = field(default_factory=list)  # (engine module, function)


def follow(run: Callable[[], object]) -> Path:
    """The schedsvc modules `run` enters, and its calls back into engine modules it had left."""
    path, live = Path(), dict[str, int]()
    seen: set[str] = set()

    def profile(frame: FrameType, event: str, _: Any) -> None:
        if event not in ("call", "return"):
            return
        mod = str(frame.f_globals.get("__name__", ""))
        if not mod.startswith("schedsvc"):
            return
        if event == "return":
            live[mod] -= 1
            return
        if mod not in seen:
            seen.add(mod)
            path.entered.append(mod)
        elif mod.startswith(ENGINE) and live.get(mod, 0) == 0:
            path.returns.append((mod, frame.f_code.co_name))
        live[mod] = live.get(mod, 0) + 1

    # no cyclic collection inside the run: a finalizer it fires (parked batch states giving
    # their bytes back) would be counted as a call back wherever the collector happened to run
    # (no collection before it either: it would drop weakly held caches the run then rebuilds)
    gc.disable()
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
        gc.enable()
    return path


class _Caller:
    def time_remaining(self) -> float | None:
        return None

    def is_active(self) -> bool:
        return True


def _node(i: int) -> pb.Node:
    name = f"n{i}"
    return pb.Node(name=name, labels={"kubernetes.io/hostname": name},
                   allocatable={"cpu": "8", "memory": "32Gi", "pods": "110"})


POD_KINDS = ("plain", "spread", "unfit")


def _pod(uid: str, kind: str = "plain") -> pb.Pod:
    cpu = "64" if kind == "unfit" else "100m"  # more than any node's 8 cores
    pod = pb.Pod(uid=uid, name=uid, namespace="default", labels={"app": "x"},
                 containers=[pb.Container(name="c", requests={"cpu": cpu})])
    if kind == "spread":
        pod.topology_spread_constraints.add(
            max_skew=1, topology_key="kubernetes.io/hostname",
            when_unsatisfiable="ScheduleAnyway",
        ).label_selector.match_labels["app"] = "x"
    return pod


def placement_path(nodes: int = 200, hint: bool = False, kind: str = "plain") -> Path:
    """One Schedule of one pod of `kind` on `nodes` nodes (after a warm-up pod of the same
    kind); with `hint`, a pod the batch state has a hint for (the same signature as the pod
    before)."""
    handler = RequestHandler(Engine(default_config(), seed=1))
    handler.update_snapshot(pb.UpdateSnapshotRequest(
        replace=True, upsert_nodes=[_node(i) for i in range(nodes)]))
    caller = _Caller()
    handler.schedule(pb.ScheduleRequest(pods=[_pod("warm", kind)]), caller)
    pods = [_pod("a", kind), _pod("b", kind)] if hint else [_pod("a", kind)]
    if hint:
        handler.schedule(pb.ScheduleRequest(pods=pods[:1]), caller)
    last = pb.ScheduleRequest(pods=pods[-1:])
    return follow(lambda: handler.schedule(last, caller))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--hint", action="store_true")
    ap.add_argument("--pod", choices=POD_KINDS, default="plain")
    args = ap.parse_args()
    path = placement_path(args.nodes, args.hint, args.pod)
    print(f"{len(path.entered)} modules entered:")
    for m in path.entered:
        print(f"  {m}")
    print(f"{len(path.returns)} calls back into an engine module it had left:")
    for m, fn in path.returns:
        print(f"  {m}.{fn}")


if __name__ == "__main__":
    main()
