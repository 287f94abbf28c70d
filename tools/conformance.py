"""Agreement with kube-scheduler's recorded verdicts, per emulated release: v1.35.4's
(shared/conformance, run under `--emulated-version 1.35`) and v1.37.2's
(tests/data/conformance-1.37, recorded with tools/kube-oracle, run under the default 1.37).

Each case is read the way a user reads a cluster: its nodes, pods, the pod to schedule and its
objects (Namespaces, ReplicaSets, Services) as one `kind: List` through the client's
`kubectl get -o json` reader -> our proto -> domain (the server's converter) -> engine: Explain
for the per-node verdicts and scores, a dry-run Schedule for the chosen node. Every expected
value is read from the recording; nothing comes from our output.

`python -m tools.conformance [--version 1.35|1.37] [--cases FILE ...]` prints agreement per
aspect and plugin, per feature of a case (real-pods.jsonl.gz lists them) and the first
differing case of each aspect, so a regression points at its plugin at once; without
`--version`, both releases' recordings, each under its own version.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from schedsvc.config import SchedulerConfig, parse_config
from schedsvc.engine.explain import Explanation
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.framework.feature import DEFAULT_EMULATED_VERSION, EmulatedVersion
from schedsvc.model import Outcome
from schedsvc.server.convert import Converter

CONVERTER = Converter()  # one server's conversion and caches

__all__ = [
    "CaseFileError",
    "CaseResult",
    "Mismatch",
    "RECORDINGS",
    "Recording",
    "Report",
    "case_as_list",
    "conformance_dir",
    "default_paths",
    "load_cases",
    "read_case",
    "real_pods_path",
    "run_case",
    "main",
    "preemption_path",
    "run_preemption_case",
]


def conformance_dir() -> Path:
    """shared/conformance beside the repository (kube-scheduler v1.35.4's recordings), or
    $SCHEDSVC_CONFORMANCE_DIR."""
    env = os.environ.get("SCHEDSVC_CONFORMANCE_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "conformance"


def recorded_1_37_dir() -> Path:
    """tests/data/conformance-1.37: the same cases with kube-scheduler v1.37.2's verdicts."""
    return Path(__file__).resolve().parents[1] / "tests" / "data" / "conformance-1.37"


@dataclass(frozen=True, slots=True)
class Recording:
    """One release's verdicts on the four case files, and the version that must reproduce
    them."""

    kube: str  # the release that decided, e.g. "v1.35.4"
    version: EmulatedVersion
    base: Path

    @property
    def cases(self) -> Path:
        return self.base / "cases.jsonl.gz"

    @property
    def profiles(self) -> Path:
        return self.base / "profiles.jsonl.gz"

    @property
    def profiles_yaml(self) -> Path:
        return self.base / "profiles.yaml"

    @property
    def real_pods(self) -> Path:
        """sidecars, pod-level resources, owners, namespaces, ... (default profile)."""
        return self.base / "real-pods.jsonl.gz"

    @property
    def preemption(self) -> Path:
        return self.base / "preemption.jsonl.gz"


RECORDINGS: tuple[Recording, ...] = (
    Recording(EmulatedVersion.V1_35.kube, EmulatedVersion.V1_35, conformance_dir()),
    Recording(EmulatedVersion.V1_37.kube, EmulatedVersion.V1_37, recorded_1_37_dir()),
)


def default_paths() -> tuple[Path, Path, Path]:
    """The v1.35.4 recording's cases.jsonl.gz, profiles.jsonl.gz and profiles.yaml."""
    rec = RECORDINGS[0]
    return rec.cases, rec.profiles, rec.profiles_yaml


def real_pods_path() -> Path:
    """The v1.35.4 recording's real-pods.jsonl.gz."""
    return RECORDINGS[0].real_pods


def preemption_path() -> Path:
    """The v1.35.4 recording's preemption.jsonl.gz."""
    return RECORDINGS[0].preemption


class CaseFileError(ValueError):
    """A case file that cannot be read: missing, not JSONL, or a line that is not a case."""


def load_cases(path: Path) -> Iterator[dict[str, Any]]:
    """The cases of a JSONL file, gzipped (`.gz`) or not; a bad line is a CaseFileError naming
    the file and line."""
    try:
        f = gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(
            path, encoding="utf-8")
    except OSError as exc:
        raise CaseFileError(f"{path}: {exc.strerror or exc}") from None
    with f:
        try:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    case = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CaseFileError(f"{path}:{n}: not JSON: {exc}") from None
                missing = [k for k in ("id", "nodes", "pods", "pod") if k not in case] if \
                    isinstance(case, dict) else ["a JSON object"]
                if missing:
                    raise CaseFileError(f"{path}:{n}: not a case: missing {', '.join(missing)}")
                yield case
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise CaseFileError(f"{path}: {exc}") from None


@dataclass(frozen=True, slots=True)
class Mismatch:
    aspect: str  # feasible, reasons, score:<Plugin>, total, fitError, chosen
    case: str
    node: str
    expected: Any
    got: Any


@dataclass(slots=True)
class CaseResult:
    case: str
    features: tuple[str, ...] = ()  # what the case exercises (real-pods.jsonl.gz lists them)
    checks: dict[str, int] = field(default_factory=dict)  # aspect -> number compared
    mismatches: list[Mismatch] = field(default_factory=list)

    def check(self, aspect: str, node: str, expected: Any, got: Any) -> None:
        self.checks[aspect] = self.checks.get(aspect, 0) + 1
        if expected != got:
            self.mismatches.append(Mismatch(aspect, self.case, node, expected, got))


def _engine_for(
    case: Mapping[str, Any], config: SchedulerConfig | None, preemption: bool = False,
    version: EmulatedVersion = DEFAULT_EMULATED_VERSION,
) -> Engine:
    pct = case.get("percentageOfNodesToScore", 100)
    if config is None:
        config = parse_config({"percentageOfNodesToScore": pct}, emulated_version=version)
    elif config.emulated_version is not version:
        raise ValueError(f"configuration for {config.emulated_version}, cases for {version}")
    if not preemption:
        # recorded without PostFilter: kube's messages there carry no preemption suffix
        config = dataclasses.replace(
            config,
            profiles=tuple(dataclasses.replace(p, preemption=None) for p in config.profiles),
        )
    return Engine(config, seed=1, batching_enabled=False)


def case_as_list(case: Mapping[str, Any]) -> dict[str, Any]:
    """The case as `kubectl get nodes,pods,... -o json` would print it: one List."""
    items: list[Any] = [{"apiVersion": "v1", "kind": "Node", **n} for n in case["nodes"]]
    items += [{"apiVersion": "v1", "kind": "Pod", **p} for p in (*case["pods"], case["pod"])]
    items += case.get("objects", ())
    return {"apiVersion": "v1", "kind": "List", "items": items}


def read_case(case: Mapping[str, Any]) -> tuple[Any, list[Any], list[Any], Any]:
    """Nodes, bound pods, namespaces and the pod to schedule, as the client's reader reads the
    case's List (schedsvc.v1 messages)."""
    from schedsvc_client.kube import load_objects

    nodes, pods, namespaces = load_objects(json.dumps(case_as_list(case)))
    uid = case["pod"]["metadata"].get("uid")
    pending = [p for p in pods if not p.node_name and p.uid == uid]
    if len(pending) != 1:
        raise ValueError(f"case {case['id']}: the pod to schedule was not read back")
    return nodes, [p for p in pods if p.node_name], namespaces, pending[0]


def _to_domain(case: Mapping[str, Any]) -> tuple[SnapshotUpdate, Any]:
    """The case's snapshot (nodes, bound pods, namespaces, PodDisruptionBudgets, storage
    objects) and the pod to schedule, all read from its one `kind: List` by the client's
    load_cluster, so the pod gets its default spreading selector and PriorityClass from the
    case's objects."""
    from schedsvc_client.kube import load_cluster

    kc = load_cluster(json.dumps(case_as_list(case)))
    uid = case["pod"]["metadata"].get("uid")
    pending = [p for p in kc.pods if not p.node_name and p.uid == uid]
    if len(pending) != 1:
        raise ValueError(f"case {case['id']}: the pod to schedule was not read back")
    bound = [p for p in kc.pods if p.node_name]
    return (
        SnapshotUpdate(
            replace=True,
            upsert_nodes=[CONVERTER.node_from_pb(n, f"nodes[{i}]") for i, n in enumerate(kc.nodes)],
            upsert_pods=[CONVERTER.pod_from_pb(p, f"pods[{i}]") for i, p in enumerate(bound)],
            upsert_namespaces=[
                CONVERTER.namespace_from_pb(ns, f"namespaces[{i}]")
                for i, ns in enumerate(kc.namespaces)
            ],
            upsert_pod_disruption_budgets=[
                CONVERTER.pdb_from_pb(b, f"pdbs[{i}]")
                for i, b in enumerate(kc.pod_disruption_budgets)
            ],
            **_storage(kc.storage_lists()),
        ),
        CONVERTER.pod_from_pb(pending[0], "pod"),
    )


def _storage(lists: Mapping[str, list[Any]]) -> dict[str, Any]:
    """The case's storage objects, converted as the server converts an UpdateSnapshot's."""
    from schedsvc.server.convert_storage_update import storage_update_fields
    from schedsvc.v1 import schedule_pb2 as pb

    request = pb.UpdateSnapshotRequest()
    for name, items in lists.items():
        getattr(request, name).extend(items)
    return storage_update_fields(request, CONVERTER.caches, 1 << 30)


def _best_nodes(case: Mapping[str, Any], exp: Mapping[str, Any]) -> list[str]:
    """The nodes kube may choose when something fits: a nominated node that passes the filters
    first (schedule_one.go's evaluateNominatedNode), else one of `maxNodes` (every feasible node
    when only one is: kube skips scoring)."""
    feasible = [n["name"] for n in exp["nodes"] if n["feasible"]]
    nominated = (case["pod"].get("status") or {}).get("nominatedNodeName")
    if nominated and nominated in feasible:
        return [nominated]
    return list(exp.get("maxNodes") or feasible)


def run_case(
    case: Mapping[str, Any], config: SchedulerConfig | None = None,
    version: EmulatedVersion | None = None,
) -> CaseResult:
    """Compare one case and kube's verdict on it (`expected`) with our engine, aspect by
    aspect, as the README asks, emulating `version` (the configuration's when given, else the
    default release); a `"preemption": true` case through run_preemption_case."""
    if version is None:
        version = config.emulated_version if config is not None else DEFAULT_EMULATED_VERSION
    if case.get("preemption"):
        return run_preemption_case(case, version, config)
    res = CaseResult(case["id"], tuple(case.get("features", ())))
    exp = case["expected"]
    engine = _engine_for(case, config, version=version)
    try:
        upd, pod = _to_domain(case)
        cluster = engine.cluster("conformance")
        cluster.update(upd)
        ex: Explanation = cluster.explain(pod)
        compare_explanation(res, exp, ex)
        placements, _ = cluster.schedule([pod], dry_run=True)
        p = placements[0]
        if "fitError" in exp:
            res.check("fitError", "", exp["fitError"], p.message)
            res.check("chosen", "", "", p.node_name)
        else:
            res.check("outcome", "", Outcome.SCHEDULED, p.outcome)
            res.check("chosen", "", True, p.node_name in _best_nodes(case, exp))
    finally:
        engine.close()
    return res


def run_preemption_case(
    case: Mapping[str, Any], version: EmulatedVersion = DEFAULT_EMULATED_VERSION,
    config: SchedulerConfig | None = None,
) -> CaseResult:
    """A case recorded with DefaultPreemption (`"preemption": true`), read as run_case reads
    one: the node verdicts as in run_case, then, when nothing fits, every candidate with its
    victims, the nominated node and the message with its suffix."""
    res = CaseResult(case["id"], tuple(case.get("features", ())))
    exp = case["expected"]
    engine = _engine_for(case, config, preemption=True, version=version)
    try:
        upd, pod = _to_domain(case)
        cluster = engine.cluster("conformance")
        cluster.update(upd)
        ex = cluster.explain(pod)
        compare_explanation(res, exp, ex)
        placements, _ = cluster.schedule([pod], dry_run=True)
        p = placements[0]
        pre = exp.get("preemption")
        if pre is None:
            res.check("outcome", "", Outcome.SCHEDULED, p.outcome)
            res.check("chosen", "", True, p.node_name in _best_nodes(case, exp))
            return res
        res.check("fitErrorWithPreemption", "", exp["fitErrorWithPreemption"], p.message)
        res.check("explainMessage", "", exp["fitErrorWithPreemption"], ex.message)
        noms = pre.get("nominatedNodes") or []
        res.check("nominatedNode", "", True, p.nominated_node_name in noms if noms else
                  p.nominated_node_name == "")
        ours = {c.node_name: c for c in ex.candidates}
        want = {c["node"]: c for c in pre.get("candidates") or []}
        res.check("candidateNodes", "", sorted(want), sorted(ours))
        for name, c in want.items():
            got = ours.get(name)
            res.check(
                "candidateVictims", name, [v["uid"] for v in c["victims"]],
                [v.uid for v in got.victims] if got else None,
            )
            res.check(
                "numPDBViolations", name, c["numPDBViolations"],
                got.num_pdb_violations if got else None,
            )
        if noms:
            nominated = want[pre["nominatedNode"]] if p.nominated_node_name not in want \
                else want[p.nominated_node_name]
            res.check(
                "victims", p.nominated_node_name, sorted(v["uid"] for v in nominated["victims"]),
                sorted(v.uid for v in p.victims),
            )
            res.check("explainNominated", "", True, ex.nominated_node in noms)
    finally:
        engine.close()
    return res


def compare_explanation(res: CaseResult, exp: Mapping[str, Any], ex: Explanation) -> None:
    ours = {n.name: n for n in ex.nodes}
    res.check("numNodes", "", exp["numNodes"], len(ex.nodes))
    skips_scoring = bool(exp.get("kubeSkipsScoring"))
    for en in exp["nodes"]:
        name = en["name"]
        on = ours.get(name)
        if on is None:
            res.check("feasible", name, en["feasible"], None)
            continue
        res.check("feasible", name, en["feasible"], on.feasible)
        if not en["feasible"]:
            if not on.feasible:
                res.check("reasons", name, sorted(en["reasons"]), sorted(on.reasons))
                res.check("plugin", name, _plugin_label(en), on.plugin)
            continue
        if skips_scoring or not on.feasible:
            continue
        for plugin, s in en.get("scores", {}).items():
            got = on.scores.get(plugin, (0, 0))[0]
            res.check(f"score:{plugin}", name, s["score"], got)
        res.check("total", name, en["total"], on.total)


def _plugin_label(en: Mapping[str, Any]) -> str:
    # PreFilterResult rejections are recorded with the narrowing plugins as "[A B]"
    return str(en.get("plugin", ""))


@dataclass(slots=True)
class Report:
    cases: int = 0
    failed_cases: list[str] = field(default_factory=list)
    checks: dict[str, int] = field(default_factory=dict)
    wrong: dict[str, int] = field(default_factory=dict)
    first: dict[str, Mismatch] = field(default_factory=dict)
    features: dict[str, list[int]] = field(default_factory=dict)  # feature -> [agree, cases]

    def add(self, r: CaseResult) -> None:
        self.cases += 1
        if r.mismatches:
            self.failed_cases.append(r.case)
        for f in r.features:
            counts = self.features.setdefault(f, [0, 0])
            counts[0] += not r.mismatches
            counts[1] += 1
        for k, v in r.checks.items():
            self.checks[k] = self.checks.get(k, 0) + v
        for m in r.mismatches:
            self.wrong[m.aspect] = self.wrong.get(m.aspect, 0) + 1
            self.first.setdefault(m.aspect, m)

    def render(self) -> str:
        lines = [f"{'aspect':34} {'agree':>8} {'of':>8}"]
        for k in sorted(self.checks):
            n = self.checks[k]
            lines.append(f"{k:34} {n - self.wrong.get(k, 0):>8} {n:>8}")
        for f, (agree, n) in sorted(self.features.items()):
            lines.append(f"{'feature:' + f + ' (cases)':34} {agree:>8} {n:>8}")
        lines.append(
            f"cases: {self.cases - len(self.failed_cases)}/{self.cases} agree on every aspect"
        )
        for k, m in sorted(self.first.items()):
            lines.append(
                f"first difference in {k}: case {m.case} node {m.node or '-'}: "
                f"kube {m.expected!r}, ours {m.got!r}"
            )
        return "\n".join(lines)


def run_all(
    cases: Iterable[Mapping[str, Any]], config: SchedulerConfig | None = None,
    version: EmulatedVersion | None = None,
) -> Report:
    rep = Report()
    for c in cases:
        rep.add(run_case(c, config, version))
    return rep


def profiles_config(
    path: Path, version: EmulatedVersion = DEFAULT_EMULATED_VERSION
) -> SchedulerConfig:
    with open(path, encoding="utf-8") as f:
        return parse_config(yaml.safe_load(f), emulated_version=version)


def run_recording(
    rec: Recording, cases: Path | None = None, profiles: Path | None = None,
    profiles_yaml: Path | None = None, real_pods: Path | None = None,
    preemption: Path | None = None,
) -> bool:
    """Print the agreement of every file of `rec` (or the files given) under its version;
    True when every case agrees."""
    version = rec.version
    cases = cases or rec.cases
    real_pods = real_pods or rec.real_pods
    profiles = profiles or rec.profiles
    profiles_yaml = profiles_yaml or rec.profiles_yaml
    preemption = preemption or rec.preemption
    head = f"kube-scheduler {rec.kube}, --emulated-version {version.value}"
    ok = True
    for path in (cases, real_pods):
        if path is real_pods and not path.exists():
            continue
        print(f"{'' if path is cases else chr(10)}== {path} (default profile; {head})")
        rep = run_all(load_cases(path), version=version)
        print(rep.render())
        ok &= not rep.failed_cases
    if profiles.exists():
        print(f"\n== {profiles} ({profiles_yaml.name}; {head})")
        rep2 = run_all(load_cases(profiles), profiles_config(profiles_yaml, version))
        print(rep2.render())
        ok &= not rep2.failed_cases
    if preemption.exists():
        print(f"\n== {preemption} (default profile, DefaultPreemption; {head})")
        rep3 = Report()
        for c in load_cases(preemption):
            rep3.add(run_preemption_case(c, version))
        print(rep3.render())
        ok &= not rep3.failed_cases
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.conformance", description=__doc__)
    ap.add_argument("--version", choices=[v.value for v in EmulatedVersion],
                    help="one release's recordings (default: both, each under its version)")
    ap.add_argument("--cases", type=Path)
    ap.add_argument("--profiles", type=Path)
    ap.add_argument("--profiles-config", type=Path)
    ap.add_argument("--real-pods", type=Path)
    ap.add_argument("--preemption", type=Path)
    args = ap.parse_args(argv)
    recordings = [r for r in RECORDINGS if args.version in (None, r.version.value)]
    ok = True
    for i, rec in enumerate(recordings):
        if not rec.cases.exists() and args.cases is None:
            print(f"{chr(10) if i else ''}### {rec.kube}: {rec.base} is missing, skipped")
            ok = False
            continue
        print(f"{chr(10) if i else ''}### kube-scheduler {rec.kube} (--emulated-version "
              f"{rec.version.value}): {os.path.relpath(rec.base)}\n")
        try:
            ok &= run_recording(
                rec, args.cases, args.profiles, args.profiles_config, args.real_pods,
                args.preemption,
            )
        except CaseFileError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
