#!/usr/bin/env python3
"""Compare kube-oracle output with the verdicts recorded in shared/conformance.

Usage:
    python3 tools/kube-oracle/compare_recorded.py RECORDED.jsonl[.gz] ORACLE.jsonl[.gz] [-v]

RECORDED is a conformance file (each line has ``expected``, written by kube-scheduler
v1.35.4); ORACLE is ``kube-oracle score`` output over the same file (one
``{"id", "expected"}`` line per case). The comparison is the one the conformance README
asks for:

- per node: ``feasible``; for a rejected node the set of ``reasons`` (and the rejecting
  plugin);
- per feasible node, unless the recording says ``kubeSkipsScoring``: each plugin's
  normalized ``score`` (a plugin that is skipped or absent scores 0), its weight, and the
  weighted ``total``;
- ``fitError`` exactly, and ``maxNodes`` as a set;
- preemption: the nominated node (one of ``nominatedNodes``), its victims' uids, the
  message; then, deeper, every candidate node and its victims; ``fitErrorWithPreemption``.

It prints how many cases agree and, per aspect, how many cases differ in it, with examples
(all of them with -v). Standard library only. Exit status 0 whatever the agreement.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import sys
from collections.abc import Iterator
from typing import Any

Json = dict[str, Any]


def read_lines(path: str) -> Iterator[Json]:
    raw = gzip.open(path, "rt") if path.endswith(".gz") else open(path)
    with raw as f:
        for line in f:
            line = line.strip()
            if line:
                yield json.loads(line)


def plugin_scores(node: Json, skipped: set[str]) -> dict[str, tuple[int, int]]:
    """plugin -> (normalized score, weight); skipped plugins score 0."""
    out: dict[str, tuple[int, int]] = {}
    for name, s in (node.get("scores") or {}).items():
        out[name] = (0 if name in skipped else int(s["score"]), int(s["weight"]))
    return out


def compare_case(rec: Json, got: Json) -> list[tuple[str, str]]:
    """Returns (aspect, detail) pairs, empty when the case agrees."""
    diffs: list[tuple[str, str]] = []
    if rec.get("numNodes") != got.get("numNodes"):
        diffs.append(("numNodes", f"{rec.get('numNodes')} -> {got.get('numNodes')}"))
        return diffs
    rec_skipped = set(rec.get("skippedScorePlugins") or [])
    got_skipped = set(got.get("skippedScorePlugins") or [])
    score_check = not rec.get("kubeSkipsScoring")
    for rn, gn in zip(rec["nodes"], got["nodes"], strict=True):
        name = rn["name"]
        if rn["name"] != gn["name"]:
            diffs.append(("nodeOrder", f"{rn['name']} vs {gn['name']}"))
            continue
        if rn["feasible"] != gn["feasible"]:
            why = gn.get("reasons") if not gn["feasible"] else rn.get("reasons")
            diffs.append(("feasible", f"{name}: {rn['feasible']} -> {gn['feasible']} ({why})"))
            continue
        if not rn["feasible"]:
            if set(rn.get("reasons") or []) != set(gn.get("reasons") or []):
                diffs.append((f"reasons:{rn.get('plugin')}",
                              f"{name}: {rn.get('reasons')} -> {gn.get('reasons')}"))
            elif rn.get("plugin") != gn.get("plugin"):
                diffs.append(("rejectingPlugin",
                              f"{name}: {rn.get('plugin')} -> {gn.get('plugin')}"))
            elif rn.get("code") != gn.get("code"):
                diffs.append((f"code:{rn.get('plugin')}",
                              f"{name}: {rn.get('code')} -> {gn.get('code')}"))
            continue
        if not score_check:
            continue
        rs, gs = plugin_scores(rn, rec_skipped), plugin_scores(gn, got_skipped)
        for plugin in sorted(set(rs) | set(gs)):
            a, b = rs.get(plugin, (0, 0)), gs.get(plugin, (0, 0))
            if a[0] != b[0]:
                diffs.append((f"score:{plugin}", f"{name}: {a[0]} -> {b[0]}"))
            if a[1] and b[1] and a[1] != b[1]:
                diffs.append((f"weight:{plugin}", f"{name}: {a[1]} -> {b[1]}"))
        if rn.get("total") != gn.get("total"):
            diffs.append(("total", f"{name}: {rn.get('total')} -> {gn.get('total')}"))
    if (rec.get("fitError") or "") != (got.get("fitError") or ""):
        diffs.append(("fitError", f"{rec.get('fitError')!r} -> {got.get('fitError')!r}"))
    if rec.get("maxNodes") is not None and score_check:
        if set(rec["maxNodes"]) != set(got.get("maxNodes") or []):
            diffs.append(("maxNodes", f"{rec['maxNodes']} -> {got.get('maxNodes')}"))
    diffs.extend(compare_preemption(rec, got))
    return diffs


def victims_by_node(p: Json) -> dict[str, list[str]]:
    return {c["node"]: [v["uid"] for v in c["victims"]] for c in p.get("candidates") or []}


def compare_preemption(rec: Json, got: Json) -> list[tuple[str, str]]:
    rp, gp = rec.get("preemption"), got.get("preemption")
    if rp is None and gp is None:
        return []
    if rp is None or gp is None:
        return [("preemption:ran", f"{rp is not None} -> {gp is not None}")]
    diffs: list[tuple[str, str]] = []
    if rp.get("eligible") != gp.get("eligible"):
        diffs.append(("preemption:eligible", f"{rp.get('eligible')} -> {gp.get('eligible')}"))
    if (rp.get("message") or "") != (gp.get("message") or ""):
        diffs.append(("preemption:message", f"{rp.get('message')!r} -> {gp.get('message')!r}"))
    rnom = rp.get("nominatedNodes") or ([rp["nominatedNode"]] if rp.get("nominatedNode") else [])
    gnom = gp.get("nominatedNode") or ""
    if (rnom or gnom) and gnom not in rnom:
        diffs.append(("preemption:nominatedNode", f"{rnom} -> {gnom!r}"))
    rv, gv = victims_by_node(rp), victims_by_node(gp)
    if gnom and gnom in rv and set(rv[gnom]) != set(gv.get(gnom, [])):
        diffs.append(("preemption:nominatedVictims",
                      f"{gnom}: {sorted(rv[gnom])} -> {sorted(gv.get(gnom, []))}"))
    if set(rv) != set(gv):
        diffs.append(("preemption:candidateNodes", f"{sorted(rv)} -> {sorted(gv)}"))
    for node in sorted(set(rv) & set(gv)):
        if set(rv[node]) != set(gv[node]):
            diffs.append(("preemption:candidateVictims",
                          f"{node}: {rv[node]} -> {gv[node]}"))
        elif rv[node] != gv[node]:
            diffs.append(("preemption:victimOrder", f"{node}: {rv[node]} -> {gv[node]}"))
    if (rec.get("fitErrorWithPreemption") or "") != (got.get("fitErrorWithPreemption") or ""):
        diffs.append(("fitErrorWithPreemption", f"{rec.get('fitErrorWithPreemption')!r}"
                      f" -> {got.get('fitErrorWithPreemption')!r}"))
    return diffs


BALANCED = "NodeResourcesBalancedAllocation"
PLACEMENT = "preemption: found a potential placement for pod on node "


def weighted(node: Json, plugin: str) -> int:
    return int(((node.get("scores") or {}).get(plugin) or {}).get("weighted", 0))


def known_137(rec: Json, got: Json, aspect: str) -> bool:
    """Whether a difference is one of the known v1.35 -> v1.37 changes (FINDINGS.md):

    - NodeResourcesBalancedAllocation scores the change in balance (its score, and the totals
      and maxNodes that follow from it: a total is explained when it agrees once both sides'
      BalancedAllocation points are taken out);
    - DefaultPreemption's PostFilter reports "found a potential placement for pod on node N,
      preempting K victims" where v1.35 said nothing.
    """
    if aspect == f"score:{BALANCED}":
        return True
    if aspect in ("total", "maxNodes"):
        for rn, gn in zip(rec["nodes"], got["nodes"], strict=True):
            if rn.get("feasible") and gn.get("feasible"):
                if rn["total"] - weighted(rn, BALANCED) != gn["total"] - weighted(gn, BALANCED):
                    return False
        return True
    gp = got.get("preemption") or {}
    rp = rec.get("preemption") or {}
    msg = gp.get("message") or ""
    if aspect == "preemption:message":
        return not rp.get("message") and msg.startswith(PLACEMENT + gp.get("nominatedNode", "?"))
    if aspect == "fitErrorWithPreemption":
        with_msg = f"{rec.get('fitErrorWithPreemption')} {msg}"
        return msg.startswith(PLACEMENT) and got.get("fitErrorWithPreemption") == with_msg
    return False


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recorded")
    ap.add_argument("oracle")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="every example, not the first 3 per aspect")
    ap.add_argument("--examples", type=int, default=3)
    args = ap.parse_args(argv)

    recorded = {str(d["id"]): d["expected"] for d in read_lines(args.recorded)}
    got = {str(d["id"]): d["expected"] for d in read_lines(args.oracle)}
    missing = sorted(set(recorded) - set(got))
    agree = agree_known = 0
    by_aspect: dict[str, list[str]] = collections.defaultdict(list)
    cases_by_aspect: dict[str, set[str]] = collections.defaultdict(set)
    for cid, rec in recorded.items():
        if cid not in got:
            continue
        diffs = compare_case(rec, got[cid])
        if not diffs:
            agree += 1
        if all(known_137(rec, got[cid], aspect) for aspect, _ in diffs):
            agree_known += 1
        for aspect, detail in diffs:
            by_aspect[aspect].append(f"{cid}: {detail}")
            cases_by_aspect[aspect].add(cid)
    n = len(recorded)
    print(f"{args.recorded}: {agree}/{n} cases agree with the recording"
          + (f"; {len(missing)} missing from the oracle output" if missing else ""))
    print(f"  {agree_known}/{n} agree once the known v1.35 -> v1.37 changes are set aside"
          " (BalancedAllocation formula, preemption PostFilter message)")
    for aspect in sorted(by_aspect, key=lambda a: (-len(cases_by_aspect[a]), a)):
        items = by_aspect[aspect]
        print(f"  {aspect}: {len(cases_by_aspect[aspect])} cases ({len(items)} differences)")
        for line in items if args.verbose else items[: args.examples]:
            print(f"      {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
