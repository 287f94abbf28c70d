"""Our engine against kube's recorded verdicts on the generated volume cases
(tests/data/volumes, recorded by tools/kube-oracle: see the README there).

Each case is read as the client reads `kubectl get -o json` (its storage objects included),
sent through the server's conversion, explained node by node and scheduled: every node's
verdict (feasible, the rejecting plugin, its reasons), every feasible node's scores and total,
the FitError, the chosen node, and the bindings VolumeBinding's Reserve made on that node
(Placement.volume_bindings) are compared with kube's. A case where a plugin ended kube's
cycle with an Error is compared on Explain's verdicts (the erroring nodes with code Error) and
on the pod's outcome: unschedulable with kube's error message, no preemption.

    python -m tools.conformance_volumes [--version 1.37|1.35] [--limit N]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from schedsvc.config.scheduler import parse_config
from schedsvc.engine.explain import Explanation
from schedsvc.framework.feature import EmulatedVersion, Features
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

_V1_37 = EmulatedVersion("1.37")
# the recordings -> the features we run them with. The 1.35 recording is kube v1.37.2 with
# 1.35's volume gates off (tools/kube-oracle/README.md), not v1.35.4: its other plugins score
# as 1.37's, so it is 1.37 with those gates off here (--emulated-version 1.35 switches both).
VERSIONS = {
    "1.37": Features(_V1_37),
    "1.35": Features(_V1_37, (("StorageCapacityScoring", False), ("VolumeLimitScaling", False))),
}


def run_volume_case(case: VolumeCase, features: Features) -> CaseResult:
    """One case, aspect by aspect (see the module's docstring)."""
    res = CaseResult(case.id, case.features)
    exp: dict[str, Any] = dict(case.case["expected"])
    v = features.emulated_version
    pct = case.case.get("percentageOfNodesToScore", 100)
    config = parse_config({"percentageOfNodesToScore": pct}, emulated_version=v, features=features)
    engine = _engine_for(case.case, config, version=v)  # no PostFilter, as recorded
    try:
        upd, pod = _to_domain(case.case)
        cluster = engine.cluster("conformance")
        cluster.update(upd)
        if case.error is not None:
            _compare_error(res, case, cluster.explain(pod))
            placements, _ = cluster.schedule([pod])
            p = placements[0]
            res.check("error:outcome", "", Outcome.UNSCHEDULABLE, p.outcome)
            res.check("error:message", "", case.error.get("message", ""), p.message)
            res.check("error:preemption", "", ("", ()), (p.nominated_node_name, p.victims))
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
            # the oracle lists a node's bindings sorted by claim (tools/kube-oracle/volumes.go)
            ours = tuple(sorted(p.volume_bindings, key=lambda b: b.claim))
            res.check("volumeBindings", p.node_name, tuple(want), ours)
    finally:
        engine.close()
    return res


def _compare_error(res: CaseResult, case: VolumeCase, ex: Explanation) -> None:
    """A case kube's cycle ended with an Error: Explain's verdict per node (the erroring ones
    with code Error and kube's message as their reason; no scores) and its message."""
    ours = {n.name: n for n in ex.nodes}
    res.check("numNodes", "", len(case.nodes), len(ex.nodes))
    for en in case.nodes:
        on = ours.get(en.name)
        res.check("feasible", en.name, en.feasible, None if on is None else on.feasible)
        if on is None or en.feasible or on.feasible:
            continue
        res.check("reasons", en.name, sorted(en.reasons), sorted(on.reasons))
        res.check("plugin", en.name, en.plugin, on.plugin)
        res.check("error:code", en.name, en.code == "Error", on.code == "Error")
    assert case.error is not None
    res.check("error:explain", "", case.error.get("message", ""), ex.message)


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
        f = VERSIONS[version]
        gates = ",".join(f"{g}={str(on).lower()}" for g, on in f.gates)
        how = f"emulated {f.emulated_version.value}" + (f", gates {gates}" if gates else "")
        print(f"### volume cases, kube {version} recording ({how})\n")
        report = run_volume_recording(version, args.limit)
        print(report.render() + "\n")
        ok &= not report.failed_cases
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
