"""Our engine against kube's recorded verdicts on the generated volume cases
(tests/data/volumes, recorded by tools/kube-oracle: see the README there).

Each case is read as the client reads `kubectl get -o json` (its storage objects included),
sent through the server's conversion, explained node by node and scheduled: every node's
verdict (feasible, the rejecting plugin, its reasons), every feasible node's scores and total,
the FitError, the chosen node, and the bindings VolumeBinding's Reserve made on that node
(Placement.volume_bindings) are compared with kube's. A case where a plugin ended kube's
cycle with an Error is compared on the pod's outcome: unschedulable, with kube's message.

    python -m tools.conformance_volumes [--version 1.37|1.35] [--limit N]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from schedsvc.framework.feature import EmulatedVersion
from schedsvc.model import Outcome
from tools.conformance import (
    CaseResult,
    Report,
    _engine_for,
    _to_domain,
    compare_explanation,
)
from tools.volume_verdicts import VolumeCase, load_volume_cases

__all__ = ["run_volume_case", "run_volume_recording", "main"]

# the recordings' releases -> the release we emulate for them
VERSIONS = {"1.37": EmulatedVersion("1.37"), "1.35": EmulatedVersion("1.35")}


def run_volume_case(case: VolumeCase, version: EmulatedVersion) -> CaseResult:
    """One case, aspect by aspect (see the module's docstring)."""
    res = CaseResult(case.id, case.features)
    exp: dict[str, Any] = dict(case.case["expected"])
    engine = _engine_for(case.case, None, version=version)  # no PostFilter, as recorded
    try:
        upd, pod = _to_domain(case.case)
        cluster = engine.cluster("conformance")
        cluster.update(upd)
        if case.error is not None:
            placements, _ = cluster.schedule([pod], dry_run=True)
            p = placements[0]
            res.check("error:outcome", "", Outcome.UNSCHEDULABLE, p.outcome)
            res.check("error:message", "", case.error.get("message", ""), p.message)
            return res
        compare_explanation(res, exp, cluster.explain(pod))
        placements, _ = cluster.schedule([pod])
        p = placements[0]
        if case.fit_error:
            res.check("fitError", "", case.fit_error, p.message)
            res.check("chosen", "", "", p.node_name)
            return res
        res.check("outcome", "", Outcome.SCHEDULED, p.outcome)
        best = list(case.max_nodes) or [n.name for n in case.nodes if n.feasible]
        res.check("chosen", "", True, p.node_name in best)
        want = case.bindings_by_node.get(p.node_name)
        if want is not None:
            res.check("volumeBindings", p.node_name, tuple(want), tuple(p.volume_bindings))
    finally:
        engine.close()
    return res


def run_volume_recording(version: str = "1.37", limit: int = 0) -> Report:
    """Every case of one recording (the first `limit` when set)."""
    cases = load_volume_cases(version)
    if limit:
        cases = cases[:limit]
    report = Report()
    for case in cases:
        report.add(run_volume_case(case, VERSIONS[version]))
    return report


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.conformance_volumes", description=__doc__)
    ap.add_argument("--version", choices=sorted(VERSIONS), help="one recording (default: both)")
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args(argv)
    ok = True
    for version in [args.version] if args.version else sorted(VERSIONS, reverse=True):
        print(f"### volume cases, kube {version} recording (--emulated-version {version})\n")
        report = run_volume_recording(version, args.limit)
        print(report.render() + "\n")
        ok &= not report.failed_cases
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
