"""Every recorded gang case (tests/data/gangs: kube v1.37.2 through tools/kube-oracle's sequence
mode) through tools/conformance_gangs: each agrees with kube on every aspect compared (first
answers, nominated nodes, gated pods, final nodes, victims, PodGroup conditions), or differs
exactly as tests/data/gangs/known.json lists (its README explains each class). A difference
that appears, or one that goes away, fails the case: known.json is rewritten on purpose
(`python -m tools.conformance_gangs --write-known`), never silently.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from tools.conformance_gangs import KNOWN, differences, load_gang_cases, run_gang_case
from tools.record_gangs import outcome_kind

CASES = list(load_gang_cases())
EXPECTED_DIFFERENCES: dict[str, Any] = json.loads(KNOWN.read_text(encoding="utf-8"))


def test_the_recording_holds_the_cases_the_issue_asks_for() -> None:
    """>= 200 cases with GenericWorkload on, among them groups that fit, that cannot, that fit
    only by preempting, and mixes with ordinary pods; a few with the gate off."""
    on = [c for c in CASES if c["featureGates"]["GenericWorkload"]]
    kinds = Counter(outcome_kind(c["expected"]) for c in on)
    assert len(on) >= 200
    assert all(kinds[k] >= 20 for k in ("fit", "nofit", "preempt", "mixed")), kinds
    assert any(not c["featureGates"]["GenericWorkload"] for c in CASES)
    assert {c["featureGates"]["OpportunisticBatching"] for c in on} == {True, False}
    assert set(EXPECTED_DIFFERENCES) <= {c["id"] for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_gang_case_agrees_with_kube(case: dict[str, Any]) -> None:
    res = run_gang_case(case)
    assert res.checks, "nothing compared"
    want = EXPECTED_DIFFERENCES.get(case["id"], {}).get("differences", [])
    assert differences(res) == want, res.mismatches[:5]
