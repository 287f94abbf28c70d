"""RemainingPdbTracker (engine/simulate/drainability.py) keeps the budgets covering each
(namespace, labels) and spends them per budget; it must answer as the autoscaler's plain loops
(basicRemainingPdbTracker: every budget against every pod, in order), here written out as the
reference, on random budgets (namespaces, selectors, none, names repeated) and pods."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from schedsvc.engine.simulate.drainability import RemainingPdbTracker, pdb_selects
from schedsvc.model import LabelSelector, LabelSelectorRequirement, Pod, PodDisruptionBudget
from tests.builders.domain import pod


class Reference:
    """The autoscaler's loops, budget by budget over every pod."""

    def __init__(self, pdbs: Sequence[PodDisruptionBudget]) -> None:
        self.pdbs = list(pdbs)
        self.remaining = {b.key: b.disruptions_allowed for b in self.pdbs}

    def matching(self, p: Pod) -> list[PodDisruptionBudget]:
        return [b for b in self.pdbs if pdb_selects(b, p)]

    def can_remove_pods(self, pods: Sequence[Pod]) -> Pod | None:
        for b in self.pdbs:
            left, count = self.remaining[b.key], 0
            for p in pods:
                if pdb_selects(b, p):
                    count += 1
                    if left < count:
                        return p
        return None

    def remove_pods(self, pods: Sequence[Pod]) -> None:
        for b in self.pdbs:
            self.remaining[b.key] -= sum(1 for p in pods if pdb_selects(b, p))


SELECTORS = [
    None,
    LabelSelector(),
    LabelSelector(match_labels=(("app", "x"),)),
    LabelSelector(match_labels=(("app", "y"),)),
    LabelSelector(match_expressions=(LabelSelectorRequirement("tier", "In", ("web", "db")),)),
    LabelSelector(match_expressions=(LabelSelectorRequirement("app", "DoesNotExist"),)),
]

budgets = st.lists(st.builds(
    PodDisruptionBudget, st.sampled_from(["b0", "b1", "b2", "b3"]), st.sampled_from(["a", "b"]),
    st.sampled_from(SELECTORS), st.integers(0, 3),
), max_size=8)


@st.composite
def pods(draw: st.DrawFn, prefix: str) -> list[Pod]:
    out = []
    for i in range(draw(st.integers(0, 8))):
        labels = draw(st.dictionaries(
            st.sampled_from(["app", "tier"]), st.sampled_from(["x", "y", "web"]), max_size=2
        ))
        out.append(pod(f"{prefix}{i}", namespace=draw(st.sampled_from(["a", "b"])), labels=labels))
    return out


@settings(max_examples=300, deadline=None)
@given(budgets, pods("p"), pods("q"))
def test_the_tracker_answers_as_the_autoscalers_loops(
    pdbs: list[PodDisruptionBudget], first: list[Pod], then: list[Pod],
) -> None:
    got, want = RemainingPdbTracker(pdbs), Reference(pdbs)
    for p in first + then:
        assert got.matching(p) == want.matching(p)
    for batch in (first, then, first + then):
        assert got.can_remove_pods(batch) is want.can_remove_pods(batch)
        got.remove_pods(batch)
        want.remove_pods(batch)
        assert got.remaining == want.remaining


def test_the_first_pod_past_a_budget_is_named_budget_by_budget() -> None:
    """b0 (app=x, 1 left) and b1 (tier=web, 0 left): b0 is asked first, so the second app=x
    pod is named although the tier=web pod before it already exceeds b1."""
    x = LabelSelector(match_labels=(("app", "x"),))
    web = SELECTORS[4]
    tracker = RemainingPdbTracker([PodDisruptionBudget("b0", "a", x, 1),
                                   PodDisruptionBudget("b1", "a", web, 0)])
    p = [pod("p0", namespace="a", labels={"app": "x"}),
         pod("p1", namespace="a", labels={"tier": "web"}),
         pod("p2", namespace="a", labels={"app": "x"})]
    assert tracker.can_remove_pods(p) is p[2]
    assert tracker.can_remove_pods(p[:2]) is p[1]
    assert tracker.can_remove_pods([pod("p3", namespace="b", labels={"app": "x"})]) is None
