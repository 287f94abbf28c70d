"""InterPodAffinity: table tests worked from kube's rules, a scalar reference on random clusters.

Expected values come from kube's filtering.go/scoring.go read by hand (several cases are kube's own
filtering_test.go/scoring_test.go tables, re-expressed with our builders), never from our output.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework import SKIP, Code
from schedsvc.framework.affinity_index import AffinityIndex
from schedsvc.framework.podinfo import pod_info
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import (
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
    frozen_map,
)
from schedsvc.plugins import inter_pod_affinity as ipa
from tests import builders
from tests.builders import node_with_labels, pod_with_affinity, snapshot_of

snapshot = functools.partial(snapshot_of, capacity=4)  # small: the columns grow

AFF = ipa.ERR_REASON_AFFINITY_RULES_NOT_MATCH
ANTI = ipa.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH
EXISTING = ipa.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
ZONE = "zone"
HOST = "hostname"


# ---- builders --------------------------------------------------------------------------------


def selector(
    match_labels: Mapping[str, str] | None = None, **exprs: Sequence[str]
) -> LabelSelector:
    """`selector({"app": "a"}, security_In=["S1"])`: matchLabels plus `<key>_<Op>=values`."""
    reqs = []
    for spec, values in exprs.items():
        key, op = spec.rsplit("_", 1)
        reqs.append(LabelSelectorRequirement(key, op, tuple(values)))
    return LabelSelector(
        match_labels=tuple(sorted((match_labels or {}).items())), match_expressions=tuple(reqs)
    )


def term(
    sel: LabelSelector | None,
    key: str = ZONE,
    namespaces: Sequence[str] = (),
    ns_selector: LabelSelector | None = None,
    match_label_keys: Sequence[str] = (),
    mismatch_label_keys: Sequence[str] = (),
) -> PodAffinityTerm:
    return PodAffinityTerm(
        topology_key=key,
        label_selector=sel,
        namespaces=tuple(namespaces),
        namespace_selector=ns_selector,
        match_label_keys=tuple(match_label_keys),
        mismatch_label_keys=tuple(mismatch_label_keys),
    )


def weighted(weight: int, t: PodAffinityTerm) -> WeightedPodAffinityTerm:
    return WeightedPodAffinityTerm(weight=weight, term=t)


def remove_node(snap: Snapshot, name: str) -> None:
    """Snapshot.remove_node, removing the node's pods first (it looks their node up by name)."""
    row = snap.row_of(name)
    assert row is not None
    for uid in list(snap.pods_on_row[row]):
        snap.remove_pod(uid)
    snap.remove_node(name)


def run_filter(
    snap: Snapshot, pod: Pod, plugin: ipa.InterPodAffinity | None = None
) -> list[list[str]] | None:
    """Reasons per node in snapshot order ([] = feasible); None when PreFilter says Skip."""
    out = builders.run_filter(plugin or ipa.new(None), pod, snap)
    return None if out is None else out.reasons


def run_score(
    snap: Snapshot, pod: Pod, plugin: ipa.InterPodAffinity | None = None
) -> list[int] | None:
    """Normalized scores over every node (all feasible); None when PreScore says Skip."""
    return builders.run_score(plugin or ipa.new(None), pod, snap)


# ---- filter ----------------------------------------------------------------------------------
ZONES = [
    node_with_labels("n1", zone="z1", hostname="n1"),
    node_with_labels("n2", zone="z1", hostname="n2"),
    node_with_labels("n3", zone="z2", hostname="n3"),
    node_with_labels("n4", hostname="n4"),  # no zone label
]
A = {"app": "a"}
B = {"app": "b"}


@dataclass
class FilterCase:
    id: str
    pod: Pod
    pods: list[tuple[Pod, str]] = field(default_factory=list)
    want: list[list[str]] | None = None  # None: PreFilter skips (every node passes)
    nodes: list[Node] = field(default_factory=lambda: ZONES)
    namespaces: list[Namespace] = field(default_factory=list)


FILTER_CASES = [
    FilterCase(
        "a pod without pod affinity and no existing anti-affinity skips the plugin",
        pod=pod_with_affinity(A),
        pods=[(pod_with_affinity(B), "n1")],
        want=None,
    ),
    FilterCase(
        "required affinity is met in the zone of a matching pod and fails elsewhere",
        pod=pod_with_affinity(B, required=[term(selector(A))]),
        pods=[(pod_with_affinity(A), "n1")],
        want=[[], [], [AFF], [AFF]],
    ),
    FilterCase(
        "required affinity with the In operator matches an existing pod's label value",
        pod=pod_with_affinity(required=[term(selector(security_In=["S1", "S3"]))]),
        pods=[(pod_with_affinity({"security": "S3"}), "n3")],
        want=[[AFF], [AFF], [], [AFF]],
    ),
    FilterCase(
        "required affinity does not see a matching pod of another namespace",
        pod=pod_with_affinity(B, required=[term(selector(A))]),
        pods=[(pod_with_affinity(A, namespace="other"), "n1"), (pod_with_affinity(B), "n3")],
        want=[[AFF], [AFF], [AFF], [AFF]],
    ),
    FilterCase(
        "required affinity naming a namespace sees pods there and not in its own",
        pod=pod_with_affinity(B, required=[term(selector(A), namespaces=["other"])]),
        pods=[(pod_with_affinity(A, namespace="other"), "n3"), (pod_with_affinity(A), "n1")],
        want=[[AFF], [AFF], [], [AFF]],
    ),
    FilterCase(
        "an existing pod must match all required affinity terms, not one each",
        pod=pod_with_affinity(
            required=[term(selector(A)), term(selector(tier_In=["db"]), key=HOST)]
        ),
        pods=[(pod_with_affinity(A), "n1"), (pod_with_affinity({"tier": "db"}), "n3")],
        want=[[AFF], [AFF], [AFF], [AFF]],
    ),
    FilterCase(
        "with two terms the node must share both topology values with one matching pod",
        pod=pod_with_affinity(
            required=[term(selector(A)), term(selector(tier_In=["db"]), key=HOST)]
        ),
        pods=[(pod_with_affinity({"app": "a", "tier": "db"}), "n2")],
        want=[[AFF], [], [AFF], [AFF]],
    ),
    FilterCase(
        "the first pod of a group whose terms select itself goes to any node with the key",
        pod=pod_with_affinity(A, required=[term(selector(A))]),
        pods=[(pod_with_affinity(B), "n1")],
        want=[[], [], [], [AFF]],
    ),
    FilterCase(
        "the first-pod exception does not apply when the pod does not match its own terms",
        pod=pod_with_affinity(B, required=[term(selector(A))]),
        pods=[],
        want=[[AFF], [AFF], [AFF], [AFF]],
    ),
    FilterCase(
        "the first-pod exception ends once one pod matches somewhere with the key",
        pod=pod_with_affinity(A, required=[term(selector(A))]),
        pods=[(pod_with_affinity(A), "n3")],
        want=[[AFF], [AFF], [], [AFF]],
    ),
    FilterCase(
        "a matching pod on a node without the key leaves the first-pod exception open",
        pod=pod_with_affinity(A, required=[term(selector(A))]),
        pods=[(pod_with_affinity(A), "n4")],
        want=[[], [], [], [AFF]],
    ),
    FilterCase(
        "a nil label selector matches no pod, not even the pod itself",
        pod=pod_with_affinity(A, required=[term(None)]),
        pods=[(pod_with_affinity(A), "n1")],
        want=[[AFF], [AFF], [AFF], [AFF]],
    ),
    FilterCase(
        "an empty label selector matches every pod of the namespace",
        pod=pod_with_affinity(required=[term(LabelSelector())]),
        pods=[(pod_with_affinity(B), "n3")],
        want=[[AFF], [AFF], [], [AFF]],
    ),
    FilterCase(
        "required anti-affinity rejects the zone of a matching pod only",
        pod=pod_with_affinity(B, required_anti=[term(selector(A))]),
        pods=[(pod_with_affinity(A), "n2"), (pod_with_affinity(B), "n3")],
        want=[[ANTI], [ANTI], [], []],
    ),
    FilterCase(
        "required anti-affinity on hostname rejects only the node of the matching pod",
        pod=pod_with_affinity(required_anti=[term(selector(A), key=HOST)]),
        pods=[(pod_with_affinity(A), "n2")],
        want=[[], [ANTI], [], []],
    ),
    FilterCase(
        "an existing pod's required anti-affinity rejects its zone for a pod it selects",
        pod=pod_with_affinity(A),
        pods=[(pod_with_affinity(B, required_anti=[term(selector(A))]), "n3")],
        want=[[], [], [EXISTING], []],
    ),
    FilterCase(
        "an existing pod's anti-affinity term reads the existing pod's namespace by default",
        pod=pod_with_affinity(A, namespace="other"),
        pods=[(pod_with_affinity(B, required_anti=[term(selector(A))]), "n3")],
        want=None,
    ),
    FilterCase(
        "an existing pod's anti-affinity with a namespaceSelector reads namespace labels",
        pod=pod_with_affinity(A, namespace="other"),
        pods=[
            (
                pod_with_affinity(
                    B, required_anti=[term(selector(A), ns_selector=selector({"team": "x"}))]
                ),
                "n1",
            )
        ],
        namespaces=[Namespace("other", frozen_map({"team": "x"}))],
        want=[[EXISTING], [EXISTING], [], []],
    ),
    FilterCase(
        "an existing pod on a node without the topology key rejects nothing",
        pod=pod_with_affinity(A),
        pods=[(pod_with_affinity(B, required_anti=[term(selector(A))]), "n4")],
        want=None,
    ),
    FilterCase(
        "affinity is reported before the pod's anti-affinity, then existing anti-affinity",
        pod=pod_with_affinity(
            A,
            required=[term(selector(B))],
            required_anti=[term(selector({"app": "c"}), key=HOST)],
        ),
        pods=[
            (pod_with_affinity(B), "n1"),
            (pod_with_affinity({"app": "c"}), "n1"),
            (pod_with_affinity({"app": "c"}), "n3"),
            (pod_with_affinity(required_anti=[term(selector(A), key=HOST)]), "n2"),
        ],
        want=[[ANTI], [EXISTING], [AFF], [AFF]],
    ),
    FilterCase(
        "an incoming namespaceSelector reaches the namespaces whose labels it selects",
        pod=pod_with_affinity(required=[term(selector(A), ns_selector=selector({"env": "p"}))]),
        pods=[
            (pod_with_affinity(A, namespace="prod"), "n3"),
            (pod_with_affinity(A, namespace="default"), "n1"),
        ],
        namespaces=[Namespace("prod", frozen_map({"env": "p"}))],
        want=[[AFF], [AFF], [], [AFF]],
    ),
    FilterCase(
        "an empty incoming namespaceSelector reaches every namespace",
        pod=pod_with_affinity(required=[term(selector(A), ns_selector=LabelSelector())]),
        pods=[(pod_with_affinity(A, namespace="elsewhere"), "n3")],
        want=[[AFF], [AFF], [], [AFF]],
    ),
    FilterCase(
        "matchLabelKeys adds the incoming pod's own value to the selector",
        pod=pod_with_affinity(
            {"app": "a", "rev": "2"},
            required_anti=[term(selector(A), key=HOST, match_label_keys=["rev"])],
        ),
        pods=[
            (pod_with_affinity({"app": "a", "rev": "1"}), "n1"),
            (pod_with_affinity({"app": "a", "rev": "2"}), "n3"),
        ],
        want=[[], [], [ANTI], []],
    ),
    FilterCase(
        "mismatchLabelKeys excludes pods sharing the incoming pod's value",
        pod=pod_with_affinity(
            {"app": "a", "rev": "2"},
            required_anti=[term(selector(A), key=HOST, mismatch_label_keys=["rev"])],
        ),
        pods=[
            (pod_with_affinity({"app": "a", "rev": "1"}), "n1"),
            (pod_with_affinity({"app": "a", "rev": "2"}), "n3"),
        ],
        want=[[ANTI], [], [], []],
    ),
]


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c.id)
def test_filter(case: FilterCase) -> None:
    snap = snapshot(case.nodes, case.pods, case.namespaces)
    assert run_filter(snap, case.pod) == case.want


def test_affinity_failure_is_unresolvable_and_anti_affinity_is_not() -> None:
    snap = snapshot(ZONES, [(pod_with_affinity(A), "n1")])
    pod = pod_with_affinity(required=[term(selector(B))], required_anti=[term(selector(A))])
    plugin = ipa.new(None)
    info = pod_info(pod)
    pf = plugin.pre_filter(info, snap)
    assert pf is not SKIP
    res = plugin.filter(pf.state, info, snap, snap.order)
    assert res.code == Code.UNSCHEDULABLE
    assert res.reason_codes == {AFF: Code.UNRESOLVABLE}


# ---- score -----------------------------------------------------------------------------------
REGIONS = [
    node_with_labels("m1", region="China", hostname="m1"),
    node_with_labels("m2", region="India", hostname="m2"),
    node_with_labels("m3", az="az1", hostname="m3"),
]
S1 = {"security": "S1"}
S2 = {"security": "S2"}


@dataclass
class ScoreCase:
    id: str
    pod: Pod
    pods: list[tuple[Pod, str]]
    want: list[int] | None  # None: PreScore skips
    args: dict[str, object] = field(default_factory=dict)
    nodes: list[Node] = field(default_factory=lambda: REGIONS)


SCORE_CASES = [
    ScoreCase(
        "a pod with no preferred terms and no existing terms skips scoring",
        pod=pod_with_affinity(S1),
        pods=[(pod_with_affinity(S1), "m1")],
        want=None,
    ),
    ScoreCase(
        "preferred affinity gives the matching pod's region the top score (kube table)",
        # region China: +5 (p on m1); m2 and m3 get nothing -> [5, 0, 0] -> [100, 0, 0]
        pod=pod_with_affinity(
            preferred=[weighted(5, term(selector(security_In=["S1"]), key="region"))]
        ),
        pods=[
            (pod_with_affinity(S1), "m1"),
            (pod_with_affinity(S2), "m2"),
            (pod_with_affinity(S1), "m3"),
        ],
        want=[100, 0, 0],
    ),
    ScoreCase(
        "preferred anti-affinity pushes the matching pod's region to zero",
        # China -5 -> raw [-5, 0, 0]: min -5, max 0 -> [0, 100, 100]
        pod=pod_with_affinity(
            preferred_anti=[weighted(5, term(selector(security_In=["S1"]), key="region"))]
        ),
        pods=[(pod_with_affinity(S1), "m1"), (pod_with_affinity(S2), "m2")],
        want=[0, 100, 100],
    ),
    ScoreCase(
        "affinity and anti-affinity weights add up per topology value",
        # China: +8 (S1) -3 (S2 on m1); India: -3 (S2) -> raw [5, -3, 0]
        # min -3, diff 8: [100*8/8, 0, 100*3/8=37.5 -> 37]
        pod=pod_with_affinity(
            preferred=[weighted(8, term(selector(S1), key="region"))],
            preferred_anti=[weighted(3, term(selector(S2), key="region"))],
        ),
        pods=[
            (pod_with_affinity(S1), "m1"),
            (pod_with_affinity(S2), "m1"),
            (pod_with_affinity(S2), "m2"),
        ],
        want=[100, 0, 37],
    ),
    ScoreCase(
        "every matching pod adds the weight again",
        # China: 2 pods * 4 = 8; India: 1 * 4 = 4 -> [100, 50, 0]
        pod=pod_with_affinity(preferred=[weighted(4, term(selector(S1), key="region"))]),
        pods=[
            (pod_with_affinity(S1), "m1"),
            (pod_with_affinity(S1), "m1"),
            (pod_with_affinity(S1), "m2"),
        ],
        want=[100, 50, 0],
    ),
    ScoreCase(
        "a node's score sums its values of every topology key",
        # hostname m2: +10; region India: +10 (same pod, two terms) -> raw [0, 20, 0]
        pod=pod_with_affinity(
            preferred=[
                weighted(10, term(selector(S1), key="region")),
                weighted(10, term(selector(S1), key=HOST)),
            ]
        ),
        pods=[(pod_with_affinity(S1), "m2")],
        want=[0, 100, 0],
    ),
    ScoreCase(
        "an existing pod's preferred affinity toward the incoming pod counts",
        # existing pod on m2 prefers S1 by 7 in its region -> raw [0, 7, 0]
        pod=pod_with_affinity(S1),
        pods=[(pod_with_affinity(preferred=[weighted(7, term(selector(S1), key="region"))]), "m2")],
        want=[0, 100, 0],
    ),
    ScoreCase(
        "an existing pod's preferred anti-affinity toward the incoming pod counts",
        pod=pod_with_affinity(S1),
        pods=[
            (
                pod_with_affinity(preferred_anti=[weighted(7, term(selector(S1), key="region"))]),
                "m2",
            )
        ],
        want=[100, 0, 100],
    ),
    ScoreCase(
        "an existing pod's required affinity counts with hardPodAffinityWeight 1",
        # incoming prefers S2 (m1) by 10; existing pod on m2 requires S1: +1 -> [10, 1, 0]
        pod=pod_with_affinity(S1, preferred=[weighted(10, term(selector(S2), key="region"))]),
        pods=[
            (pod_with_affinity(S2), "m1"),
            (pod_with_affinity(required=[term(selector(S1), key="region")]), "m2"),
        ],
        want=[100, 10, 0],
    ),
    ScoreCase(
        "hardPodAffinityWeight 5 weighs an existing pod's required affinity five times",
        pod=pod_with_affinity(S1, preferred=[weighted(10, term(selector(S2), key="region"))]),
        pods=[
            (pod_with_affinity(S2), "m1"),
            (pod_with_affinity(required=[term(selector(S1), key="region")]), "m2"),
        ],
        want=[100, 50, 0],
        args={"hardPodAffinityWeight": 5},
    ),
    ScoreCase(
        "hardPodAffinityWeight 0 ignores existing pods' required affinity",
        pod=pod_with_affinity(S1, preferred=[weighted(10, term(selector(S2), key="region"))]),
        pods=[
            (pod_with_affinity(S2), "m1"),
            (pod_with_affinity(required=[term(selector(S1), key="region")]), "m2"),
        ],
        want=[100, 0, 0],
        args={"hardPodAffinityWeight": 0},
    ),
    ScoreCase(
        "hardPodAffinityWeight 0 with nothing else to count skips scoring",
        pod=pod_with_affinity(S1),
        pods=[(pod_with_affinity(required=[term(selector(S1), key="region")]), "m2")],
        want=None,
        args={"hardPodAffinityWeight": 0},
    ),
    ScoreCase(
        "ignorePreferredTermsOfExistingPods skips a pod without preferred terms",
        pod=pod_with_affinity(S1),
        pods=[(pod_with_affinity(preferred=[weighted(7, term(selector(S1), key="region"))]), "m2")],
        want=None,
        args={"ignorePreferredTermsOfExistingPods": True},
    ),
    ScoreCase(
        "ignorePreferredTermsOfExistingPods still counts existing terms for a pod with its own",
        # incoming prefers S2 (m1) by 3; existing on m2 prefers S1 by 6 -> [3, 6, 0] -> [50,100,0]
        pod=pod_with_affinity(S1, preferred=[weighted(3, term(selector(S2), key="region"))]),
        pods=[
            (pod_with_affinity(S2), "m1"),
            (pod_with_affinity(preferred=[weighted(6, term(selector(S1), key="region"))]), "m2"),
        ],
        want=[50, 100, 0],
        args={"ignorePreferredTermsOfExistingPods": True},
    ),
    ScoreCase(
        "terms cancelling to zero still score (PreScore only skips when nothing matched)",
        # China +5 -5 = 0 everywhere -> all equal -> zeros, not a skip
        pod=pod_with_affinity(
            preferred=[weighted(5, term(selector(S1), key="region"))],
            preferred_anti=[weighted(5, term(selector(S1), key="region"))],
        ),
        pods=[(pod_with_affinity(S1), "m1")],
        want=[0, 0, 0],
    ),
    ScoreCase(
        "normalization is min-max over the scores, not from zero, and truncates",
        # hostname: m1 +3, m2 +6, m3 +10 -> min 3, diff 7: [0, 300/7=42.86 -> 42, 100]
        pod=pod_with_affinity(preferred=[weighted(1, term(selector(S1), key=HOST))]),
        pods=[(pod_with_affinity(S1), "m1") for _ in range(3)]
        + [(pod_with_affinity(S1), "m2") for _ in range(6)]
        + [(pod_with_affinity(S1), "m3") for _ in range(10)],
        want=[0, 42, 100],
    ),
    ScoreCase(
        "a preferred term whose topology key no node has skips scoring",
        pod=pod_with_affinity(preferred=[weighted(5, term(selector(S1), key="rack"))]),
        pods=[(pod_with_affinity(S1), "m1")],
        want=None,
    ),
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=lambda c: c.id)
def test_score(case: ScoreCase) -> None:
    snap = snapshot(case.nodes, case.pods)
    assert run_score(snap, case.pod, ipa.new(case.args)) == case.want


def test_pre_score_skips_without_feasible_nodes() -> None:
    snap = snapshot(REGIONS, [(pod_with_affinity(S1), "m1")])
    pod = pod_with_affinity(preferred=[weighted(5, term(selector(S1), key="region"))])
    plugin = ipa.new(None)
    assert plugin.pre_score(pod_info(pod), snap, np.zeros(0, dtype=np.intp)) is SKIP


def test_pods_on_infeasible_nodes_count_toward_scores() -> None:
    # the matching pod sits on m1, which is not among the rows being scored
    snap = snapshot(
        [node_with_labels("m1", region="r"), node_with_labels("m2", region="r"),
         node_with_labels("m3", region="s")],
        [(pod_with_affinity(S1), "m1")],
    )
    pod = pod_with_affinity(preferred=[weighted(5, term(selector(S1), key="region"))])
    plugin = ipa.new(None)
    info = pod_info(pod)
    rows = snap.order[1:]
    state = plugin.pre_score(info, snap, rows)
    assert state is not SKIP
    assert plugin.normalize(state, info, plugin.score(state, info, snap, rows)).tolist() == [100, 0]


# ---- args and sign -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, field_name",
    [
        ({"hardPodAffinityWeight": 101}, "hardPodAffinityWeight"),
        ({"hardPodAffinityWeight": -1}, "hardPodAffinityWeight"),
        ({"hardPodAffinityWeight": "5"}, "hardPodAffinityWeight"),
        ({"ignorePreferredTermsOfExistingPods": "yes"}, "ignorePreferredTermsOfExistingPods"),
        ({"hardPodAffinityWieght": 5}, "hardPodAffinityWieght"),
    ],
    ids=[
        "a weight above 100 is refused",
        "a negative weight is refused",
        "a weight that is not an integer is refused",
        "a flag that is not a boolean is refused",
        "an unknown field is refused by name",
    ],
)
def test_bad_args_name_the_field(args: dict[str, object], field_name: str) -> None:
    with pytest.raises(ConfigError) as err:
        ipa.new(args)
    assert field_name in str(err.value)


def test_args_default_to_kube_v1_defaults() -> None:
    assert ipa.new(None).args == ipa.InterPodAffinityArgs(1, False)
    assert ipa.new({"hardPodAffinityWeight": 0}).args.hard_pod_affinity_weight == 0


def test_sign_refuses_pods_with_pod_affinity_and_keys_others_by_namespace_and_labels() -> None:
    plugin = ipa.new(None)
    with_terms = pod_with_affinity(A, preferred=[weighted(1, term(selector(A)))])
    assert plugin.sign(pod_info(with_terms)) is None
    a1 = plugin.sign(pod_info(pod_with_affinity({"app": "a", "x": "1"})))
    a2 = plugin.sign(pod_info(Pod(uid="z", labels=frozen_map({"x": "1", "app": "a"}))))
    other_ns = plugin.sign(pod_info(pod_with_affinity({"app": "a", "x": "1"}, namespace="o")))
    assert a1 is not None and a1 == a2
    assert a1 != other_ns
    assert a1 != plugin.sign(pod_info(pod_with_affinity(B)))


# ---- the index ------------------------------------------------------------------------------
def test_index_follows_pods_added_and_removed() -> None:
    snap = snapshot(ZONES)
    index = AffinityIndex.for_snapshot(snap)
    assert AffinityIndex.for_snapshot(snap) is index
    anti = pod_with_affinity(B, required_anti=[term(selector(A))])
    snap.add_pod(anti, "n3")
    assert len(index.required_anti) == 1
    assert run_filter(snap, pod_with_affinity(A)) == [[], [], [EXISTING], []]
    snap.remove_pod(anti.uid)
    assert len(index.required_anti) == 0
    assert run_filter(snap, pod_with_affinity(A)) is None
    # the selector cache made by the first query follows later pods
    pod = pod_with_affinity(required=[term(selector(A))])
    assert run_filter(snap, pod) == [[AFF]] * 4
    p = pod_with_affinity(A)
    snap.add_pod(p, "n1")
    assert run_filter(snap, pod) == [[], [], [AFF], [AFF]]
    remove_node(snap, "n1")
    assert run_filter(snap, pod) == [[AFF]] * 3


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
