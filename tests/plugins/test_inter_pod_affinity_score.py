"""InterPodAffinity PreScore/Score: table tests worked from kube's rules (preferred terms, existing
pods' terms, hard affinity weight), with pods on infeasible nodes counted.

Expected values come from kube's filtering.go/scoring.go read by hand (several cases are kube's own
filtering_test.go/scoring_test.go tables, re-expressed with our builders), never from our output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from schedsvc.framework import SKIP
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Node, Pod
from schedsvc.plugins import inter_pod_affinity as ipa
from tests.builders import node_with_labels, pod_with_affinity
from tests.plugins.inter_pod_affinity_cases import (
    HOST,
    REGIONS,
    S1,
    S2,
    run_score,
    selector,
    snapshot,
    term,
    weighted,
)


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
