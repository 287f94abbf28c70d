"""InterPodAffinity Filter: table tests worked from kube's rules (required affinity, anti-affinity
and existing pods' anti-affinity), and which failures are unresolvable.

Expected values come from kube's filtering.go/scoring.go read by hand (several cases are kube's own
filtering_test.go/scoring_test.go tables, re-expressed with our builders), never from our output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from schedsvc.framework import SKIP, Code
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import LabelSelector, Namespace, Node, Pod, frozen_map
from schedsvc.plugins import inter_pod_affinity as ipa
from tests.builders import pod_with_affinity
from tests.plugins.inter_pod_affinity_cases import (
    AFF,
    ANTI,
    EXISTING,
    HOST,
    ZONES,
    A,
    B,
    run_filter,
    selector,
    snapshot,
    term,
)


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
