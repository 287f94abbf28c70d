"""PodTopologySpread: table tests after kube's filtering_test.go / scoring_test.go, plus a
cross-check of the vectorized plugin against a per-node scalar reference on random clusters."""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework import Code, PreFilterResult
from schedsvc.framework.podinfo import pod_info
from schedsvc.framework.selector_counts import SelectorCounts
from schedsvc.framework.snapshot import Snapshot
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
from schedsvc.plugins import pod_topology_spread as pts
from tests import builders
from tests.builders import host_node, node_with_labels, pod_with_spread, zone_node

HOST = "kubernetes.io/hostname"
ZONE = "zone"
SKEW = pts.ERR_REASON_CONSTRAINTS_NOT_MATCH
MISSING = pts.ERR_REASON_NODE_LABEL_NOT_MATCH

FOO = LabelSelector(match_expressions=(LabelSelectorRequirement("foo", "Exists"),))
BAR = LabelSelector(match_expressions=(LabelSelectorRequirement("bar", "Exists"),))


# ---- builders --------------------------------------------------------------------------------


def spread(
    max_skew: int,
    key: str,
    when: str = "DoNotSchedule",
    selector: LabelSelector | None = FOO,
    **kw: Any,
) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(
        max_skew=max_skew, topology_key=key, when_unsatisfiable=when, label_selector=selector, **kw
    )


def soft(max_skew: int, key: str, selector: LabelSelector | None = FOO) -> TopologySpreadConstraint:
    return spread(max_skew, key, "ScheduleAnyway", selector)


def existing(node_name: str, n: int = 1, namespace: str = "default", **labels: str) -> list[Pod]:
    return [
        Pod(
            uid=f"{node_name}-{namespace}-{sorted(labels.items())}-{i}",
            namespace=namespace,
            labels=frozen_map(labels),
        )
        for i in range(n)
    ]


def foo_pods(spec: Mapping[str, int]) -> list[tuple[str, Pod]]:
    return [(n, p) for n, k in spec.items() for p in existing(n, k, foo="")]


def cluster(nodes: Sequence[Node], pods: Sequence[tuple[str, Pod]] = ()) -> Snapshot:
    """kube's table order: (node name, pod) pairs; a small capacity so the columns grow."""
    return builders.snapshot_of(nodes, [(p, name) for name, p in pods], capacity=4)


def run_filter(
    plugin: pts.PodTopologySpread, pod: Pod, snap: Snapshot
) -> dict[str, list[str]] | None:
    """Reasons per node name ([] = feasible); None when PreFilter says Skip."""
    out = builders.run_filter(plugin, pod, snap)
    if out is None:
        return None
    return dict(zip(snap.names(snap.order), out.reasons, strict=True))


def run_score(
    plugin: pts.PodTopologySpread, pod: Pod, snap: Snapshot, feasible: Sequence[str]
) -> list[int] | None:
    return builders.run_score(plugin, pod, snap, builders.rows_of(snap, feasible))


DEFAULT = pts.new(None)


# ---- args ------------------------------------------------------------------------------------
def test_no_args_mean_system_defaulting_with_kubes_two_soft_constraints() -> None:
    p = pts.new(None)
    assert p.system_defaulted
    assert [(c.topology_key, c.max_skew, c.when_unsatisfiable) for c in p.default_constraints] == [
        ("kubernetes.io/hostname", 3, "ScheduleAnyway"),
        ("topology.kubernetes.io/zone", 5, "ScheduleAnyway"),
    ]


def test_list_defaulting_parses_yaml_constraints() -> None:
    p = pts.new(
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                 "minDomains": 2, "nodeTaintsPolicy": "Honor"},
            ],
        }
    )
    assert not p.system_defaulted
    assert p.default_constraints == (
        TopologySpreadConstraint(
            max_skew=1, topology_key="zone", when_unsatisfiable="DoNotSchedule",
            min_domains=2, node_taints_policy="Honor",
        ),
    )


_C = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}


@pytest.mark.parametrize(
    "args, field",
    [
        pytest.param({"bogus": 1}, "args.bogus", id="an unknown key is refused"),
        pytest.param({"defaultingType": "Auto"}, "args.defaultingType",
                     id="an unknown defaulting type is refused"),
        pytest.param({"defaultConstraints": [_C]}, "args.defaultingType",
                     id="constraints with System defaulting are refused"),
        pytest.param({"defaultingType": "List", "defaultConstraints": [{**_C, "maxSkew": 0}]},
                     "defaultConstraints[0].maxSkew", id="a zero maxSkew is refused"),
        pytest.param({"defaultingType": "List", "defaultConstraints": [{**_C, "topologyKey": ""}]},
                     "defaultConstraints[0].topologyKey", id="an empty topology key is refused"),
        pytest.param({"defaultingType": "List",
                      "defaultConstraints": [{**_C, "whenUnsatisfiable": "Sometimes"}]},
                     "defaultConstraints[0].whenUnsatisfiable",
                     id="an unknown whenUnsatisfiable is refused"),
        pytest.param({"defaultingType": "List",
                      "defaultConstraints": [{**_C, "labelSelector": {"matchLabels": {"a": "b"}}}]},
                     "defaultConstraints[0].labelSelector",
                     id="a default constraint with its own selector is refused"),
        pytest.param({"defaultingType": "List", "defaultConstraints": [_C, {**_C, "maxSkew": 2}]},
                     "defaultConstraints[1]", id="a repeated key and action pair is refused"),
        pytest.param({"defaultingType": "List", "defaultConstraints": [{**_C, "extra": 1}]},
                     "defaultConstraints[0].extra", id="an unknown constraint field is refused"),
        pytest.param({"defaultingType": "List",
                      "defaultConstraints": [{**_C, "nodeTaintsPolicy": "Maybe"}]},
                     "defaultConstraints[0].nodeTaintsPolicy", id="an unknown policy is refused"),
    ],
)
def test_bad_args_raise_config_error_naming_the_field(args: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        pts.new(args)
    assert err.value.field.endswith(field)


# ---- filter ----------------------------------------------------------------------------------
FILTER_CASES = [
    pytest.param(
        pod_with_spread(spread(1, ZONE)),
        [zone_node("a", "z1"), zone_node("b", "z1"), zone_node("x", "z2"), zone_node("y", "z2")],
        foo_pods({}),
        {"a": [], "b": [], "x": [], "y": []},
        id="no existing pods: every node fits",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE)),
        [zone_node("a", "z1"), zone_node("b", "z1"), zone_node("x", "z2"), zone_node("y", "z2")],
        foo_pods({"a": 1, "b": 1, "y": 1}),
        # zone1 has 2, zone2 has 1: 2+1-1 = 2 > 1 in zone1, 1+1-1 = 1 in zone2
        {"a": [SKEW], "b": [SKEW], "x": [], "y": []},
        id="pods spread 2/1 over zones with maxSkew 1: only the emptier zone fits",
    ),
    pytest.param(
        pod_with_spread(spread(1, HOST)),
        [host_node("a"), host_node("b"), host_node("x"), host_node("y")],
        foo_pods({"a": 2, "b": 1, "y": 1}),
        # min is 0 on x: a 2+1 > 1, b 1+1 = 2 > 1, y too, x fits
        {"a": [SKEW], "b": [SKEW], "x": [], "y": [SKEW]},
        id="pods spread 2/1/0/1 over hosts: only the host with none fits",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE), labels={"bar": ""}),
        [zone_node("a", "z1"), zone_node("x", "z2")],
        foo_pods({"a": 1}),
        # the pod does not match its own selector: 1+0-0 = 1 <= 1
        {"a": [], "x": []},
        id="an incoming pod that does not match its selector adds no self match",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE)),
        [zone_node("a", "z1"), host_node("b"), zone_node("x", "z2")],
        foo_pods({"b": 3}),
        {"a": [], "b": [MISSING], "x": []},
        id="a node without the topology key is unresolvable and its pods do not count",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE), spread(1, HOST)),
        [zone_node("a", "z1"), node_with_labels("x", zone="z2")],
        foo_pods({"a": 1}),
        # x lacks the hostname, so zone2 is no domain: the zone minimum is 1, not 0, and a fits
        {"a": [], "x": [MISSING]},
        id="only nodes carrying every topology key count toward domains",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE, min_domains=3)),
        [zone_node("a", "z1"), zone_node("x", "z2")],
        foo_pods({"a": 1, "x": 1}),
        # 2 domains < minDomains 3: global minimum is 0, 1+1-0 = 2 > 1 everywhere
        {"a": [SKEW], "x": [SKEW]},
        id="fewer domains than minDomains make the global minimum zero",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE, min_domains=2)),
        [zone_node("a", "z1"), zone_node("x", "z2")],
        foo_pods({"a": 1, "x": 1}),
        {"a": [], "x": []},
        id="enough domains for minDomains keep the real minimum",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE), node_selector=frozen_map({"pool": "p1"})),
        [zone_node("a", "z1", pool="p1"), zone_node("x", "z2", pool="p1"),
         zone_node("y", "z3", pool="p2")],
        foo_pods({"a": 1, "x": 1}),
        # Honor (default): z3 is not a domain, so the minimum is 1 and every node fits
        {"a": [], "x": [], "y": []},
        id="nodeAffinityPolicy Honor drops domains the pod's nodeSelector excludes",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE, node_affinity_policy="Ignore"),
                        node_selector=frozen_map({"pool": "p1"})),
        [zone_node("a", "z1", pool="p1"), zone_node("x", "z2", pool="p1"),
         zone_node("y", "z3", pool="p2")],
        foo_pods({"a": 1, "x": 1}),
        {"a": [SKEW], "x": [SKEW], "y": []},
        id="nodeAffinityPolicy Ignore keeps every domain",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE, node_taints_policy="Honor")),
        [zone_node("a", "z1"), zone_node("x", "z2"),
         zone_node("y", "z3", taints=[Taint("t", "", "NoSchedule")])],
        foo_pods({"a": 1, "x": 1}),
        {"a": [], "x": [], "y": []},
        id="nodeTaintsPolicy Honor drops domains of untolerated tainted nodes",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE)),
        [zone_node("a", "z1"), zone_node("x", "z2"),
         zone_node("y", "z3", taints=[Taint("t", "", "NoSchedule")])],
        foo_pods({"a": 1, "x": 1}),
        {"a": [SKEW], "x": [SKEW], "y": []},
        id="nodeTaintsPolicy Ignore (default) counts tainted nodes",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE, node_taints_policy="Honor"),
                        tolerations=(Toleration(key="t", operator="Exists"),)),
        [zone_node("a", "z1"), zone_node("x", "z2"),
         zone_node("y", "z3", taints=[Taint("t", "", "NoSchedule")])],
        foo_pods({"a": 1, "x": 1}),
        {"a": [SKEW], "x": [SKEW], "y": []},
        id="a tolerated taint keeps the node's domain under Honor",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE)),
        [zone_node("a", "z1"), zone_node("x", "z2")],
        [("a", p) for p in existing("a", 3, namespace="other", foo="")],
        {"a": [], "x": []},
        id="pods in another namespace do not count",
    ),
    pytest.param(
        pod_with_spread(spread(1, HOST), spread(1, ZONE)),
        [zone_node("a", "z1"), node_with_labels("b", **{HOST: "b"}), zone_node("x", "z2")],
        foo_pods({"a": 2}),
        # a fails the first (hostname) constraint on skew before the zone key is looked at;
        # b has the hostname within skew, then misses the zone key
        {"a": [SKEW], "b": [MISSING], "x": []},
        id="constraints are checked in order and the first failure gives the reason",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE, match_label_keys=("app",)), labels={"foo": "", "app": "w"}),
        [zone_node("a", "z1"), zone_node("x", "z2")],
        [("a", p) for p in existing("a", 2, foo="", app="other")],
        {"a": [], "x": []},
        id="matchLabelKeys narrow the selector to pods sharing the pod's values",
    ),
    pytest.param(
        pod_with_spread(spread(1, ZONE, selector=None)),
        [zone_node("a", "z1"), zone_node("x", "z2")],
        foo_pods({"a": 3}),
        {"a": [], "x": []},
        id="a nil selector matches no pod, not even the incoming one",
    ),
    pytest.param(
        pod_with_spread(spread(1, "rack")),
        [zone_node("a", "z1"), zone_node("x", "z2")],
        foo_pods({}),
        {"a": [MISSING], "x": [MISSING]},
        id="a topology key no node carries rejects every node as missing",
    ),
]


@pytest.mark.parametrize("pod, nodes, pods, want", FILTER_CASES)
def test_filter(
    pod: Pod, nodes: list[Node], pods: list[tuple[str, Pod]], want: dict[str, list[str]]
) -> None:
    assert run_filter(DEFAULT, pod, cluster(nodes, pods)) == want


def test_filter_codes_tell_missing_label_from_skew() -> None:
    snap = cluster([zone_node("a", "z1"), host_node("b")], foo_pods({"a": 3}))
    pod = pod_with_spread(spread(1, ZONE))
    info = pod_info(pod)
    pre = DEFAULT.pre_filter(info, snap)
    assert isinstance(pre, PreFilterResult)
    res = DEFAULT.filter(pre.state, info, snap, snap.order)
    assert res.code == Code.UNSCHEDULABLE
    assert res.reason_codes == {MISSING: Code.UNRESOLVABLE}


def test_pre_filter_skips_pods_without_hard_constraints() -> None:
    snap = cluster([zone_node("a", "z1")])
    assert run_filter(DEFAULT, pod_with_spread(soft(1, ZONE)), snap) is None
    assert run_filter(DEFAULT, Pod(uid="p"), snap) is None


def test_list_default_hard_constraints_apply_through_the_default_selector() -> None:
    plugin = pts.new(
        {"defaultingType": "List",
         "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE,
                                 "whenUnsatisfiable": "DoNotSchedule"}]}
    )
    snap = cluster([zone_node("a", "z1"), zone_node("x", "z2")], foo_pods({"a": 2}))
    plain = Pod(uid="p", labels=frozen_map({"foo": ""}))
    assert run_filter(plugin, plain, snap) is None
    selected = Pod(uid="p", labels=frozen_map({"foo": ""}), default_selector=FOO)
    assert run_filter(plugin, selected, snap) == {"a": [SKEW], "x": []}
    # the pod's own constraints win over the defaults
    own = pod_with_spread(soft(1, ZONE), default_selector=FOO)
    assert run_filter(plugin, own, snap) is None


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


# ---- sign ------------------------------------------------------------------------------------
def test_sign() -> None:
    assert DEFAULT.sign(pod_info(pod_with_spread(soft(1, HOST)))) is None
    assert DEFAULT.sign(pod_info(Pod(uid="p", default_selector=FOO))) is None
    assert DEFAULT.sign(pod_info(Pod(uid="p"))) == b""
    assert DEFAULT.sign(pod_info(Pod(uid="p", default_selector=LabelSelector()))) == b""
    no_defaults = pts.new({"defaultingType": "List"})
    assert no_defaults.sign(pod_info(Pod(uid="p", default_selector=FOO))) == b""


# ---- selector counts index -------------------------------------------------------------------
def test_selector_counts_follow_adds_removes_and_growth() -> None:
    snap = cluster([host_node("a"), host_node("b")])
    snap.add_pod(Pod(uid="1", labels=frozen_map({"foo": "x"})), "a")
    idx = SelectorCounts.for_snapshot(snap)
    assert SelectorCounts.for_snapshot(snap) is idx
    arr = idx.counts("default", FOO)
    ra, rb = snap.row_of("a"), snap.row_of("b")
    assert (arr[ra], arr[rb]) == (1, 0)
    snap.add_pod(Pod(uid="2", labels=frozen_map({"foo": "y"})), "b")
    snap.add_pod(Pod(uid="3", namespace="other", labels=frozen_map({"foo": "y"})), "b")
    snap.add_pod(Pod(uid="4", labels=frozen_map({"bar": "y"})), "b")
    for i in range(10):  # grow the snapshot past its capacity
        snap.upsert_node(host_node(f"n{i}"))
    snap.add_pod(Pod(uid="5", labels=frozen_map({"foo": ""})), "n9")
    arr = idx.counts("default", FOO)
    assert (arr[ra], arr[rb], arr[snap.row_of("n9")]) == (1, 1, 1)
    snap.remove_pod("1")
    assert idx.counts("default", FOO)[ra] == 0
    # equal selectors written differently share one entry
    same = LabelSelector(match_expressions=(LabelSelectorRequirement("foo", "Exists"),) * 2)
    assert idx.counts("default", same) is idx.counts("default", FOO)


def test_selector_counts_evict_least_recently_used() -> None:
    snap = cluster([host_node("a")])
    idx = SelectorCounts(snap, max_entries=2)
    snap.add_listener(idx)
    sels = [LabelSelector(match_labels=(("k", str(i)),)) for i in range(3)]
    for s in sels:
        idx.counts("default", s)
    assert len(idx) == 2
    snap.add_pod(Pod(uid="1", labels=frozen_map({"k": "0"})), "a")
    assert idx.counts("default", sels[0])[snap.row_of("a")] == 1


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


def test_an_empty_selector_counts_no_existing_pod_but_still_matches_the_pod_itself() -> None:
    """common.go countPodsMatchSelector returns 0 for selector.Empty(); selfMatch uses Matches.

    Existing pods on n1 (3) and n2 (1) are not counted: every zone's count is 0, skew after
    placing is 0 + 1 - 0 = 1 <= maxSkew 1 everywhere, and every soft score is equal (100)."""
    from schedsvc.config import parse_config
    from schedsvc.engine.scheduler import Engine, SnapshotUpdate
    from schedsvc.model import Container
    from schedsvc.model import LabelSelector as LS
    from schedsvc.model import Pod as P
    from schedsvc.model import TopologySpreadConstraint as TSC

    engine = Engine(parse_config({"percentageOfNodesToScore": 100}), seed=1)
    c = engine.cluster("x")
    zones = {"n1": "a", "n2": "b", "n3": "c"}
    c.update(SnapshotUpdate(
        upsert_nodes=[Node(name=n, labels={"zone": z}, allocatable={"cpu": 4000, "pods": 110})
                      for n, z in zones.items()],
        upsert_pods=[P(uid=f"e{i}", labels={"app": "q"}, node_name=n,
                       containers=(Container("c"),))
                     for i, n in enumerate(["n1", "n1", "n1", "n2"])],
    ))
    for when in ("DoNotSchedule", "ScheduleAnyway"):
        p = P(uid="p", labels={"app": "x"}, containers=(Container("c"),),
              topology_spread_constraints=(TSC(1, "zone", when, LS()),))
        ex = c.explain(p)
        assert all(n.feasible for n in ex.nodes), when
        if when == "ScheduleAnyway":
            assert {n.scores["PodTopologySpread"][0] for n in ex.nodes} == {100}
    engine.close()


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
