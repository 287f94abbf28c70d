"""Our engine against kube v1.37.2's recorded gang verdicts (tests/data/gangs, recorded by
tools/kube-oracle's sequence mode through tools/record_gangs.py: see the README there).

Each case is read as the client reads `kubectl get -o json` (nodes, bound pods, PodGroups,
PodDisruptionBudgets) and sent through the server's RequestHandler, with the case's feature
gates as `schedsvc serve --feature-gates` takes them. Its steps go in order, as kube ran them:
a group's PodGroup is upserted, then its members go in one Schedule request (GenericWorkload
on; off, and for ordinary pods, one request per pod, as the oracle created them one by one).
Compared with kube's recording, per pod: the first answer (node, or the unschedulable message),
the nominated node, gated (no decision at all) and the final node; per group: the
PodGroupInitiallyScheduled conditions kube patched, in order; per step: the victims. When an
answer carries victims, they are evicted (UpdateSnapshot remove_pods) and the pods not placed
are sent again with their nominated nodes, as a client does after a preemption, and as kube
retried once it saw the deletions. After each step the cluster is made kube's (its bindings and
deletions) so that a difference stays in the step where it arose.

    python -m tools.conformance_gangs [--cases FILE] [--limit N] [-v] [--write-known]

`--write-known` rewrites tests/data/gangs/known.json, the differences tests/
test_conformance_gangs.py expects (each case's "aspect where" list), with the class of each
(`differences_class`): review them against kube's source before committing it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedsvc.config.scheduler import default_config
from schedsvc.engine.scheduler import Engine
from schedsvc.feature_gates import parse_feature_gates, profile_gates
from schedsvc.framework.feature import EmulatedVersion, Features
from schedsvc.server.request_handler import RequestHandler
from schedsvc.v1 import schedule_pb2 as pb
from tools.conformance import CaseResult, Report

__all__ = ["GANG_CASES", "KNOWN", "differences", "differences_class", "load_gang_cases",
           "run_gang_case", "main"]

_DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "gangs"
GANG_CASES = _DATA / "cases.jsonl.gz"
KNOWN = _DATA / "known.json"
_V1_37 = EmulatedVersion("1.37")
_CONDITION = "PodGroupInitiallyScheduled"


def load_gang_cases(path: Path = GANG_CASES) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


class _Caller:
    def time_remaining(self) -> float | None:
        return None

    def is_active(self) -> bool:
        return True


def _read(items: Sequence[Mapping[str, Any]]) -> Any:
    """The objects as the client reads one `kind: List` of them (load_cluster)."""
    from schedsvc_client.kube import load_cluster

    return load_cluster(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)}))


def _as(kind: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Nodes and pods as `kubectl get -o json` prints them (the case files omit both)."""
    return [{"apiVersion": "v1", "kind": kind, **o} for o in objs]


def _key(p: pb.Pod | pb.Victim) -> str:
    return f"{p.namespace or 'default'}/{p.name}"


def _handler(case: Mapping[str, Any], seed: int = 1) -> RequestHandler:
    """A server's request handler with the case's gates, as `schedsvc serve` builds it."""
    gates = parse_feature_gates(
        ",".join(f"{k}={str(v).lower()}" for k, v in case["featureGates"].items()), _V1_37)
    config = default_config(_V1_37, Features(_V1_37, profile_gates(gates)))
    return RequestHandler(Engine(config, seed=seed,
                                 batching_enabled=gates["OpportunisticBatching"]))


@dataclass(slots=True)
class _Unit:
    """What our answers said for one Schedule request and its preemption retries."""

    first: dict[str, pb.Placement] = field(default_factory=dict)  # uid -> first placement
    final: dict[str, str] = field(default_factory=dict)  # uid -> node
    victims: list[str] = field(default_factory=list)  # "ns/name", eviction order
    conditions: list[tuple[str, str, str]] = field(default_factory=list)
    gated: bool = False
    ties: dict[str, set[str]] = field(default_factory=dict)  # uid -> our best-scored nodes
    retry_ties: dict[str, set[str]] = field(default_factory=dict)  # the same, on the retry


class _Run:
    """One case through one handler: the cluster kept as kube's after each step."""

    def __init__(self, case: Mapping[str, Any]) -> None:
        self.case = case
        self.handler = _handler(case)
        self.caller = _Caller()
        self.res = CaseResult(case["id"], (case.get("kind", ""),))
        self.grouped = bool(case["featureGates"].get("GenericWorkload"))
        kc = _read([*_as("Node", case["nodes"]), *_as("Pod", case["pods"]),
                    *case.get("objects", ())])
        self.known: dict[str, pb.Pod] = {_key(p): p for p in kc.pods}  # kube's bound pods
        self.groups: dict[str, pb.PodGroup] = {f"{g.namespace or 'default'}/{g.name}": g
                                               for g in kc.pod_groups}
        self.base = kc
        self.handler.update_snapshot(self._state())

    def _state(self) -> pb.UpdateSnapshotRequest:
        """The cluster as kube has it now (our handler's too, between steps)."""
        kc = self.base
        return pb.UpdateSnapshotRequest(
            replace=True, upsert_nodes=kc.nodes, upsert_pods=list(self.known.values()),
            upsert_namespaces=kc.namespaces,
            upsert_pod_disruption_budgets=kc.pod_disruption_budgets,
            upsert_pod_groups=list(self.groups.values()))

    def step(self, i: int, step: Mapping[str, Any], exp: Mapping[str, Any]) -> None:
        if step.get("podGroup"):
            pg = _read([step["podGroup"]]).pod_groups[0]
            self.groups[f"{pg.namespace or 'default'}/{pg.name}"] = pg
            self.handler.update_snapshot(pb.UpdateSnapshotRequest(upsert_pod_groups=[pg]))
        pods = _read(_as("Pod", step["pods"])).pods
        if self.grouped and pods[0].scheduling_group.pod_group_name:
            units = [pods]
        else:
            units = [[p] for p in pods]
        want = {pod.uid: e.get("node", "") for pod, e in zip(pods, exp["pods"], strict=True)}
        final = {pod.uid: e["finalNode"] for pod, e in zip(pods, exp["pods"], strict=True)}
        if len(units) == 1:
            state = self._state()
            got = [self._schedule(units[0], self.handler)]
            shown = got
            if _tied_divergence(got[0], want) or _tied_retry(got[0], final):
                shown = [self._reseeded(state, units[0], want, final) or got[0]]
        else:  # ordinary pods one by one: a tied pick is moved to kube's node at once
            got = [self._kubes_pick(self._schedule(u, self.handler), u[0], want) for u in units]
            shown = got
        self._compare(i, pods, shown, exp)
        self._make_kubes(pods, got, exp)

    def _kubes_pick(self, unit: _Unit, pod: pb.Pod, want: Mapping[str, str]) -> _Unit:
        """A lone pod we placed on a node tied with kube's: moved to kube's (docs/
        differences.md), so the step's next pods see what kube's saw."""
        if not _tied_divergence(unit, want):
            return unit
        node = want[pod.uid]
        moved = pb.Pod()
        moved.CopyFrom(pod)
        moved.node_name = node
        self.handler.update_snapshot(pb.UpdateSnapshotRequest(remove_pods=[pod.uid]))
        self.handler.update_snapshot(pb.UpdateSnapshotRequest(upsert_pods=[moved]))
        placed = pb.Placement()
        placed.CopyFrom(unit.first[pod.uid])
        placed.node_name = node
        unit.first[pod.uid] = placed
        unit.final[pod.uid] = node
        return unit

    def _reseeded(self, state: pb.UpdateSnapshotRequest, pods: list[pb.Pod],
                  want: Mapping[str, str], final: Mapping[str, str]) -> _Unit | None:
        """The unit on the same cluster under other seeds, for one whose draws among tied
        nodes land where kube's score heap did (docs/differences.md: a tied pick counts as
        agreement, and the comparison carries on from kube's pick); None if none does."""
        for seed in _SEEDS:
            h = _handler(self.case, seed)
            try:
                h.update_snapshot(state)
                unit = self._schedule(pods, h)
            finally:
                h.engine.close()
            if all(unit.first[uid].node_name == node for uid, node in want.items()
                   if node and uid in unit.first) and \
                    all(unit.final.get(uid, "") == node for uid, node in final.items()):
                return unit
        return None

    def _schedule(self, pods: list[pb.Pod], handler: RequestHandler) -> _Unit:
        """One request, then one retry per round of victims (evicted first)."""
        unit = _Unit(ties=self._ties(pods, handler))
        pending = list(pods)
        for _ in range(4):
            resp = handler.schedule(pb.ScheduleRequest(pods=pending), self.caller)
            victims: list[pb.Victim] = []
            retry = []
            for pod, p in zip(pending, resp.placements, strict=True):
                unit.first.setdefault(p.pod_uid, p)
                if p.outcome == pb.Placement.SCHEDULED:
                    unit.final[p.pod_uid] = p.node_name
                else:
                    again = pb.Pod()
                    again.CopyFrom(pod)
                    again.nominated_node_name = p.nominated_node_name
                    retry.append(again)
                victims += p.victims
            for g in resp.pod_groups:
                victims += g.victims
                unit.gated |= g.outcome == pb.PodGroupResult.GATED
                if g.HasField("condition"):
                    self._patch_condition(g.pod_group, g.condition, unit, handler)
            seen = set(unit.victims)
            fresh = [v for v in victims if _key(v) not in seen]
            if not fresh or not retry:
                break
            unit.victims += [_key(v) for v in fresh]
            handler.update_snapshot(pb.UpdateSnapshotRequest(remove_pods=[v.uid for v in fresh]))
            pending = retry
            unit.retry_ties.update(self._ties(pending, handler))
        return unit

    def _ties(self, pods: list[pb.Pod], handler: RequestHandler) -> dict[str, set[str]]:
        """Per pod, the nodes sharing our best total before its cycle (Explain; a group's
        members on a fork, each with the earlier ones assumed): where kube's node is among
        them, kube broke a tie we break otherwise."""
        cluster = handler.engine.cluster("default")
        dom = [handler.converter.pod_from_pb(p, f"pods[{i}]") for i, p in enumerate(pods)]
        if self.grouped and dom[0].pod_group:
            exps = {m.placement.pod_uid: m.explanation
                    for m in cluster.explain_group(dom).members}
        else:
            exps = {dom[0].uid: cluster.explain(dom[0])}
        out: dict[str, set[str]] = {}
        for uid, ex in exps.items():
            feasible = [n for n in ex.nodes if n.feasible] if ex is not None else []
            if feasible:
                best = max(n.total for n in feasible)
                out[uid] = {n.name for n in feasible if n.total == best}
        return out

    def _patch_condition(self, key: str, c: pb.PodGroupCondition, unit: _Unit,
                         handler: RequestHandler) -> None:
        """What kube's status patch does: the PodGroup carries the condition from now on
        (a client re-reading it sends it so)."""
        t = (c.status, c.reason, c.message)
        if not unit.conditions or unit.conditions[-1] != t:
            unit.conditions.append(t)
        pg = self.groups.get(key)
        if pg is None:
            return
        kept = [x for x in pg.status.conditions if x.type != _CONDITION]
        del pg.status.conditions[:]
        pg.status.conditions.extend(kept)
        pg.status.conditions.add().CopyFrom(c)
        handler.update_snapshot(pb.UpdateSnapshotRequest(upsert_pod_groups=[pg]))

    def _compare(self, i: int, pods: list[pb.Pod], got: list[_Unit],
                 exp: Mapping[str, Any]) -> None:
        res = self.res
        first = {uid: p for u in got for uid, p in u.first.items()}
        final = {uid: n for u in got for uid, n in u.final.items()}
        gated = any(u.gated for u in got)
        ties = {uid: t for u in got for uid, t in u.ties.items()}
        for pod, e in zip(pods, exp["pods"], strict=True):
            where = f"step {i} {e['name']}"
            p = first.get(pod.uid)
            tied = ties.get(pod.uid, set())
            if p is not None and {e.get("node"), p.node_name} <= tied:
                where += " (tied in our scores)"
            if not e["decided"]:
                res.check("gated", where, True, gated and pod.uid not in final)
                continue
            node = p.node_name if p is not None and p.outcome == pb.Placement.SCHEDULED else ""
            res.check("firstNode", where, e.get("node", ""), node)
            if not e.get("node"):
                res.check("message", where, e.get("message", ""),
                          "" if p is None or node else p.message)
                res.check("nominatedNode", where, e.get("nominatedNode", ""),
                          "" if p is None else p.nominated_node_name)
            final_where = where
            retry_tied = next((u.retry_ties.get(pod.uid, set()) for u in got
                               if pod.uid in u.retry_ties), set())
            if {e["finalNode"], final.get(pod.uid, "")} <= retry_tied and \
                    not final_where.endswith(")"):
                final_where += " (tied in our scores)"
            res.check("finalNode", final_where, e["finalNode"], final.get(pod.uid, ""))
        res.check("victims", f"step {i}", sorted(exp.get("deleted") or []),
                  sorted(v for u in got for v in u.victims))
        group = exp.get("group")
        if group is not None and self.grouped:
            want = _dedupe([(c["status"], c["reason"], c["message"])
                            for c in group.get("conditions") or []])
            res.check("conditions", f"step {i} {group['name']}", want,
                      [c for u in got for c in u.conditions])

    def _make_kubes(self, pods: list[pb.Pod], got: list[_Unit], exp: Mapping[str, Any]) -> None:
        """The cluster as kube left it: its bindings, its victims gone, nothing else."""
        final = {uid: n for u in got for uid, n in u.final.items()}
        ours_gone = {v for u in got for v in u.victims}
        kube_gone = set(exp.get("deleted") or [])
        remove, upsert = [], []
        for pod, e in zip(pods, exp["pods"], strict=True):
            mine = final.get(pod.uid, "")
            if e["finalNode"]:
                b = pb.Pod()
                b.CopyFrom(pod)
                b.node_name, b.nominated_node_name = e["finalNode"], ""
                self.known[_key(pod)] = b
                if mine != e["finalNode"]:
                    upsert.append(b)
            if mine and mine != e["finalNode"]:
                remove.append(pod.uid)
        for name in kube_gone:
            gone = self.known.pop(name, None)
            if gone is not None and name not in ours_gone:
                remove.append(gone.uid)
        upsert += [self.known[n] for n in ours_gone - kube_gone if n in self.known]
        if remove:
            self.handler.update_snapshot(pb.UpdateSnapshotRequest(remove_pods=remove))
        if upsert:
            self.handler.update_snapshot(pb.UpdateSnapshotRequest(upsert_pods=upsert))

    def close(self) -> None:
        self.handler.engine.close()


def run_gang_case(case: Mapping[str, Any]) -> CaseResult:
    """One recorded case, step by step (see the module's docstring)."""
    run = _Run(case)
    i = 0
    try:
        for i, (step, exp) in enumerate(zip(case["steps"], case["expected"]["steps"],
                                            strict=True)):
            run.step(i, step, exp)
    except Exception as exc:  # noqa: BLE001 - an engine failure is this case's difference
        run.res.check("error", f"step {i}", None, f"{type(exc).__name__}: {exc}")
    finally:
        run.close()
    return run.res


def differences(res: CaseResult) -> list[str]:
    """A case's differences as known.json lists them: "aspect where", sorted, once each."""
    return sorted({f"{m.aspect} {m.node}" for m in res.mismatches})


def differences_class(res: CaseResult) -> list[str]:
    """What the differences look like (README's classes), for a reviewer of known.json."""
    out = set()
    first_differs = {m.node for m in res.mismatches if m.aspect == "firstNode"}
    for m in res.mismatches:
        if m.aspect == "error":
            out.add("engine error: " + str(m.got).split(":")[0])
        elif m.aspect == "message" and isinstance(m.got, str) and isinstance(m.expected, str) \
                and m.got.startswith(m.expected + ", "):
            out.add("message: our suffix after kube's (never-evaluated member)")
        elif m.aspect in ("victims", "nominatedNode") or (
                m.aspect == "message" and "preemption: found a potential placement" in str(m.got)):
            out.add("preemption: another candidate")
        elif m.aspect == "finalNode" and m.node not in first_differs and m.expected and m.got:
            out.add("node: the retry after preemption placed it elsewhere")
        elif m.aspect in ("firstNode", "finalNode") and m.node.endswith("(tied in our scores)"):
            out.add("node: kube's tied with ours in our scores")
        elif m.aspect in ("firstNode", "finalNode") and m.expected and m.got:
            out.add("node: another feasible node")
        else:
            out.add(f"{m.aspect}: other")
    return sorted(out)


_SEEDS = range(2, 34)


def _tied_divergence(unit: _Unit, want: Mapping[str, str]) -> bool:
    """The unit's first pod placed elsewhere than kube placed it was tied there with kube's
    node in our scores."""
    for uid, p in unit.first.items():
        node = want.get(uid, "")
        if node and p.node_name and p.node_name != node:
            return {node, p.node_name} <= unit.ties.get(uid, set())
    return False


def _tied_retry(unit: _Unit, final: Mapping[str, str]) -> bool:
    """After a preemption, a pod our retry placed elsewhere than kube's was tied there with
    kube's node in our scores."""
    return any(
        node and unit.final.get(uid, "") not in ("", node)
        and {node, unit.final[uid]} <= unit.retry_ties.get(uid, set())
        for uid, node in final.items())


def _dedupe(cs: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for c in cs:
        if not out or out[-1] != c:
            out.append(c)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.conformance_gangs", description=__doc__)
    ap.add_argument("--cases", type=Path, default=GANG_CASES)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("-v", "--verbose", action="store_true", help="every difference")
    ap.add_argument("--write-known", action="store_true", help=f"rewrite {KNOWN.name}")
    args = ap.parse_args(argv)
    rep = Report()
    known: dict[str, dict[str, list[str]]] = {}
    print(f"== {args.cases} (kube-scheduler v1.37.2, sequence mode, the cases' feature gates)")
    for n, case in enumerate(load_gang_cases(args.cases)):
        if args.limit and n >= args.limit:
            break
        r = run_gang_case(case)
        rep.add(r)
        if r.mismatches:
            known[r.case] = {"classes": differences_class(r), "differences": differences(r)}
        if args.verbose:
            for m in r.mismatches:
                print(f"{m.case} {m.aspect} {m.node}: kube {m.expected!r}, ours {m.got!r}")
    print(rep.render())
    if args.write_known:
        KNOWN.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"{KNOWN}: {len(known)} cases with differences")
    if args.write_known or args.limit or args.cases != GANG_CASES:
        return 0 if not rep.failed_cases else 1
    # the recorded set: its differences must be exactly the known ones (known.json)
    expected = json.loads(KNOWN.read_text(encoding="utf-8"))
    same = {k: v["differences"] for k, v in known.items()} == {
        k: v["differences"] for k, v in expected.items()}
    print(f"differences {'as' if same else 'NOT as'} {KNOWN.name} lists ({len(expected)} cases)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
