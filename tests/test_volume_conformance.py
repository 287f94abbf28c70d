"""Agreement with kube-scheduler's recorded verdicts on the volume cases (tests/data/volumes),
on a deterministic sample of each recording: every aspect tools/conformance_volumes compares
(per-node verdicts and codes, scores, FitError, a plugin Error's message, the chosen node, the
bindings of Reserve). `make conformance` runs all 1000 cases of both.

The sample is every case kube ended with an Error, then evenly spaced cases to 150, so the
Error path is always covered whatever the recording's order.
"""

from __future__ import annotations

import pytest

from tools.conformance_volumes import VERSIONS, run_volume_case
from tools.volume_verdicts import VolumeCase, load_volume_cases

SAMPLE = 150


def _sample(version: str) -> list[VolumeCase]:
    cases = load_volume_cases(version)
    errors = [c for c in cases if c.error is not None]
    rest = [c for c in cases if c.error is None]
    step = max(1, len(rest) // (SAMPLE - len(errors)))
    return (errors + rest[::step])[:SAMPLE]


ITEMS = [(v, c) for v in sorted(VERSIONS) for c in _sample(v)]


def test_sample_is_150_per_recording_with_errors() -> None:
    for version in VERSIONS:
        sample = [c for v, c in ITEMS if v == version]
        assert len(sample) == SAMPLE
        assert len({c.id for c in sample}) == SAMPLE
        assert any(c.error is not None for c in sample)


@pytest.mark.parametrize(("version", "case"), ITEMS, ids=[f"{v}-{c.id}" for v, c in ITEMS])
def test_volume_case_agrees(version: str, case: VolumeCase) -> None:
    res = run_volume_case(case, VERSIONS[version])
    assert res.checks, "nothing compared"
    assert not res.mismatches, res.mismatches[:5]
