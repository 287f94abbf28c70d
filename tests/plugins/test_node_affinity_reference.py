"""NodeAffinity against a scalar reference: kube's term parsing and matching written out node by
node, compared with the vectorized plugin on random clusters.
"""

from __future__ import annotations

import random
import re

import numpy as np

from schedsvc.framework import SKIP, PreFilterResult
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Node, NodeSelectorTerm, Pod, PreferredSchedulingTerm
from schedsvc.plugins import node_affinity
from tests.builders import node_with_labels, snapshot_of
from tests.builders import pod_with_node_affinity as pod_with
from tests.plugins.node_affinity_cases import Req

# ---- scalar reference ----------------------------------------------------------------------
INT_RE = re.compile(r"[+-]?[0-9]+")


def ref_int(s: str) -> int | None:
    if not INT_RE.fullmatch(s):
        return None
    v = int(s)
    return v if -(2**63) <= v < 2**63 else None


def ref_valid_value(v: str) -> bool:
    return (
        len(v) <= 63 and re.fullmatch(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", v) is not None
    )


def ref_term_parses(t: NodeSelectorTerm) -> bool:
    for r in t.match_expressions:
        if r.operator in ("In", "NotIn") and not r.values:
            return False
        if r.operator in ("Exists", "DoesNotExist") and r.values:
            return False
        if r.operator in ("Gt", "Lt") and (len(r.values) != 1 or ref_int(r.values[0]) is None):
            return False
        if r.operator not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
            return False
        if not all(ref_valid_value(v) for v in r.values):
            return False
    return all(f.operator in ("In", "NotIn") and len(f.values) == 1 for f in t.match_fields)


def ref_term(t: NodeSelectorTerm, node: Node) -> bool:
    if not t.match_expressions and not t.match_fields or not ref_term_parses(t):
        return False
    for r in t.match_expressions:
        has = r.key in node.labels
        v = node.labels.get(r.key)
        if r.operator == "In" and not (has and v in r.values):
            return False
        if r.operator == "NotIn" and has and v in r.values:
            return False
        if r.operator == "Exists" and not has:
            return False
        if r.operator == "DoesNotExist" and has:
            return False
        if r.operator in ("Gt", "Lt"):
            lv = ref_int(v) if v is not None else None
            rv = ref_int(r.values[0])
            assert rv is not None
            if lv is None or not (lv > rv if r.operator == "Gt" else lv < rv):
                return False
    for f in t.match_fields:
        actual = node.name if f.key == "metadata.name" else ""
        if (actual == f.values[0]) != (f.operator == "In"):
            return False
    return True


def ref_filter(pod: Pod, node: Node) -> bool:
    if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    na = pod.affinity.node_affinity if pod.affinity else None
    if na is None or na.required is None:
        return True
    return any(ref_term(t, node) for t in na.required)


def ref_raw_score(pod: Pod, node: Node) -> int:
    na = pod.affinity.node_affinity if pod.affinity else None
    if na is None:
        return 0
    return sum(p.weight for p in na.preferred if p.weight and ref_term(p.preference, node))


def random_req(rng: random.Random, names: list[str]) -> Req:
    keys, vals = ["a", "b", "c"], ["1", "2", "10", "x", "-3", ""]
    op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
    if op in ("Exists", "DoesNotExist"):
        values: tuple[str, ...] = () if rng.random() < 0.9 else ("1",)
    elif op in ("Gt", "Lt"):
        values = (rng.choice(["1", "2", "5", "x"]),)
    else:
        values = tuple(rng.sample(vals, rng.randint(0 if rng.random() < 0.1 else 1, 3)))
    return Req(rng.choice(keys), op, values)


def random_term(rng: random.Random, names: list[str]) -> NodeSelectorTerm:
    exprs = tuple(random_req(rng, names) for _ in range(rng.randint(0, 2)))
    fields: tuple[Req, ...] = ()
    if rng.random() < 0.3:
        key = "metadata.name" if rng.random() < 0.9 else "metadata.uid"
        fields = (Req(key, rng.choice(["In", "NotIn"]), (rng.choice(names + ["zz"]),)),)
    return NodeSelectorTerm(exprs, fields)


def test_vectorized_matches_scalar_reference_on_random_clusters() -> None:
    rng = random.Random(11)
    pl = node_affinity.new(None)
    for _ in range(300):
        nodes = []
        for i in range(rng.randint(1, 10)):
            labels = {
                k: rng.choice(["1", "2", "10", "x", "+4", "007"])
                for k in "abc"
                if rng.random() < 0.6
            }
            nodes.append(node_with_labels(f"n{i}", labels))
        names = [n.name for n in nodes]
        selector = {"a": rng.choice(["1", "2"])} if rng.random() < 0.2 else {}
        required = None
        if rng.random() < 0.8:
            required = tuple(random_term(rng, names) for _ in range(rng.randint(0, 3)))
        preferred = tuple(
            PreferredSchedulingTerm(rng.randint(0, 100), random_term(rng, names))
            for _ in range(rng.randint(0, 3))
        )
        pod = pod_with(selector, required, preferred)
        snap = snapshot_of(nodes)
        info = pod_info(pod)
        rows = np.array([snap.index[n] for n in names], dtype=np.intp)
        pre = pl.pre_filter(info, snap)
        state = pre.state if isinstance(pre, PreFilterResult) else None
        res = pl.filter(state, info, snap, rows)
        assert res.feasible.tolist() == [ref_filter(pod, n) for n in nodes]
        st = pl.pre_score(info, snap, rows)
        if st is SKIP:
            assert not preferred
            continue
        raw = pl.score(st, info, snap, rows)
        assert raw.tolist() == [ref_raw_score(pod, n) for n in nodes]
