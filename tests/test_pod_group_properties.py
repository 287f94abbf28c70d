"""Invariants of pod group cycles over random worlds and request sequences (hypothesis), with
GenericWorkload on and DefaultPreemption left out (its workload-aware half is another branch's):

- a gang is placed to at least minCount (members already bound count) or not at all; a gang
  held by PreEnqueue or failing places nothing;
- a basic group places every member that fits: a member it fails fits on no node, even with
  what the request placed after it (resources only go down within a request);
- no node is over-committed (cpu, memory, pods) after any request;
- a retry with the same uids places nothing twice: each pod placed before is answered
  "already placed" on its node; resending only the placed pods changes nothing at all;
- batching on and off give the same answers, groups mixed among plain pods;
- a dry run leaves the snapshot and the PodGroups as they were;
- a group that fails leaves the snapshot byte-identical (snapshot_state), only its
  PodGroupInitiallyScheduled condition written.

A failed group's members were assumed and taken back, so the generation moves on where a plain
pod's failure leaves it; a group's dry run runs on a fork and leaves it: compared apart, in
test_a_dry_run_leaves_the_generation_and_a_failed_group_moves_it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.engine.pod_group_result import GroupOutcome
from schedsvc.engine.schedule_one import Placement
from schedsvc.engine.scheduler import Cluster
from schedsvc.model import Outcome, Pod
from schedsvc.model_pod_group import PodGroup
from schedsvc.resourcehelper import pod_requests
from tests.builders.domain import node
from tests.builders.fingerprint import snapshot_state
from tests.builders.group_cycles import (
    NO_PREEMPTION,
    gang_cluster,
    member,
    schedule_request,
    state_of,
    warmed,
)
from tests.builders.pod_group_world import GroupWorld, fits_somewhere, group_worlds

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALREADY = "already placed"


def _cluster(w: GroupWorld, batching: bool = False) -> Cluster:
    return warmed(gang_cluster(w.nodes, w.bound, w.groups, batching=batching, **NO_PREEMPTION))


def _newly_placed(out: Sequence[Placement]) -> list[Placement]:
    return [p for p in out if p.outcome is Outcome.SCHEDULED and p.message != ALREADY]


def _free(c: Cluster) -> dict[str, tuple[int, int]]:
    s = c.snapshot
    cpu, pods = s.resource_index["cpu"], s.resource_index["pods"]
    return {
        name: (int(s.allocatable[row, cpu] - s.requested[row, cpu]),
               int(s.allocatable[row, pods] - s.requested[row, pods]))
        for name, row in s.index.items()
    }


def _check_not_over_committed(c: Cluster) -> None:
    s = c.snapshot
    for col in ("cpu", "memory", "pods"):
        j = s.resource_index[col]
        assert (s.requested[s.order, j] <= s.allocatable[s.order, j]).all(), f"{col} over"


def _check_groups(c: Cluster, request: Sequence[Pod], out: Sequence[Placement],
                  groups: dict[str, PodGroup]) -> None:
    """All or nothing for gangs, every fitting member for basic groups."""
    cpu_of = {p.uid: pod_requests(p)["cpu"] for p in request}
    free = _free(c)
    keys = {p.pod_group for p in out if p.pod_group}
    for key in keys:
        members = [p for p in out if p.pod_group == key]
        res = members[0].group
        assert res is not None and all(p.group is res for p in members)
        placed = _newly_placed(members)
        pg = groups[key]
        if res.outcome in (GroupOutcome.GATED, GroupOutcome.UNSCHEDULABLE, GroupOutcome.ERROR):
            assert not placed, f"{key}: {res.outcome.name} yet {len(placed)} placed"
        if pg.gang and placed:
            assert len(placed) + res.already_scheduled >= pg.placement_min_count, key
        if not pg.gang and res.outcome in (GroupOutcome.SCHEDULED, GroupOutcome.UNSCHEDULABLE):
            # a basic group tries every member (its minimum of 1 is out of reach only after
            # the last), so each member it did not place fit nowhere when tried
            for p in members:
                if p.outcome is Outcome.UNSCHEDULABLE:
                    assert not fits_somewhere(_pod(request, p.pod_uid), free, cpu_of), (
                        f"{p.pod_uid} of basic {key} fits yet failed: {p.message}")


def _pod(request: Sequence[Pod], uid: str) -> Pod:
    return next(p for p in request if p.uid == uid)


def _but_generation(state: dict[str, Any]) -> dict[str, Any]:
    capacity, _generation, static, rows = state["scalars"]
    return {**state, "scalars": (capacity, static, rows)}


def _answers(out: Sequence[Placement]) -> list[tuple[str, str, str, str]]:
    return [(p.pod_uid, p.outcome.name, p.node_name, p.message) for p in out]


@SETTINGS
@given(group_worlds())
def test_groups_are_all_or_nothing_and_nodes_never_over_committed(w: GroupWorld) -> None:
    c = _cluster(w)
    groups = {g.key: g for g in w.groups}
    seen: set[str] = set()
    for request in w.requests:
        out = schedule_request(c, request)
        assert sorted(p.pod_uid for p in out) == sorted(p.uid for p in request)
        for p in _newly_placed(out):
            assert p.pod_uid not in seen, f"{p.pod_uid} placed twice"
            seen.add(p.pod_uid)
        _check_not_over_committed(c)
        _check_groups(c, request, out, groups)


@SETTINGS
@given(group_worlds(max_requests=1))
def test_a_retry_places_nothing_twice(w: GroupWorld) -> None:
    c = _cluster(w)
    (request,) = w.requests
    first = schedule_request(c, request)
    placed = {p.pod_uid: p.node_name for p in first if p.outcome is Outcome.SCHEDULED}
    pods_before = {u: r.node_name for u, r in c.snapshot.pods.items()}
    again = schedule_request(c, request)
    for p in again:
        if p.pod_uid in placed:
            assert (p.outcome, p.node_name, p.message) == (
                Outcome.SCHEDULED, placed[p.pod_uid], ALREADY)
    assert {u: r.node_name for u, r in c.snapshot.pods.items()} == pods_before
    _check_not_over_committed(c)
    only_placed = [p for p in request if p.uid in placed]
    if only_placed:
        before = state_of(c)
        out = schedule_request(c, only_placed)
        assert all(p.message == ALREADY for p in out)
        assert state_of(c) == before


@SETTINGS
@given(group_worlds())
def test_batching_on_and_off_answer_the_same(w: GroupWorld) -> None:
    on, off = _cluster(w, batching=True), _cluster(w, batching=False)
    for request in w.requests:
        assert _answers(schedule_request(on, request)) == _answers(schedule_request(off, request))
    assert {u: r.node_name for u, r in on.snapshot.pods.items()} == {
        u: r.node_name for u, r in off.snapshot.pods.items()}
    assert on.snapshot.pod_groups == off.snapshot.pod_groups


@SETTINGS
@given(group_worlds(), st.data())
def test_a_dry_run_leaves_everything_as_it_was(w: GroupWorld, data: st.DataObject) -> None:
    c = _cluster(w)
    dry_at = data.draw(st.integers(0, len(w.requests) - 1))
    for i, request in enumerate(w.requests):
        if i == dry_at:
            before = state_of(c)
            schedule_request(c, request, dry_run=True)
            after = state_of(c)
            del before["cycle"], after["cycle"]  # a dry run's cycles are counted, as kube's
            assert _but_generation(after) == _but_generation(before)
        else:
            schedule_request(c, request)


def _without_conditions(groups: dict[str, PodGroup]) -> dict[str, Any]:
    return {k: (g.name, g.min_count, g.priority) for k, g in groups.items()}


@SETTINGS
@given(group_worlds())
def test_a_failed_group_leaves_the_snapshot_byte_identical(w: GroupWorld) -> None:
    """Each group of each request sent alone: when it places nothing, the snapshot reads as
    before, and of the PodGroups only that group's condition may have changed."""
    c = _cluster(w)
    for request in w.requests:
        by_group: dict[str, list[Pod]] = {}
        for p in request:
            by_group.setdefault(p.pod_group, []).append(p)
        for name, members in sorted(by_group.items()):
            state_of(c)  # the members index registered before the first snapshot_state
            before, groups = snapshot_state(c.snapshot), dict(c.snapshot.pod_groups)
            out = schedule_request(c, members)
            if name and not _newly_placed(out):
                assert _but_generation(snapshot_state(c.snapshot)) == _but_generation(before)
                after = dict(c.snapshot.pod_groups)
                assert _without_conditions(after) == _without_conditions(groups)
                assert {k for k in after if after[k] != groups[k]} <= {f"default/{name}"}


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry run", "failed group"])
def test_a_dry_run_leaves_the_generation_and_a_failed_group_moves_it(dry_run: bool) -> None:
    """A group's dry run runs on a fork: the generation stays, as a plain pod's dry run leaves
    it. A group that fails had its members assumed into the live snapshot and taken back: the
    state is as before (test above) but the generation moved on, which the answer carries
    (docs/guarantees.md)."""
    w = GroupWorld(
        (node("n0", cpu=1000),), (PodGroup("g", min_count=2),), (),
        ((member("a", "g", cpu=600), member("b", "g", cpu=600 if not dry_run else 100)),))
    c = _cluster(w)
    generation = c.snapshot.generation
    out = schedule_request(c, w.requests[0], dry_run=dry_run)
    assert dry_run or not _newly_placed(out)
    if dry_run:
        assert c.snapshot.generation == generation
    else:
        assert c.snapshot.generation > generation
