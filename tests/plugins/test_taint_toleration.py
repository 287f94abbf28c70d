"""TaintToleration: table tests after kube's taint_toleration_test.go, plus a scalar cross-check."""

from __future__ import annotations

import random

import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework import Code
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Node, Pod, Taint, Toleration
from schedsvc.plugins import taint_toleration
from schedsvc.plugins.taint_toleration import ERR_REASON_NOT_MATCH, TaintToleration
from tests.builders import node_with_taints, pod_with_tolerations, rows_of, snapshot_of


def scores(pod: Pod, nodes: list[Node]) -> list[int]:
    snap = snapshot_of(nodes)
    pl = TaintToleration()
    info = pod_info(pod)
    rows = rows_of(snap, [n.name for n in nodes])
    state = pl.pre_score(info, snap, rows)
    return [int(s) for s in pl.normalize(state, info, pl.score(state, info, snap, rows))]


PNS = "PreferNoSchedule"

SCORE_CASES = [
    pytest.param(
        pod_with_tolerations(Toleration("foo", "Equal", "bar", PNS)),
        [
            node_with_taints("nodeA", [Taint("foo", "bar", PNS)]),
            node_with_taints("nodeB", [Taint("foo", "blah", PNS)]),
        ],
        [100, 0],
        id="a node whose taints the pod tolerates scores higher than one with intolerable taints",
    ),
    pytest.param(
        pod_with_tolerations(
            Toleration("cpu-type", "Equal", "arm64", PNS),
            Toleration("disk-type", "Equal", "ssd", PNS),
        ),
        [
            node_with_taints("nodeA", []),
            node_with_taints("nodeB", [Taint("cpu-type", "arm64", PNS)]),
            node_with_taints(
                "nodeC", [Taint("cpu-type", "arm64", PNS), Taint("disk-type", "ssd", PNS)]
            ),
        ],
        [100, 100, 100],
        id="nodes whose taints are all tolerated score the same however many taints they have",
    ),
    pytest.param(
        pod_with_tolerations(Toleration("foo", "Equal", "bar", PNS)),
        [
            node_with_taints("nodeA", []),
            node_with_taints("nodeB", [Taint("cpu-type", "arm64", PNS)]),
            node_with_taints(
                "nodeC", [Taint("cpu-type", "arm64", PNS), Taint("disk-type", "ssd", PNS)]
            ),
        ],
        [100, 50, 0],
        id="the more intolerable taints a node has the lower its score",
    ),
    pytest.param(
        pod_with_tolerations(
            Toleration("cpu-type", "Equal", "arm64", "NoSchedule"),
            Toleration("disk-type", "Equal", "ssd", "NoSchedule"),
        ),
        [
            node_with_taints("nodeA", []),
            node_with_taints("nodeB", [Taint("cpu-type", "arm64", "NoSchedule")]),
            node_with_taints(
                "nodeC", [Taint("cpu-type", "arm64", PNS), Taint("disk-type", "ssd", PNS)]
            ),
        ],
        [100, 100, 0],
        id="only PreferNoSchedule taints and tolerations count for the score",
    ),
    pytest.param(
        pod_with_tolerations(),
        [
            node_with_taints("nodeA", []),
            node_with_taints("nodeB", [Taint("cpu-type", "arm64", PNS)]),
        ],
        [100, 0],
        id="a pod without tolerations prefers the node without taints",
    ),
    pytest.param(
        pod_with_tolerations(Toleration("cpu-type", "Exists", "", "")),
        [
            node_with_taints("nodeA", []),
            node_with_taints("nodeB", [Taint("cpu-type", "arm64", PNS)]),
        ],
        [100, 100],
        id="a toleration with an empty effect tolerates PreferNoSchedule taints too",
    ),
    pytest.param(
        pod_with_tolerations(Toleration("node.kubernetes.io/sla", "Gt", "950", PNS)),
        [
            node_with_taints("nodeA", [Taint("node.kubernetes.io/sla", "800", PNS)]),
            node_with_taints("nodeB", [Taint("node.kubernetes.io/sla", "999", PNS)]),
        ],
        [0, 0],
        id="the Gt operator is gated off in 1.35 so both taints stay intolerable and tie",
    ),
]


@pytest.mark.parametrize("pod,nodes,want", SCORE_CASES)
def test_score(pod: Pod, nodes: list[Node], want: list[int]) -> None:
    assert scores(pod, nodes) == want


FILTER_CASES = [
    pytest.param(
        [],
        [Taint("dedicated", "user1", "NoSchedule")],
        False,
        id="a pod without tolerations cannot land on a node with a NoSchedule taint",
    ),
    pytest.param(
        [Toleration("dedicated", "Equal", "user1", "NoSchedule")],
        [Taint("dedicated", "user1", "NoSchedule")],
        True,
        id="a pod tolerating the dedicated user1 taint fits",
    ),
    pytest.param(
        [Toleration("dedicated", "Equal", "user2", "NoSchedule")],
        [Taint("dedicated", "user1", "NoSchedule")],
        False,
        id="a toleration for another value does not tolerate the taint",
    ),
    pytest.param(
        [Toleration("foo", "Exists", "", "NoSchedule")],
        [Taint("foo", "bar", "NoSchedule")],
        True,
        id="an Exists toleration tolerates any value of its key",
    ),
    pytest.param(
        [
            Toleration("dedicated", "Equal", "user2", "NoSchedule"),
            Toleration("foo", "Exists", "", "NoSchedule"),
        ],
        [Taint("dedicated", "user2", "NoSchedule"), Taint("foo", "bar", "NoSchedule")],
        True,
        id="every taint tolerated by some toleration fits",
    ),
    pytest.param(
        [Toleration("foo", "Equal", "bar", PNS)],
        [Taint("foo", "bar", "NoSchedule")],
        False,
        id="a toleration with a different non-empty effect does not tolerate the taint",
    ),
    pytest.param(
        [Toleration("foo", "Equal", "bar", "")],
        [Taint("foo", "bar", "NoSchedule")],
        True,
        id="a toleration with an empty effect tolerates a NoSchedule taint",
    ),
    pytest.param(
        [Toleration("dedicated", "Equal", "user2", "NoSchedule")],
        [Taint("dedicated", "user1", PNS)],
        True,
        id="a PreferNoSchedule taint never filters",
    ),
    pytest.param(
        [],
        [Taint("maint", "", "NoExecute")],
        False,
        id="a NoExecute taint filters like NoSchedule",
    ),
    pytest.param(
        [Toleration("", "Exists", "", "")],
        [Taint("maint", "", "NoExecute")],
        True,
        id="an empty key with Exists tolerates everything",
    ),
    pytest.param(
        [Toleration("k", "Gt", "1", "NoSchedule")],
        [Taint("k", "5", "NoSchedule")],
        False,
        id="a comparison operator is gated off and tolerates nothing",
    ),
]


@pytest.mark.parametrize("tolerations,taints,fits", FILTER_CASES)
def test_filter(tolerations: list[Toleration], taints: list[Taint], fits: bool) -> None:
    snap = snapshot_of([node_with_taints("nodeA", taints), node_with_taints("plain", [])])
    pl = TaintToleration()
    res = pl.filter(
        None, pod_info(pod_with_tolerations(*tolerations)), snap, rows_of(snap, ["nodeA", "plain"])
    )
    assert res.feasible.tolist() == [fits, True]
    if not fits:
        assert res.code == Code.UNRESOLVABLE
        assert [r for r, m in res.reasons if m[0]] == [ERR_REASON_NOT_MATCH]


def test_sign_ignores_toleration_order_and_default_operator() -> None:
    pl = TaintToleration()
    a = pod_info(pod_with_tolerations(Toleration("a", "", "x"), Toleration("b", "Exists")))
    b = pod_info(pod_with_tolerations(Toleration("b", "Exists"), Toleration("a", "Equal", "x")))
    c = pod_info(pod_with_tolerations(Toleration("a", "Equal", "y")))
    assert pl.sign(a) == pl.sign(b) != pl.sign(c)


def test_new_rejects_arguments() -> None:
    assert isinstance(taint_toleration.new(None), TaintToleration)
    with pytest.raises(ConfigError):
        taint_toleration.new({"foo": 1})


# ---- scalar reference ----------------------------------------------------------------------
def ref_tolerates(tol: Toleration, taint: Taint) -> bool:
    """The rule as the API reference states it (core/v1 Toleration): keys match or the
    toleration's is empty, effects match or the toleration's is empty, and the operator holds:
    Exists for any value, Equal (the default) for an equal value; Lt and Gt are gated off in
    1.35 (TaintTolerationComparisonOperators), and no other operator matches."""
    holds = {
        "Exists": True,
        "Equal": tol.value == taint.value,
        "": tol.value == taint.value,
    }
    return (
        tol.key in ("", taint.key)
        and tol.effect in ("", taint.effect)
        and holds.get(tol.operator, False)
    )


def ref_filter(pod: Pod, node: Node) -> bool:
    return all(
        any(ref_tolerates(t, taint) for t in pod.tolerations)
        for taint in node.taints
        if taint.effect in ("NoSchedule", "NoExecute")
    )


def ref_raw_score(pod: Pod, node: Node) -> int:
    tols = [t for t in pod.tolerations if t.effect in ("", PNS)]
    return sum(
        1
        for taint in node.taints
        if taint.effect == PNS and not any(ref_tolerates(t, taint) for t in tols)
    )


def ref_normalize_reverse(raw: list[int]) -> list[int]:
    m = max(raw)
    if m == 0:
        return [100] * len(raw)
    return [100 - 100 * s // m for s in raw]


def test_vectorized_matches_scalar_reference_on_random_clusters() -> None:
    rng = random.Random(7)
    keys, values = ["a", "b", "c"], ["x", "y", ""]
    effects = ["NoSchedule", "NoExecute", PNS]
    pl = TaintToleration()
    for _ in range(200):
        nodes = []
        for i in range(rng.randint(1, 12)):
            ts = {
                Taint(rng.choice(keys), rng.choice(values), rng.choice(effects))
                for _ in range(rng.randint(0, 3))
            }
            nodes.append(node_with_taints(f"n{i}", sorted(ts, key=repr)))
        tols = [
            Toleration(
                rng.choice(keys + [""]),
                rng.choice(["Equal", "Exists", ""]),
                rng.choice(values),
                rng.choice(effects + [""]),
            )
            for _ in range(rng.randint(0, 3))
        ]
        pod = pod_with_tolerations(*tols)
        snap = snapshot_of(nodes)
        info = pod_info(pod)
        rows = rows_of(snap, [n.name for n in nodes])
        res = pl.filter(None, info, snap, rows)
        assert res.feasible.tolist() == [ref_filter(pod, n) for n in nodes]
        raw = pl.score(pl.pre_score(info, snap, rows), info, snap, rows)
        want_raw = [ref_raw_score(pod, n) for n in nodes]
        assert raw.tolist() == want_raw
        assert pl.normalize(None, info, raw).tolist() == ref_normalize_reverse(want_raw)
