"""Random worlds for the pod group properties (tests/test_pod_group_properties.py): a few nodes,
PodGroups (gangs of minCount 1..6 and basic groups), members already bound, and Schedule
requests mixing group members with plain pods in any order. Resource requests only (cpu and
the pod count matter), so "fits" is plain arithmetic a test can check on the final snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from schedsvc.model import Node, Pod
from schedsvc.model_pod_group import PodGroup
from tests.builders.domain import GiB, MiB, node, pod

__all__ = ["GroupWorld", "group_worlds", "fits_somewhere"]

CPUS = (100, 400, 900, 1500)
MEMORY = 128 * MiB


@dataclass(frozen=True)
class GroupWorld:
    nodes: tuple[Node, ...]
    groups: tuple[PodGroup, ...]
    bound: tuple[Pod, ...]
    requests: tuple[tuple[Pod, ...], ...]


def _group(draw: st.DrawFn, i: int) -> PodGroup:
    if draw(st.booleans()):
        return PodGroup(f"g{i}", min_count=draw(st.integers(1, 6)))
    return PodGroup(f"g{i}")


def _request(draw: st.DrawFn, r: int, groups: tuple[PodGroup, ...]) -> tuple[Pod, ...]:
    pods: list[Pod] = []
    for g in groups:
        for k in range(draw(st.integers(0, 6))):
            cpu = draw(st.sampled_from(CPUS))
            pods.append(pod(f"r{r}-{g.name}-{k}", cpu=cpu, memory=MEMORY, pod_group=g.name))
    for k in range(draw(st.integers(0, 4))):
        pods.append(pod(f"r{r}-plain-{k}", cpu=draw(st.sampled_from(CPUS)), memory=MEMORY))
    if not pods:
        pods.append(pod(f"r{r}-plain", cpu=100, memory=MEMORY))
    return tuple(draw(st.permutations(pods)))


@st.composite
def group_worlds(draw: st.DrawFn, max_requests: int = 3) -> GroupWorld:
    nodes = tuple(
        node(f"n{i}", cpu=draw(st.sampled_from((1000, 2000, 4000))), memory=8 * GiB,
             pods=draw(st.sampled_from((5, 110))))
        for i in range(draw(st.integers(1, 4)))
    )
    groups = tuple(_group(draw, i) for i in range(draw(st.integers(1, 3))))
    bound = tuple(
        pod(f"b-{g.name}-{k}", cpu=100, memory=MEMORY, pod_group=g.name,
            node_name=nodes[k % len(nodes)].name)
        for g in groups[:2] for k in range(draw(st.integers(0, 1)))
    )
    requests = tuple(_request(draw, r, groups) for r in range(draw(st.integers(1, max_requests))))
    return GroupWorld(nodes, groups, bound, requests)


def fits_somewhere(p: Pod, nodes: dict[str, tuple[int, int]], cpu_of: dict[str, int]) -> bool:
    """Whether `p` (its cpu and one pod slot) fits on some node, `nodes` name -> (free cpu,
    free pod slots)."""
    return any(cpu >= cpu_of[p.uid] and slots >= 1 for cpu, slots in nodes.values())
