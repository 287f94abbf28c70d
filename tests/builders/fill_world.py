"""Clusters big enough for a fill's rounds (engine/simulate/fill_run.py): a sampled cycle
(percentageOfNodesToScore) needs more than 100 nodes, and a lap needs several windows. Nodes
differ in size, some carry a PreferNoSchedule taint or an image, some hold pods (some with
uids a fill's copies would take); templates vary in what plugins read. Hypothesis strategies
and a runner that fills on a fork with or without the rounds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import strategies as st

from schedsvc.engine.cluster import Cluster
from schedsvc.engine.simulate import fill as fill_module
from schedsvc.engine.simulate.fill import fill
from schedsvc.engine.simulate.steps import Fill, FillResult
from schedsvc.model import (
    Affinity,
    Container,
    ContainerImage,
    LabelSelector,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
    frozen_map,
)
from tests.builders.clusters import cluster_of
from tests.builders.fingerprint import snapshot_state

__all__ = ["FillWorld", "fill_worlds", "template", "filled", "TEMPLATE_KINDS", "KEPT_AN_HOUR"]

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
IMAGE = "img:1"
TEMPLATE_KINDS = ("plain", "tolerating", "preferring", "image", "spreading")
KEPT_AN_HOUR = {"schedulerName": "default-scheduler", "batching": {"maxBatchAge": "1h"}}


def node(i: int, cpu: int, mem_gi: int, tainted: bool, image: bool) -> Node:
    return Node(
        name=f"n{i}",
        labels={HOST: f"n{i}", ZONE: f"z{i % 3}", "tier": "a" if i % 4 else "b"},
        allocatable={"cpu": cpu, "memory": mem_gi << 30, "pods": 110},
        taints=(Taint("soft", "x", "PreferNoSchedule"),) if tainted else (),
        images=(ContainerImage(names=(IMAGE,), size_bytes=500 << 20),) if image else (),
    )


def pod(uid: str, cpu: int, mem_mi: int, node_name: str = "", **extra: Any) -> Pod:
    return Pod(
        uid=uid, name=uid, labels=frozen_map({"app": "f"}), node_name=node_name,
        containers=(Container(name="c", image=extra.pop("image", ""),
                              requests={"cpu": cpu, "memory": mem_mi << 20}),),
        **extra,
    )


def template(kind: str, cpu: int, mem_mi: int) -> Pod:
    """A fill template of `kind`: plain (every plugin that reads usage reads only its row's),
    tolerating the soft taint, preferring tier=b (NodeAffinity normalized per window), with
    the nodes' image (ImageLocality), or spread by zone softly (scored per window)."""
    extra: dict[str, Any] = {}
    if kind == "tolerating":
        extra["tolerations"] = (Toleration(key="soft", operator="Exists"),)
    elif kind == "preferring":
        term = NodeSelectorTerm((NodeSelectorRequirement("tier", "In", ("b",)),))
        extra["affinity"] = Affinity(node_affinity=NodeAffinity(
            preferred=(PreferredSchedulingTerm(10, term),)))
    elif kind == "image":
        extra["image"] = IMAGE
    elif kind == "spreading":
        extra["default_selector"] = LabelSelector(match_labels=(("app", "f"),))
    return replace(pod("t", cpu, mem_mi, **extra), uid="", name="f")


@dataclass(frozen=True)
class FillWorld:
    nodes: tuple[Node, ...]
    pods: tuple[Pod, ...]
    pct: int  # percentageOfNodesToScore (0: kube's adaptive default)
    template: Pod
    max_pods: int

    def cluster(self) -> Cluster:
        """Batches kept for an hour (maxBatchAge): how long a run takes cannot expire them,
        so the rounds and the copy-by-copy fill compare decisions, not timings."""
        return cluster_of(self.nodes, self.pods, batching=True,
                          percentageOfNodesToScore=self.pct, profiles=[KEPT_AN_HOUR])


@st.composite
def fill_worlds(draw: st.DrawFn, kinds: tuple[str, ...] = TEMPLATE_KINDS) -> FillWorld:
    n = draw(st.integers(110, 320))
    nodes = tuple(
        node(i, draw(st.sampled_from((1000, 2000, 4000))), draw(st.sampled_from((4, 8))),
             draw(st.integers(0, 5)) == 0, draw(st.integers(0, 3)) == 0)
        for i in range(n)
    )
    pods = [
        pod(f"b{j}", draw(st.sampled_from((100, 250, 500))), 256, f"n{draw(st.integers(0, n - 1))}")
        for j in range(draw(st.integers(0, n)))
    ]
    # pods holding uids the copies would take: the copies' names skip them
    held = draw(st.sets(st.integers(0, 40), max_size=3))
    pods += [pod(f"fill~{k}", 100, 64, f"n{k % n}") for k in held]
    tmpl = template(draw(st.sampled_from(kinds)), draw(st.sampled_from((100, 300, 700))),
                    draw(st.sampled_from((64, 512, 2048))))
    return FillWorld(nodes, tuple(pods), draw(st.sampled_from((0, 5, 10, 30))), tmpl,
                     draw(st.integers(1, 6 * n)))


@dataclass(frozen=True)
class Filled:
    result: FillResult
    state: Any  # snapshot_state of the fork after the fill (keep), else None
    cursor: tuple[Any, ...]


def filled(
    world: FillWorld, rounds: bool, keep: bool, monkeypatch: pytest.MonkeyPatch,
    setup: Callable[[Cluster], None] | None = None,
) -> Filled:
    """The fill of `world` on a fork of a fresh cluster, with the rounds or copy by copy."""
    c = world.cluster()
    if setup is not None:
        setup(c)
    with monkeypatch.context() as m:
        if not rounds:
            m.setattr(fill_module, "continue_fill", lambda *a, **k: a[5])
        with c.fork() as f:
            r = fill(f, Fill(world.template, world.max_pods), lambda: True, keep)
            cur = f.cursor
            cursor = (cur.cycle, cur.next_start_index, cur.rng.bit_generator.state)
            return Filled(r, snapshot_state(f.snapshot) if keep else None, cursor)
