"""What the NodeAffinity test modules share: requirement and term builders, the filter driver
(PreFilter narrowing included), the addedAffinity args both Filter and Score tests apply, and the
preferred terms the Score and sign tests use."""

from __future__ import annotations

import numpy as np

from schedsvc.framework import SKIP, Code, PreFilterResult
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import (
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
)
from schedsvc.plugins import node_affinity
from tests.builders import snapshot_of

Req = NodeSelectorRequirement


def expr(key: str, op: str, *values: str) -> Req:
    return Req(key, op, tuple(values))


def term(*exprs: Req, fields: tuple[Req, ...] = ()) -> NodeSelectorTerm:
    return NodeSelectorTerm(match_expressions=tuple(exprs), match_fields=fields)


def name_in(*names: str) -> Req:
    return Req("metadata.name", "In", tuple(names))


def run_filter(pl: node_affinity.NodeAffinity, pod: Pod, nodes: list[Node]) -> list[list[str]]:
    """Reasons per node in input order ([] = fits), PreFilter narrowing included."""
    snap = snapshot_of(nodes)
    info = pod_info(pod)
    pre = pl.pre_filter(info, snap)
    if pre is SKIP:
        return [[] for _ in nodes]
    assert isinstance(pre, PreFilterResult)
    if pre.reject:
        return [list(pre.reject) for _ in nodes]
    rows = np.array([snap.index[n.name] for n in nodes], dtype=np.intp)
    res = pl.filter(pre.state, info, snap, rows)
    assert res.code == Code.UNRESOLVABLE
    out = []
    for i, n in enumerate(nodes):
        if pre.node_names is not None and n.name not in pre.node_names:
            out.append(["node(s) didn't satisfy plugin(s) [NodeAffinity]"])
        elif res.feasible[i]:
            out.append([])
        else:
            out.append([r for r, m in res.reasons if m[i]])
    return out


ADDED = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["foo"]}]}
            ]
        },
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 3,
                "preference": {
                    "matchExpressions": [{"key": "key", "operator": "In", "values": ["value"]}]
                },
            }
        ],
    }
}


def pref(weight: int, *exprs: Req) -> PreferredSchedulingTerm:
    return PreferredSchedulingTerm(weight, term(*exprs))


AFFINITY1 = (pref(2, expr("foo", "In", "bar")),)
AFFINITY2 = (
    pref(2, expr("foo", "In", "bar")),
    pref(4, expr("key", "In", "value")),
    pref(5, expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")),
)
