"""InterPodAffinity against a scalar reference: kube's filter and score rules written out pod by
pod, compared with the plugin on random clusters.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from schedsvc.framework.affinity_index import AffinityIndex
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import (
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    frozen_map,
)
from schedsvc.plugins import inter_pod_affinity as ipa
from tests.builders import node_with_labels, pod_with_affinity
from tests.plugins.inter_pod_affinity_cases import (
    AFF,
    ANTI,
    EXISTING,
    HOST,
    ZONE,
    remove_node,
    run_filter,
    run_score,
    selector,
    term,
    weighted,
)

# ---- scalar reference on random clusters ----------------------------------------------------
RefTerm = tuple[PodAffinityTerm, set[str] | None, LabelSelector | None]


def _ref_terms(owner: Pod, terms: Sequence[PodAffinityTerm], ns_objs: Mapping[str, Namespace],
               incoming: bool) -> list[RefTerm]:
    """(term, namespaces or None for all, merged selector), kube's newAffinityTerm by hand."""
    out: list[RefTerm] = []
    for t in terms:
        sel = t.label_selector
        if sel is not None:
            extra = [LabelSelectorRequirement(k, "In", (owner.labels[k],))
                     for k in t.match_label_keys if k in owner.labels]
            extra += [LabelSelectorRequirement(k, "NotIn", (owner.labels[k],))
                      for k in t.mismatch_label_keys if k in owner.labels]
            sel = LabelSelector(sel.match_labels, sel.match_expressions + tuple(extra))
        names = set(t.namespaces)
        if not t.namespaces and t.namespace_selector is None:
            names.add(owner.namespace)
        nss = t.namespace_selector
        if incoming and nss is not None:
            if not nss.match_labels and not nss.match_expressions:
                out.append((t, None, sel))
                continue
            names |= {n for n, o in ns_objs.items() if nss.matches(o.labels)}
        out.append((t, names, sel))
    return out


def _ref_matches(t: PodAffinityTerm, names: set[str] | None, sel: LabelSelector | None,
                 pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
    ns_ok = names is None or pod.namespace in names
    if not ns_ok and ns_labels is not None and t.namespace_selector is not None:
        ns_ok = t.namespace_selector.matches(ns_labels)
    return ns_ok and sel is not None and sel.matches(pod.labels)


def reference(snap: Snapshot, pod: Pod, hard: int, ignore: bool) -> tuple[list[list[str]],
                                                                          list[int] | None]:
    """kube's PreFilter/Filter/PreScore/Score/NormalizeScore, one node and one pod at a time."""
    nodes = [snap.node(int(r)) for r in snap.order]
    pods = [(rec.pod, snap.node(snap.index[rec.node_name])) for rec in snap.pods.values()]
    ns_objs = snap.namespaces
    ns_labels = dict(ns_objs[pod.namespace].labels) if pod.namespace in ns_objs else {}
    a = pod.affinity
    pa = a.pod_affinity if a and a.pod_affinity else PodAffinity()
    paa = a.pod_anti_affinity if a and a.pod_anti_affinity else PodAffinity()
    req = _ref_terms(pod, pa.required, ns_objs, True)
    anti = _ref_terms(pod, paa.required, ns_objs, True)
    existing: dict[tuple[str, str], int] = {}
    aff_counts: dict[tuple[str, str], int] = {}
    anti_counts: dict[tuple[str, str], int] = {}
    for ep, en in pods:
        ea = ep.affinity
        if ea and ea.pod_anti_affinity:
            for t, names, sel in _ref_terms(ep, ea.pod_anti_affinity.required, ns_objs, False):
                if _ref_matches(t, names, sel, pod, ns_labels) and t.topology_key in en.labels:
                    k = (t.topology_key, en.labels[t.topology_key])
                    existing[k] = existing.get(k, 0) + 1
        if req and all(_ref_matches(t, n, s, ep, None) for t, n, s in req):
            for t, _, _ in req:
                if t.topology_key in en.labels:
                    k = (t.topology_key, en.labels[t.topology_key])
                    aff_counts[k] = aff_counts.get(k, 0) + 1
        for t, names, sel in anti:
            if _ref_matches(t, names, sel, ep, None) and t.topology_key in en.labels:
                k = (t.topology_key, en.labels[t.topology_key])
                anti_counts[k] = anti_counts.get(k, 0) + 1
    reasons: list[list[str]] = []
    self_match = bool(req) and all(_ref_matches(t, n, s, pod, None) for t, n, s in req)
    for node in nodes:
        ok_aff, exist = True, True
        for t, _, _ in req:
            if t.topology_key not in node.labels:
                ok_aff = False
                break
            if aff_counts.get((t.topology_key, node.labels[t.topology_key]), 0) <= 0:
                exist = False
        if ok_aff and not exist:
            ok_aff = not aff_counts and self_match
        if not ok_aff:
            reasons.append([AFF])
        elif any(t.topology_key in node.labels
                 and anti_counts.get((t.topology_key, node.labels[t.topology_key]), 0) > 0
                 for t, _, _ in anti):
            reasons.append([ANTI])
        elif any(existing.get((k, v), 0) > 0 for k, v in node.labels.items()):
            reasons.append([EXISTING])
        else:
            reasons.append([])

    has_constraints = bool(pa.preferred or paa.preferred)
    if ignore and not has_constraints:
        return reasons, None
    topo: dict[tuple[str, str], int] = {}
    touched = False

    def bump(key: str, en: Node, w: int) -> None:
        nonlocal touched
        if key in en.labels:
            topo[(key, en.labels[key])] = topo.get((key, en.labels[key]), 0) + w
            touched = True

    for ep, en in pods:
        for sign, pref in ((1, pa.preferred), (-1, paa.preferred)):
            for wt in pref:
                ((t, names, sel),) = _ref_terms(pod, [wt.term], ns_objs, True)
                if _ref_matches(t, names, sel, ep, None):
                    bump(t.topology_key, en, sign * wt.weight)
        ea = ep.affinity
        if ea is None:
            continue
        if ea.pod_affinity and hard > 0:
            for t, names, sel in _ref_terms(ep, ea.pod_affinity.required, ns_objs, False):
                if _ref_matches(t, names, sel, pod, ns_labels):
                    bump(t.topology_key, en, hard)
        for sign, pa_e in ((1, ea.pod_affinity), (-1, ea.pod_anti_affinity)):
            for wt in pa_e.preferred if pa_e else ():
                ((t, names, sel),) = _ref_terms(ep, [wt.term], ns_objs, False)
                if _ref_matches(t, names, sel, pod, ns_labels):
                    bump(t.topology_key, en, sign * wt.weight)
    if not touched:
        return reasons, None
    raw = [sum(topo.get((k, v), 0) for k, v in node.labels.items()) for node in nodes]
    lo, hi = min(raw), max(raw)
    return reasons, [int(100.0 * ((s - lo) / (hi - lo))) if hi > lo else 0 for s in raw]


def _random_selector(rng: random.Random) -> LabelSelector | None:
    r = rng.random()
    if r < 0.05:
        return None
    if r < 0.1:
        return LabelSelector()
    if r < 0.6:
        return selector({"app": rng.choice("abc")})
    op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])
    values = tuple(rng.sample("abc", 2)) if op in ("In", "NotIn") else ()
    key = rng.choice(["app", "tier"])
    return LabelSelector(match_expressions=(LabelSelectorRequirement(key, op, values),))


def _random_term(rng: random.Random) -> PodAffinityTerm:
    ns: tuple[str, ...] = ()
    ns_sel = None
    r = rng.random()
    if r < 0.15:
        ns = (rng.choice(["default", "other"]),)
    elif r < 0.25:
        ns_sel = rng.choice([LabelSelector(), selector({"team": "x"})])
    mlk: tuple[str, ...] = ()
    mmlk: tuple[str, ...] = ()
    if rng.random() < 0.1:
        mlk = ("tier",)
    elif rng.random() < 0.05:
        mmlk = ("tier",)
    return term(_random_selector(rng), key=rng.choice([ZONE, ZONE, HOST, "rack"]),
                namespaces=ns, ns_selector=ns_sel, match_label_keys=mlk, mismatch_label_keys=mmlk)


def _random_pod(rng: random.Random, affinity_chance: float) -> Pod:
    labels = {"app": rng.choice("abc")}
    if rng.random() < 0.5:
        labels["tier"] = rng.choice("ab")
    kinds: dict[str, list[object]] = {"required": [], "required_anti": [], "preferred": [],
                                      "preferred_anti": []}
    if rng.random() < affinity_chance:
        for kind in kinds:
            for _ in range(rng.choice([0, 0, 1, 1, 2])):
                t = _random_term(rng)
                kinds[kind].append(weighted(rng.randint(1, 100), t) if "pref" in kind else t)
    return pod_with_affinity(labels, namespace=rng.choice(["default", "default", "other"]),
                             **kinds)  # type: ignore[arg-type]


def _random_cluster(rng: random.Random) -> Snapshot:
    snap = Snapshot(capacity=2)
    snap.upsert_namespace(Namespace("other", frozen_map({"team": "x"})))
    names = [f"n{i}" for i in range(rng.randint(2, 12))]
    for name in names:
        labels = {HOST: name}
        if rng.random() < 0.85:
            labels[ZONE] = rng.choice(["z1", "z2", "z3"])
        if rng.random() < 0.3:
            labels["rack"] = rng.choice(["r1", "r2"])
        snap.upsert_node(node_with_labels(name, **labels))
    AffinityIndex.for_snapshot(snap)  # register early: every later change goes through the hooks
    pods = []
    for _ in range(rng.randint(0, 25)):
        p = _random_pod(rng, 0.35)
        snap.add_pod(p, rng.choice(names))
        pods.append(p)
    for p in rng.sample(pods, len(pods) // 4):
        snap.remove_pod(p.uid)
    if rng.random() < 0.3:  # a removed node's row is reused by a new node
        remove_node(snap, names[0])
        snap.upsert_node(node_with_labels("fresh", zone="z1", hostname="fresh"))
    return snap


def test_matches_the_scalar_reference_on_random_clusters() -> None:
    rng = random.Random(5598)
    for _ in range(400):
        snap = _random_cluster(rng)
        pod = _random_pod(rng, 0.8)
        hard = rng.choice([0, 1, 5])
        ignore = rng.random() < 0.2
        plugin = ipa.new(
            {"hardPodAffinityWeight": hard, "ignorePreferredTermsOfExistingPods": ignore}
        )
        want_reasons, want_scores = reference(snap, pod, hard, ignore)
        got = run_filter(snap, pod, plugin)
        assert (got or [[] for _ in want_reasons]) == want_reasons
        assert run_score(snap, pod, plugin) == want_scores
