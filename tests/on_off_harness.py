"""Batching on vs off: two engines, batching off and on, fed the same steps one pod at
a time; every Placement field and the start index after each pod are compared."""

from __future__ import annotations

import dataclasses
from typing import Any

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.errors import InvalidArgument


def record(p: Any, c: Any) -> dict[str, Any]:
    d = {f.name: getattr(p, f.name) for f in dataclasses.fields(p)}
    d["start"] = c.cursor.next_start_index
    return d


def run(cluster: list[Any], steps: list[tuple[str, Any]], cfg: dict[str, Any], batching: bool,
        seed: int = 7, clock: Any = None) -> tuple[list[dict[str, Any]], int]:
    engine = Engine(parse_config(cfg), seed=seed, batching_enabled=batching)
    c = engine.cluster("x")
    if clock is not None:
        for b in c.batches.values():
            b.clock = clock
    c.update(SnapshotUpdate(upsert_nodes=cluster))
    out: list[dict[str, Any]] = []
    try:
        for kind, payload in steps:
            if kind == "update":
                try:
                    c.update(payload)
                except InvalidArgument as e:
                    out.append({"update_error": str(e)})
            elif kind == "call":
                payload(c)
            else:
                dry = kind == "dry"
                for p in payload:
                    pl, _ = c.schedule([p], dry_run=dry)
                    out.extend(record(x, c) for x in pl)
        return out, sum(b.batched_pods for b in c.batches.values())
    finally:
        engine.close()


def diff(off: list[dict[str, Any]], on: list[dict[str, Any]],
         loose: bool = True) -> list[str]:
    """Differences; `loose`: a hint's nodes_evaluated/nodes_feasible (1/1) are not compared."""
    out = []
    for i, (a, b) in enumerate(zip(off, on, strict=True)):
        for k in a:
            if k == "batched":
                continue
            if loose and b.get("batched") and k in ("nodes_evaluated", "nodes_feasible"):
                continue
            if a[k] != b[k]:
                out.append(f"#{i} {a.get('pod_uid')} {k}: off={a[k]!r} on={b[k]!r}")
    return out


def both(cluster: list[Any], steps: list[tuple[str, Any]], cfg: dict[str, Any], seed: int = 7,
         loose: bool = True) -> tuple[list[str], int]:
    off, _ = run(cluster, steps, cfg, False, seed)
    on, batched = run(cluster, steps, cfg, True, seed)
    return diff(off, on, loose), batched
