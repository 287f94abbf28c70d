"""PodTopologySpread PreScore/Score: table tests with cases and numbers from kube's
scoring_test.go, per-constraint selectors, namespaces, terminating pods, system and list
defaults, and the rounding of score sums (Go's math.Round).
"""

from __future__ import annotations

import dataclasses

import pytest

from schedsvc.model import LabelSelector, Node, Pod, frozen_map
from schedsvc.plugins import pod_topology_spread as pts
from tests.builders import host_node, node_with_labels, pod_with_spread, zone_node
from tests.plugins.pod_topology_spread_cases import (
    BAR,
    DEFAULT,
    FOO,
    HOST,
    ZONE,
    cluster,
    existing,
    foo_pods,
    run_filter,
    run_score,
    soft,
    spread,
)

# ---- score (cases and numbers from kube's scoring_test.go) -----------------------------------
SCORE_CASES = [
    pytest.param(
        pod_with_spread(soft(1, HOST)),
        [host_node("a"), host_node("b")], [], {},
        ["a", "b"], [100, 100],
        id="one constraint on node, no existing pods",
    ),
    pytest.param(
        pod_with_spread(soft(1, HOST)),
        [host_node("a"), host_node("b")], [], {"a": 2, "b": 1},
        ["a"], [100],
        id="one constraint on node, only one node is candidate",
    ),
    pytest.param(
        pod_with_spread(soft(1, HOST)),
        [host_node(n) for n in "abcd"], [], {"a": 2, "b": 1, "d": 3},
        ["a", "b", "c", "d"], [20, 60, 100, 0],
        id="one constraint on node, all 4 nodes are candidates",
    ),
    pytest.param(
        pod_with_spread(soft(1, HOST, selector=None)),
        [host_node(n) for n in "abcd"], [], {"a": 2, "b": 1, "d": 3},
        ["a", "b", "c", "d"], [100, 100, 100, 100],
        id="one constraint on node, null selector",
    ),
    pytest.param(
        pod_with_spread(soft(2, HOST)),
        [host_node(n) for n in "abcd"], [], {"a": 2, "b": 1, "d": 3},
        ["a", "b", "c", "d"], [33, 66, 100, 16],
        id="one constraint on node, all 4 nodes are candidates, maxSkew=2",
    ),
    pytest.param(
        pod_with_spread(soft(3, HOST)),
        [host_node(n) for n in "abcd"], [], {"a": 4, "b": 3, "c": 2, "d": 1},
        ["a", "b", "c", "d"], [44, 66, 77, 100],
        id="one constraint on node, all 4 nodes are candidates, maxSkew=3",
    ),
    pytest.param(
        pod_with_spread(soft(1, HOST)),
        [host_node("a"), host_node("b"), host_node("x")], [host_node("y")],
        {"a": 4, "b": 2, "x": 1, "y": 3},
        ["a", "b", "x"], [33, 83, 100],
        id="one constraint on node, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        pod_with_spread(soft(1, HOST)),
        [host_node("a"), node_with_labels("b", n="b"), host_node("x")], [host_node("y")],
        {"a": 4, "b": 2, "x": 1, "y": 3},
        ["a", "b", "x"], [16, 0, 100],
        id="one constraint on node, one candidate lacks the key and scores 0",
    ),
    pytest.param(
        pod_with_spread(soft(1, ZONE)),
        [zone_node("a", "z1"), zone_node("b", "z1"), zone_node("x", "z2")],
        [zone_node("y", "z2")],
        {"a": 4, "b": 2, "x": 1, "y": 3},
        ["a", "b", "x"], [75, 75, 100],
        id="one constraint on zone, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        pod_with_spread(soft(1, ZONE), soft(1, HOST)),
        [zone_node("a", "z1"), zone_node("x", "z2")],
        [zone_node("b", "z1"), zone_node("y", "z2")],
        {"a": 2, "b": 1, "x": 2, "y": 4},
        ["a", "x"], [100, 63],
        id="two constraints on zone and node, 2 out of 4 nodes are candidates",
    ),
]


@pytest.mark.parametrize("pod, nodes, failed, pods_per_node, feasible, want", SCORE_CASES)
def test_score(
    pod: Pod,
    nodes: list[Node],
    failed: list[Node],
    pods_per_node: dict[str, int],
    feasible: list[str],
    want: list[int],
) -> None:
    snap = cluster(nodes + failed, foo_pods(pods_per_node))
    assert run_score(DEFAULT, pod, snap, feasible) == want


def test_score_with_different_selectors_per_constraint() -> None:
    # kube: "two Constraints on zone and node, with different labelSelectors"
    nodes = [zone_node("a", "z1"), zone_node("b", "z1"), zone_node("x", "z2"),
             zone_node("y", "z2")]
    pods = [
        ("a", existing("a", foo="")[0]),
        ("b", existing("b", foo="", bar="")[0]),
        ("y", existing("y", foo="")[0]),
        ("y", existing("y", bar="")[0]),
    ]
    pod = pod_with_spread(soft(1, ZONE, FOO), soft(1, HOST, BAR), labels={"foo": "", "bar": ""})
    assert run_score(DEFAULT, pod, cluster(nodes, pods), list("abxy")) == [60, 20, 100, 60]


def test_score_ignores_pods_in_other_namespaces() -> None:
    # kube: "existing pods in a different namespace do not count"
    pods = [("a", p) for p in existing("a", namespace="ns1", foo="")]
    pods += foo_pods({"a": 1, "b": 2})
    snap = cluster([host_node("a"), host_node("b")], pods)
    assert run_score(DEFAULT, pod_with_spread(soft(1, HOST)), snap, ["a", "b"]) == [100, 33]


def test_terminating_pods_do_not_count_in_filter_or_score() -> None:
    # kube's countPodsMatchSelector: "Bypass terminating Pod (see #87621)". Three foo pods on
    # b, two of them being deleted, count as one: the score is as for a: 1, b: 1 (kube's
    # formula: every feasible node at the minimum count scores 100).
    pods = foo_pods({"a": 1, "b": 3})
    pods[2] = ("b", dataclasses.replace(pods[2][1], terminating=True))
    pods[3] = ("b", dataclasses.replace(pods[3][1], terminating=True))
    snap = cluster([host_node("a"), host_node("b")], pods)
    assert run_score(DEFAULT, pod_with_spread(soft(1, HOST)), snap, ["a", "b"]) == [100, 100]
    # hard maxSkew 1: with b counted as 3 against a's 1, b would fail; counted as 1 it fits
    assert run_filter(DEFAULT, pod_with_spread(spread(1, HOST)), snap) == {"a": [], "b": []}
    # a pod that stops terminating (sent again without the flag) counts again
    snap.remove_pod(pods[3][1].uid)
    snap.add_pod(dataclasses.replace(pods[3][1], terminating=False), "b")
    # a: 1, b: 2, as in test_score_ignores_pods_in_other_namespaces
    assert run_score(DEFAULT, pod_with_spread(soft(1, HOST)), snap, ["a", "b"]) == [100, 33]


def test_system_defaults_score_through_the_default_selector() -> None:
    # kube: "system defaulting, nodes don't have zone, pods match service"
    snap = cluster([host_node(n) for n in "abcd"], foo_pods({"a": 4, "b": 3, "c": 2, "d": 1}))
    pod = Pod(uid="p", labels=frozen_map({"foo": ""}), default_selector=LabelSelector(
        match_labels=(("foo", ""),)))
    assert run_score(DEFAULT, pod, snap, list("abcd")) == [44, 66, 77, 100]
    # without a default selector nothing selects the pod: PreScore skips
    assert run_score(DEFAULT, Pod(uid="p", labels=frozen_map({"foo": ""})), snap, list("abcd")) \
        is None


def test_system_defaults_count_nodes_without_zone_as_one_empty_domain() -> None:
    # hostname: maxSkew 3, weight log(3 candidates + 2); zone: maxSkew 5, domains z1 and ""
    # (b lacks the zone label, kube still counts it as a domain), weight log(2 + 2).
    # raw a = 2*log5 + 2 + 2*log4 + 4 = 11.99 -> 12; b = 0*log5 + 2 = 2 (no zone term);
    # x = 0*log5 + 2 + 2*log4 + 4 = 8.77 -> 9. Normalized 100*(12+2-s)/12.
    tz = "topology.kubernetes.io/zone"
    nodes = [host_node("a", **{tz: "z1"}), host_node("b"), host_node("x", **{tz: "z1"})]
    snap = cluster(nodes, foo_pods({"a": 2}))
    pod = Pod(uid="p", labels=frozen_map({"foo": ""}), default_selector=FOO)
    assert run_score(DEFAULT, pod, snap, ["a", "b", "x"]) == [16, 100, 41]


def test_list_defaults_require_every_key_so_nodes_without_zone_score_zero() -> None:
    plugin = pts.new(
        {"defaultingType": "List",
         "defaultConstraints": [
             {"maxSkew": 3, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"},
             {"maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone",
              "whenUnsatisfiable": "ScheduleAnyway"}]}
    )
    tz = "topology.kubernetes.io/zone"
    nodes = [host_node("a", **{tz: "z1"}), host_node("b"), host_node("x", **{tz: "z1"})]
    snap = cluster(nodes, foo_pods({"a": 2}))
    pod = Pod(uid="p", labels=frozen_map({"foo": ""}), default_selector=FOO)
    # b is ignored; hostname weight log(2 + 2), zone weight log(1 + 2):
    # a = 2*log4 + 2 + 2*log3 + 4 = 10.97 -> 11; x = 0 + 2 + 2*log3 + 4 = 8.20 -> 8
    # normalized over a and x: 100*(11+8-s)/11 -> a 72, x 100; b 0
    assert run_score(plugin, pod, snap, ["a", "b", "x"]) == [72, 0, 100]


def test_pre_score_skips_pods_without_soft_constraints() -> None:
    snap = cluster([host_node("a"), host_node("b")])
    assert run_score(DEFAULT, pod_with_spread(spread(1, HOST)), snap, ["a", "b"]) is None


def test_normalize_scores_all_ignored_nodes_zero() -> None:
    snap = cluster([node_with_labels("a"), node_with_labels("b")])
    assert run_score(DEFAULT, pod_with_spread(soft(1, HOST)), snap, ["a", "b"]) == [0, 0]


def test_round_score_sum_is_go_round_on_score_sums() -> None:
    """A window's score sums are integers or above log(3): there x + 0.5 truncated is
    math.Round, at every half and next to it."""
    import math

    import numpy as np

    from schedsvc.plugins.pod_topology_spread.common import go_round, round_score_sum

    rng = np.random.default_rng(5)
    sums = []
    for n in (1, 2, 3, 7, 500, 4998):
        w = math.log(n + 2)
        cnt = rng.integers(0, 40, size=2000)
        skew = rng.integers(0, 6, size=2000)
        sums.append(cnt * w + skew)
        sums.append(cnt * w + skew + rng.integers(0, 300, size=2000) * math.log(3 + 2) + 4)
    halves = np.arange(1, 5000) + 0.5  # and the doubles either side of each half
    sums += [halves, np.nextafter(halves, 0), np.nextafter(halves, np.inf), np.arange(0, 200.0)]
    x = np.concatenate(sums)
    assert ((x == np.floor(x)) | (x >= math.log(3))).all()  # what score sums are
    np.testing.assert_array_equal(round_score_sum(x), go_round(x))
    # the one double it rounds wrong is no score sum
    assert round_score_sum(np.array([np.nextafter(0.5, 0)]))[0] == 1
