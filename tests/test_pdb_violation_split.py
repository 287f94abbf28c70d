"""filterPodsWithPDBViolation across releases: v1.35.4 spends every budget a pod matches,
v1.37.2's FilterVictimsWithPDBViolation stops at the first budget the pod takes below zero
(util.go podIsViolating returns there), so a later budget keeps room for the next pod."""

from __future__ import annotations

from schedsvc.model import LabelSelector, PodDisruptionBudget, frozen_map
from schedsvc.plugins.default_preemption import split_by_pdb_violation
from tests.builders import pod

A = PodDisruptionBudget("a", selector=LabelSelector((("a", "1"),)), disruptions_allowed=0)
B = PodDisruptionBudget("b", selector=LabelSelector((("b", "1"),)), disruptions_allowed=1)
X = pod("x", labels=frozen_map({"a": "1", "b": "1"}))
Y = pod("y", labels=frozen_map({"b": "1"}))


def test_v1_35_spends_every_matching_budget() -> None:
    # x takes a to -1 (violating) and b to 0; y then takes b to -1
    assert split_by_pdb_violation([X, Y], [A, B]) == ([0, 1], [])


def test_v1_37_stops_at_the_first_budget_violated() -> None:
    # x takes a to -1 and stops: b keeps its one disruption, for y
    assert split_by_pdb_violation([X, Y], [A, B], stop_early=True) == ([0], [1])
