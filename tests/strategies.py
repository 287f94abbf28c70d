"""Hypothesis strategies for random clusters and pod shapes, built on tests/builders."""

from __future__ import annotations

from hypothesis import strategies as st

from schedsvc.model import (
    Affinity,
    ContainerImage,
    ContainerPort,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
)
from tests.builders import GiB, node

ZONES = ("a", "b", "c")
IMAGES = ("img/web:1", "img/db:2", "img/ml:3")


@st.composite
def nodes(draw: st.DrawFn, min_size: int = 1, max_size: int = 12) -> list[Node]:
    n = draw(st.integers(min_size, max_size))
    out = []
    for i in range(n):
        taints: tuple[Taint, ...] = ()
        if draw(st.integers(0, 5)) == 0:
            taints = (Taint("dedicated", "gpu", draw(st.sampled_from(
                ["NoSchedule", "PreferNoSchedule", "NoExecute"]))),)
        imgs = tuple(
            ContainerImage((im,), draw(st.integers(10, 900)) * 2**20)
            for im in IMAGES
            if draw(st.booleans())
        )
        out.append(
            node(
                f"n{i}",
                cpu=draw(st.sampled_from([1000, 2000, 4000])),
                memory=draw(st.sampled_from([2 * GiB, 4 * GiB, 8 * GiB])),
                pods=draw(st.sampled_from([3, 10, 110])),
                labels={"zone": ZONES[i % 3], "disk": draw(st.sampled_from(["ssd", "hdd"]))},
                taints=taints,
                images=imgs,
                unschedulable=draw(st.integers(0, 9)) == 0,
            )
        )
    return out


@st.composite
def pod_shapes(draw: st.DrawFn) -> dict[str, object]:
    """A few fields that batching signatures read: resources, selector, tolerations, ..."""
    shape: dict[str, object] = {
        "cpu": draw(st.sampled_from([None, 100, 500, 900, 1500])),
        "memory": draw(st.sampled_from([None, 128 * 2**20, GiB])),
        "image": draw(st.sampled_from(IMAGES)),
    }
    if draw(st.integers(0, 3)) == 0:
        shape["node_selector"] = {"disk": draw(st.sampled_from(["ssd", "hdd"]))}
    if draw(st.integers(0, 3)) == 0:
        shape["tolerations"] = (Toleration(key="dedicated", operator="Exists"),)
    if draw(st.integers(0, 3)) == 0:
        zone = draw(st.sampled_from(ZONES))
        term = NodeSelectorTerm(match_expressions=(NodeSelectorRequirement("zone", "In", (zone,)),))
        weight = draw(st.integers(1, 100))
        shape["affinity"] = Affinity(
            node_affinity=NodeAffinity(preferred=(PreferredSchedulingTerm(weight, term),))
        )
    if draw(st.integers(0, 5)) == 0:
        shape["ports"] = (ContainerPort(container_port=80, host_port=8080),)
    if draw(st.integers(0, 2)) == 0:  # what existing pods' anti-affinity terms may select
        shape["labels"] = {"app": "web"}
    return shape
