"""Transcribe kube v1.37.2's framework/preemption/podgrouppreemption_test.go tables
(TestPodGroupEvaluator_SelectVictimsOnDomain, TestPodGroupEvaluator_Preempt) into
tests/data/kube_pod_group_preemption_table.json: nodes with the mock filter's capacity, pods
(size label, priority, group, start, terminating, nomination), PodGroups, the preemptor, PDBs
and kube's expectations. Rows kube runs with CompositePodGroup are left out.

Usage: python tools/port_pod_group_preemption_table.py KUBE_SRC > tests/data/...json
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

PRIO = {"lowPriority": 10, "midPriority": 100, "highPriority": 1000}
CALL = re.compile(r"\.(\w+)\(((?:[^()]|\([^()]*\))*)\)")


def _chain(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m, arg in CALL.findall(text):
        if m in ("Name", "UID", "Node", "PodGroupName", "NominatedNodeName", "Namespace"):
            out[m] = arg.strip('"')
        elif m == "Priority":
            out["Priority"] = PRIO.get(arg, None) if arg in PRIO else int(arg)
        elif m == "MinCount":
            out["MinCount"] = int(arg)
        elif m == "Labels":
            out.setdefault("labels", {}).update(dict(re.findall(r'"(\w+)":\s*"(\w+)"', arg)))
        elif m == "Label":
            k, v = re.findall(r'"(\w+)"', arg)
            out.setdefault("labels", {})[k] = v
        elif m == "StartTime":
            out["start"] = int(re.findall(r"Unix\((\d+)", arg)[0])
        elif m == "Terminating":
            out["terminating"] = True
        elif m == "Condition":
            out["preemption_condition"] = "PreemptionByScheduler" in arg
        elif m in ("DisruptionModeAll", "DisruptionModeSingle"):
            out["all"] = m == "DisruptionModeAll"
        elif m == "PreemptionPolicy":
            out["never"] = "Never" in arg
    return out


def _pod(text: str) -> dict[str, Any]:
    c = _chain(text)
    return {
        "name": c["Name"], "uid": c.get("UID", c["Name"]), "node": c.get("Node", ""),
        "priority": c.get("Priority", 0), "size": int(c.get("labels", {}).get("size", 1)),
        "labels": c.get("labels", {}), "pod_group": c.get("PodGroupName", ""),
        "start": c.get("start"),
        "terminating_by_preemption": bool(c.get("terminating") and c.get("preemption_condition")),
        "nominated": c.get("NominatedNodeName", ""), "never": c.get("never", False),
    }


def _group(text: str) -> dict[str, Any]:
    c = _chain(text)
    return {
        "name": c["Name"], "priority": c.get("Priority"), "all": c.get("all", False),
        "min_count": c.get("MinCount"), "never": c.get("never", False),
    }


def _block(case: str, key: str) -> str:
    """The text of `key: ...{ ... }` (balanced braces) in a case."""
    i = case.find(key + ":")
    if i < 0:
        return ""
    j = case.find("{", i)
    depth = 0
    for k in range(j, len(case)):
        depth += {"{": 1, "}": -1}.get(case[k], 0)
        if depth == 0:
            return case[j : k + 1]
    raise ValueError(key)


def _cases(src: str, test: str) -> list[str]:
    start = src.index(f"func {test}(")
    body = src[start : src.index("for _, tt := range tests", start)]
    parts = re.split(r"\n\t\t\{\n\t\t\tname:", body)[1:]
    return ["name:" + p for p in parts]


def _case(text: str, source: str) -> dict[str, Any]:
    name = re.match(r'name:\s*"((?:[^"\\]|\\.)*)"', text)
    assert name is not None
    listed = re.findall(r'nodeName:\s*"(\w+)",\s*capacity:\s*(\d+)', text)
    caps: dict[str, str] = {}
    for n, cap in listed:  # the mock filter takes a node's first entry
        caps.setdefault(n, cap)
    nodes = re.findall(r'MakeNode\(\)\.Name\("(\w+)"\)', _block(text, "nodes"))
    seg = re.search(r"\n\t\t\tpreemptor:(.*?)\n\t\t\t\w+:", text, re.S)
    pre = seg.group(1) if seg else text[text.find("preemptorPodGroup:"):]
    pre_pg = re.search(r"st\.MakePodGroup\(\)[^\n]*", pre)
    pre_pods = re.findall(r"st\.MakePod\(\)[^\n]*", pre if seg else _block(text, "preemptorPods"))
    # the group's own policy (PodGroupPreemptionPolicy on in kube's rows), or the evaluator's
    policy_never = bool(pre_pg and "PreemptNever" in pre_pg.group(0)) or bool(
        re.search(r"\n\t\t\t\tschedulingv1beta1\.PreemptNever", pre)
    )
    pdbs = [
        {"match_labels": dict(re.findall(r'"(\w+)":\s*"(\w+)"', m)), "allowed": int(a)}
        for m, a in re.findall(r"MatchLabels: map\[string\]string\{([^}]*)\}.*?"
                               r"DisruptionsAllowed: (\d+)", _block(text, "pdbs"), re.S)
    ]
    victims = re.search(r"expectedVictims:\s*\[\]string\{([^}]*)\}", text)
    status = re.search(r"expectedStatus:\s*fwk\.NewStatus\(fwk\.(\w+)(?:,\s*\"([^\"]*)\")?", text)
    npgd = re.search(r"expectedNumPodGroupDisruptions:\s*(\d+)", text)
    npdb = re.search(r"expectedNumPDBViolations:\s*(\d+)", text)
    return {
        "name": name.group(1),
        "source": source,
        # `capacity`: the mock filter's (a node's first entry, 0 if none); `run_capacity`:
        # the mock scheduling function's, the i-th entry for the i-th node
        "nodes": [
            {"name": n, "capacity": int(caps.get(n, 0)),
             "run_capacity": int(listed[i][1]) if i < len(listed) else 0}
            for i, n in enumerate(nodes)
        ],
        "pods": [_pod(p) for p in re.findall(r"st\.MakePod\(\)[^\n]*", _block(text, "initPods"))],
        "pod_groups": [_group(g) for g in re.findall(r"st\.MakePodGroup\(\)[^\n]*",
                                                      _block(text, "initPodGroups"))],
        "preemptor": {
            "pod_group": _group(pre_pg.group(0)) if pre_pg else None,
            "pods": [_pod(p) for p in pre_pods],
            "policy_never": policy_never,
        },
        "pdbs": pdbs,
        "expected": {
            "victims": re.findall(r'"([^"]+)"', victims.group(1)) if victims else [],
            "status": status.group(1) if status else "",
            "message": (status.group(2) or "") if status else "",
            "num_pod_group_disruptions": int(npgd.group(1)) if npgd else 0,
            "num_pdb_violations": int(npdb.group(1)) if npdb else 0,
        },
    }


def main() -> None:
    src = (Path(sys.argv[1]) / "pkg/scheduler/framework/preemption/podgrouppreemption_test.go"
           ).read_text(encoding="utf-8")
    cases = []
    for test in ("TestPodGroupEvaluator_SelectVictimsOnDomain", "TestPodGroupEvaluator_Preempt"):
        for text in _cases(src, test):
            if "CompositePodGroup" in text:
                continue
            cases.append(_case(text, f"podgrouppreemption_test.go {test}"))
    json.dump({"kubeVersion": "v1.37.2", "cases": cases}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
