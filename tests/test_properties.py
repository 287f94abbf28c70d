"""Invariants over any sequence of Schedule and UpdateSnapshot calls (hypothesis).

- no node's assumed usage ever exceeds its allocatable (cpu, memory, pods, host ports);
- the snapshot's columns always equal the sum of the pods it holds;
- a placed pod is never placed again (a retry returns the same node);
- dry_run changes nothing; a rejected request changes nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Cluster, Engine, SnapshotUpdate
from schedsvc.errors import InvalidArgument
from schedsvc.model import Outcome
from schedsvc.resourcehelper import pod_requests
from tests.builders import make_pod, node
from tests.strategies import nodes, pod_shapes


def fingerprint(c: Cluster) -> tuple[Any, ...]:
    s = c.snapshot
    return (
        s.generation,
        sorted(s.index.items()),
        sorted((u, r.node_name) for u, r in s.pods.items()),
        s.requested[: s.n_rows].tobytes(),
        s.nonzero_requested[: s.n_rows].tobytes(),
    )


def check_invariants(c: Cluster, placed: dict[str, str]) -> None:
    s = c.snapshot
    res = s.resource_index
    expect = np.zeros_like(s.requested)
    for rec in s.pods.values():
        row = s.index[rec.node_name]
        for k, v in pod_requests(rec.pod).items():
            expect[row, res[k]] += v
        expect[row, res["pods"]] += 1
    assert (expect[: s.n_rows] == s.requested[: s.n_rows]).all(), "columns drifted"
    order = s.order
    for col in ("cpu", "memory", "pods"):
        j = res[col]
        assert (s.requested[order, j] <= s.allocatable[order, j]).all(), f"{col} over-committed"
    for ips in s.host_ports.values():
        # kube's HostPortInfo rule: one pod per (protocol, port, ip); 0.0.0.0 takes every ip
        total = sum(arr[order].astype(np.int64) for arr in ips.values())
        for arr in ips.values():
            assert (arr[order] <= 1).all(), "a host port used twice on a node"
        wildcard = ips.get("0.0.0.0")
        if wildcard is not None:
            assert (total[wildcard[order] > 0] == 1).all(), "a wildcard port shared"
    # each pod we saw placed is held once, on the node we were told
    for uid, name in placed.items():
        if uid in s.pods:
            assert s.pods[uid].node_name == name


ops = st.lists(
    st.one_of(
        st.tuples(st.just("schedule"), st.integers(1, 8), st.booleans()),
        st.tuples(st.just("retry"), st.integers(0, 50)),
        st.tuples(st.just("remove_pod"), st.integers(0, 50)),
        st.tuples(st.just("remove_node"), st.integers(0, 20)),
        st.tuples(st.just("add_node"), st.integers(0, 1000)),
        st.tuples(st.just("bad_update"), st.integers(0, 2)),
    ),
    min_size=1,
    max_size=14,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes(min_size=1, max_size=8), st.lists(pod_shapes(), min_size=1, max_size=3), ops,
       st.booleans())
def test_no_sequence_of_calls_breaks_the_snapshot(
    cluster: list[Any], shapes: list[dict[str, object]], steps: list[tuple[Any, ...]],
    batching: bool,
) -> None:
    engine = Engine(parse_config({}), seed=2, batching_enabled=batching)
    c = engine.cluster("p")
    c.update(SnapshotUpdate(upsert_nodes=cluster))
    placed: dict[str, str] = {}
    uid = 0
    try:
        for step in steps:
            kind = step[0]
            if kind == "schedule":
                _, n, dry = step
                pods = [make_pod(f"p{uid + i}", shapes[(uid + i) % len(shapes)]) for i in range(n)]
                uid += n
                before = fingerprint(c)
                out, _ = c.schedule(pods, dry_run=dry)
                if dry:
                    assert fingerprint(c) == before, "dry_run changed the snapshot"
                    continue
                for p in out:
                    if p.outcome is Outcome.SCHEDULED:
                        assert p.pod_uid not in placed, "a pod was placed twice"
                        placed[p.pod_uid] = p.node_name
            elif kind == "retry" and placed:
                victim = sorted(placed)[step[1] % len(placed)]
                if victim in c.snapshot.pods:
                    out, _ = c.schedule([make_pod(victim, shapes[0])])
                    assert out[0].node_name == placed[victim]
            elif kind == "remove_pod" and placed:
                victim = sorted(placed)[step[1] % len(placed)]
                c.update(SnapshotUpdate(remove_pods=[victim]))
            elif kind == "remove_node" and c.snapshot.index:
                name = sorted(c.snapshot.index)[step[1] % len(c.snapshot.index)]
                c.update(SnapshotUpdate(remove_nodes=[name]))
            elif kind == "add_node":
                c.update(SnapshotUpdate(upsert_nodes=[node(f"x{step[1]}", cpu=1000)]))
            elif kind == "bad_update":
                before = fingerprint(c)
                bad = [
                    SnapshotUpdate(upsert_pods=[make_pod("ghost", {}, )],  # neither bound
                                   upsert_nodes=[node("fresh")]),
                    SnapshotUpdate(remove_nodes=["n0"], upsert_pods=[
                        make_pod("b", {"node_name": "nowhere"})]),
                    SnapshotUpdate(upsert_nodes=[node("dup"), node("dup")]),
                ][step[1]]
                with pytest.raises(InvalidArgument):
                    c.update(bad)
                assert fingerprint(c) == before, "a rejected update changed the snapshot"
            check_invariants(c, placed)
    finally:
        engine.close()
