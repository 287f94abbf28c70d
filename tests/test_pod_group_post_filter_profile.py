"""What a profile's plugins make of a rejected pod group, checked with kube v1.37.2 through
kube-oracle's sequence steps (a hostile review's cases; kube's answers quoted below).

kube fills PodGroupPostFilter from multiPoint as every extension point: disabling
DefaultPreemption at `postFilter` leaves workload-aware preemption on; disabling DynamicResources
removes its PodGroupPostFilter (its message, and the "not found" error when no member reached
its PreFilter). Members that did not fit, or were never tried, keep their nominations; members
whose schedulerName no profile serves are no part of the group (kube never queues them)."""

from __future__ import annotations

from typing import Any

import pytest

from schedsvc.config.scheduler import parse_config
from schedsvc.engine.pod_group_result import GroupOutcome
from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.errors import ConfigError
from schedsvc.model import Outcome
from tests.builders.domain import node, pod
from tests.builders.group_cycles import gang, gang_cluster, group_of, member, schedule_request
from tests.builders.pod_groups import GANG_FEATURES

NEVER_TRIED = "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"


def _plugins(**plugins: Any) -> dict[str, Any]:
    return {"profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}


def _run(conf: dict[str, Any], terminating: bool = False) -> tuple[str, str, set[str]]:
    """Two 1-CPU nodes each holding a 0.8-CPU priority-0 pod; a gang of two 0.5-CPU members of
    priority 100: they fit only by preempting both."""
    c = gang_cluster([node("n0", cpu=1000), node("n1", cpu=1000)],
                     [pod("low0", cpu=800, node_name="n0"), pod("low1", cpu=800, node_name="n1")],
                     [gang("g", 2, priority=100)], **conf)
    out = schedule_request(c, [member("m0", "g", cpu=500, priority=100),
                               member("m1", "g", cpu=500, priority=100, terminating=terminating)])
    r = group_of(out, "default/g")
    return r.outcome.name, r.message, {v.uid for v in r.victims}


def test_disabling_default_preemption_at_post_filter_keeps_group_preemption() -> None:
    got = _run(_plugins(postFilter={"disabled": [{"name": "DefaultPreemption"}]}))
    assert got == ("WAITING_ON_PREEMPTION", "minCount (2) cannot be satisfied: 0 scheduled, 1 "
                   "remaining, pod group preemption: found a placement for podgroup, preempting "
                   "2 victims", {"low0", "low1"})


def test_default_preemption_at_post_filter_only_does_not_preempt_for_a_group() -> None:
    got = _run(_plugins(multiPoint={"disabled": [{"name": "DefaultPreemption"}]},
                        postFilter={"enabled": [{"name": "DefaultPreemption"}]}))
    assert got == ("UNSCHEDULABLE", "minCount (2) cannot be satisfied: 0 scheduled, 1 "
                   "remaining, deallocation and deletion of ResourceClaims completed", set())


def test_no_pod_group_post_filter_plugin_leaves_an_empty_reason() -> None:
    """kube appends the (empty) status of no plugin: the message ends in ", "."""
    got = _run(_plugins(multiPoint={"disabled": [
        {"name": "DynamicResources"}, {"name": "DefaultPreemption"}]}))
    assert got == ("UNSCHEDULABLE", f"{NEVER_TRIED}, ", set())


def test_without_dynamic_resources_no_member_tried_is_no_error() -> None:
    """A gang whose only other member is being deleted fails before any member is tried:
    with DynamicResources kube errs ("not found"); without it, DefaultPreemption answers."""
    got = _run(_plugins(multiPoint={"disabled": [{"name": "DynamicResources"}]}), True)
    msg = f"pod group is unschedulable, {NEVER_TRIED}"
    assert got == ("UNSCHEDULABLE", f"{msg}, pod group preemption: {msg}", set())
    default = _run({}, True)
    assert default[:2] == (
        "ERROR", 'error in "DynamicResources" PodGroupPostFilter plugins: not found')


def test_a_rejected_group_clears_only_the_nominations_of_members_that_fit() -> None:
    """kube's submitPodGroupAlgorithmResult: a member that fit is failed with
    clearNominatedNode; one with its own FitError, or never tried, with no nominating info."""
    c = gang_cluster([node("n0", cpu=2000), node("n1", cpu=2000)], [], [gang("g", 3, priority=100)])
    m = [member("m0", "g", cpu=1000, priority=100, nominated_node_name="n1"),
         member("m1", "g", cpu=5000, priority=100, nominated_node_name="n0"),
         member("m2", "g", cpu=1000, priority=100, nominated_node_name="n0")]
    c.update(SnapshotUpdate(upsert_pods=m))
    out = schedule_request(c, m)
    assert group_of(out, "default/g").outcome is GroupOutcome.UNSCHEDULABLE
    assert {u: r.nominated_node_name for u, r in c.snapshot.nominated.items()} == {
        "m1": "n0", "m2": "n0"}


def test_members_of_another_scheduler_are_no_part_of_the_group() -> None:
    c = gang_cluster([node("n0"), node("n1")], groups=[gang("g", 2)])
    out = schedule_request(c, [member("m0", "g", scheduler_name="other"),
                               member("m1", "g", scheduler_name="other")])
    assert [(p.outcome, p.group) for p in out] == [(Outcome.REJECTED, None)] * 2
    assert c.snapshot.pod_groups["default/g"].conditions == ()  # nothing written
    out = schedule_request(c, [member("b0", "g"), member("b1", "g"),
                               member("b2", "g", scheduler_name="other")])
    assert [p.outcome for p in out] == [Outcome.SCHEDULED, Outcome.SCHEDULED, Outcome.REJECTED]
    assert group_of(out, "default/g").outcome is GroupOutcome.SCHEDULED


def test_the_point_takes_only_its_two_plugins() -> None:
    conf = _plugins(podGroupPostFilter={"enabled": [{"name": "PrioritySort"}]})
    with pytest.raises(ConfigError, match="does not implement PodGroupPostFilter"):
        parse_config(conf, features=GANG_FEATURES)
    prof = parse_config(_plugins(podGroupPostFilter={"disabled": [{"name": "*"}], "enabled": [
        {"name": "DefaultPreemption"}]}), features=GANG_FEATURES).profiles[0]
    assert prof.pod_group_post_filter == ("DefaultPreemption",)
    assert parse_config({}, features=GANG_FEATURES).profiles[0].pod_group_post_filter == (
        "DynamicResources", "DefaultPreemption")
