"""PodTopologySpread PreFilter/Filter: table tests after kube's filtering_test.go, the codes that
tell a missing label from too much skew, and the list defaults' hard constraints.
"""

from __future__ import annotations

import pytest

from schedsvc.framework import Code, PreFilterResult
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Node, Pod, Taint, Toleration, frozen_map
from schedsvc.plugins import pod_topology_spread as pts
from tests.builders import host_node, node_with_labels, pod_with_spread, zone_node
from tests.plugins.pod_topology_spread_cases import (
    DEFAULT,
    FOO,
    HOST,
    MISSING,
    SKEW,
    ZONE,
    cluster,
    existing,
    foo_pods,
    run_filter,
    soft,
    spread,
)

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
