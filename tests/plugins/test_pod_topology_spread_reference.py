"""PodTopologySpread against a per-node scalar reference: kube's filter and score rules written
out node by node, compared with the vectorized plugin on random clusters.
"""

from __future__ import annotations

import math
import random

from schedsvc.model import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    frozen_map,
)
from tests.plugins.pod_topology_spread_cases import (
    DEFAULT,
    HOST,
    MISSING,
    SKEW,
    ZONE,
    cluster,
    run_filter,
    run_score,
)


# ---- cross-check against a scalar reference --------------------------------------------------
def ref_node_affinity(pod: Pod, n: Node) -> bool:
    if any(n.labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    na = pod.affinity.node_affinity if pod.affinity else None
    if na is None or na.required is None:
        return True
    for term in na.required:
        ok = bool(term.match_expressions)
        for r in term.match_expressions:
            assert r.operator == "In"
            ok = ok and n.labels.get(r.key) in r.values
        if ok:
            return True
    return False


def ref_included(pod: Pod, n: Node, c: TopologySpreadConstraint) -> bool:
    if c.node_affinity_policy == "Honor" and not ref_node_affinity(pod, n):
        return False
    if c.node_taints_policy == "Honor":
        for t in n.taints:
            if t.effect in ("NoSchedule", "NoExecute") and not any(
                tol.tolerates(t) for tol in pod.tolerations
            ):
                return False
    return True


def ref_count(pods: list[Pod], sel: LabelSelector | None, ns: str) -> int:
    """countPodsMatchSelector: a nil or an empty selector counts nothing."""
    if sel is None or sel.is_empty:
        return 0
    return sum(1 for p in pods if p.namespace == ns and sel.matches(p.labels))


def ref_selector(pod: Pod, c: TopologySpreadConstraint) -> LabelSelector | None:
    extra = tuple((k, pod.labels[k]) for k in c.match_label_keys if k in pod.labels)
    if not extra:
        return c.label_selector
    base = c.label_selector
    if base is None:
        return LabelSelector(match_labels=extra)
    return LabelSelector(extra + base.match_labels, base.match_expressions)


def ref_filter(pod: Pod, nodes: list[Node], on: dict[str, list[Pod]]) -> dict[str, list[str]]:
    cs = [c for c in pod.topology_spread_constraints if c.when_unsatisfiable == "DoNotSchedule"]
    sels = [ref_selector(pod, c) for c in cs]
    tp: list[dict[str, int]] = [{} for _ in cs]
    for n in nodes:
        if not all(c.topology_key in n.labels for c in cs):
            continue
        for i, c in enumerate(cs):
            if ref_included(pod, n, c):
                v = n.labels[c.topology_key]
                tp[i][v] = tp[i].get(v, 0) + ref_count(on[n.name], sels[i], pod.namespace)
    out: dict[str, list[str]] = {}
    for n in nodes:
        out[n.name] = []
        for i, c in enumerate(cs):
            if c.topology_key not in n.labels:
                out[n.name] = [MISSING]
                break
            mn = min(tp[i].values()) if tp[i] else 2**31 - 1
            if len(tp[i]) < (c.min_domains or 1):
                mn = 0
            self_match = 1 if sels[i] is not None and sels[i].matches(pod.labels) else 0  # type: ignore[union-attr]
            if tp[i].get(n.labels[c.topology_key], 0) + self_match - mn > c.max_skew:
                out[n.name] = [SKEW]
                break
    return out


def ref_score(
    pod: Pod, nodes: list[Node], on: dict[str, list[Pod]], feasible: list[Node]
) -> list[int] | None:
    cs = [c for c in pod.topology_spread_constraints if c.when_unsatisfiable == "ScheduleAnyway"]
    if not cs:
        return None
    sels = [ref_selector(pod, c) for c in cs]
    ignored = {n.name for n in feasible if not all(c.topology_key in n.labels for c in cs)}
    counts: list[dict[str, int]] = [{} for _ in cs]
    for n in feasible:
        if n.name in ignored:
            continue
        for i, c in enumerate(cs):
            if c.topology_key != HOST:
                counts[i].setdefault(n.labels[c.topology_key], 0)
    weights = []
    for i, c in enumerate(cs):
        size = len(feasible) - len(ignored) if c.topology_key == HOST else len(counts[i])
        weights.append(math.log(size + 2))
    for n in nodes:
        if not all(c.topology_key in n.labels for c in cs):
            continue
        for i, c in enumerate(cs):
            v = n.labels[c.topology_key]
            if ref_included(pod, n, c) and v in counts[i]:
                counts[i][v] += ref_count(on[n.name], sels[i], pod.namespace)
    raw: list[int | None] = []
    for n in feasible:
        if n.name in ignored:
            raw.append(None)
            continue
        s = 0.0
        for i, c in enumerate(cs):
            v = n.labels[c.topology_key]
            cnt = (
                ref_count(on[n.name], sels[i], pod.namespace)
                if c.topology_key == HOST
                else counts[i][v]
            )
            s += cnt * weights[i] + (c.max_skew - 1)
        raw.append(math.floor(s + 0.5))
    valid = [r for r in raw if r is not None]
    if not valid:
        return [0] * len(raw)
    lo, hi = min(valid), max(valid)
    return [
        0 if r is None else (100 if hi == 0 else 100 * (hi + lo - r) // hi) for r in raw
    ]


def random_case(rng: random.Random) -> tuple[list[Node], list[tuple[str, Pod]], Pod]:
    nodes = []
    for i in range(rng.randint(1, 14)):
        labels = {}
        if rng.random() < 0.9:
            labels[HOST] = f"n{i}"
        if rng.random() < 0.85:
            labels[ZONE] = rng.choice(["z1", "z2", "z3", ""])
        if rng.random() < 0.5:
            labels["rack"] = rng.choice(["r1", "r2"])
        labels["pool"] = rng.choice(["p1", "p2"])
        taints = [Taint("t", "", rng.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"]))] \
            if rng.random() < 0.3 else []
        nodes.append(Node(name=f"n{i}", labels=frozen_map(labels), taints=tuple(taints)))
    pods = []
    for j in range(rng.randint(0, 30)):
        labels = {k: rng.choice(["a", "b"]) for k in ("app", "tier") if rng.random() < 0.6}
        p = Pod(uid=f"e{j}", namespace=rng.choice(["default", "default", "other"]),
                labels=frozen_map(labels))
        pods.append((rng.choice(nodes).name, p))
    sels = [
        None,
        LabelSelector(),
        LabelSelector(match_labels=(("app", "a"),)),
        LabelSelector(match_expressions=(LabelSelectorRequirement("tier", "In", ("a", "b")),)),
        LabelSelector(match_expressions=(LabelSelectorRequirement("app", "NotIn", ("b",)),)),
    ]
    cs = []
    keys = rng.sample([HOST, ZONE, "rack"], rng.randint(1, 3))
    for key in keys:
        cs.append(TopologySpreadConstraint(
            max_skew=rng.randint(1, 3), topology_key=key,
            when_unsatisfiable=rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
            label_selector=rng.choice(sels),
            min_domains=rng.choice([None, None, 2, 4]),
            node_affinity_policy=rng.choice(["Honor", "Ignore"]),
            node_taints_policy=rng.choice(["Honor", "Ignore"]),
            match_label_keys=rng.choice([(), (), ("tier",)]),
        ))
    affinity = None
    if rng.random() < 0.3:
        affinity = Affinity(node_affinity=NodeAffinity(required=(
            NodeSelectorTerm(match_expressions=(NodeSelectorRequirement("pool", "In", ("p1",)),)),
        )))
    pod = Pod(
        uid="p", labels=frozen_map({k: rng.choice(["a", "b"]) for k in ("app", "tier")}),
        node_selector=frozen_map({"pool": "p2"} if rng.random() < 0.2 else {}),
        affinity=affinity,
        tolerations=(Toleration(key="t", operator="Exists"),) if rng.random() < 0.3 else (),
        topology_spread_constraints=tuple(cs),
    )
    return nodes, pods, pod


def test_vectorized_plugin_matches_scalar_reference_on_random_clusters() -> None:
    rng = random.Random(5598)
    for _ in range(400):
        nodes, pods, pod = random_case(rng)
        snap = cluster(nodes, pods)
        on: dict[str, list[Pod]] = {n.name: [] for n in nodes}
        for name, p in pods:
            on[name].append(p)
        want_filter = ref_filter(pod, nodes, on)
        got_filter = run_filter(DEFAULT, pod, snap)
        if got_filter is None:
            assert all(not r for r in want_filter.values())
        else:
            assert got_filter == want_filter, pod
        feasible = [n for n in nodes if rng.random() < 0.7] or nodes[:1]
        want_score = ref_score(pod, nodes, on, feasible)
        got_score = run_score(DEFAULT, pod, snap, [n.name for n in feasible])
        assert got_score == want_score, pod
