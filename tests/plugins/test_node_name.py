"""NodeName: table tests after kube's node_name_test.go, plus a scalar cross-check."""

from __future__ import annotations

import random

import numpy as np
import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework import Code
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Node, Pod
from schedsvc.plugins import node_name
from schedsvc.plugins.node_name import ERR_REASON
from tests import builders

CASES = [
    pytest.param("", "foo", True, id="a pod without a node name fits any node"),
    pytest.param("foo", "foo", True, id="a pod fits the node it names"),
    pytest.param("bar", "foo", False, id="a pod does not fit a node it does not name"),
    pytest.param("gone", "foo", False, id="naming a node that does not exist fits nowhere"),
]


@pytest.mark.parametrize("wanted,node,fits", CASES)
def test_filter(wanted: str, node: str, fits: bool) -> None:
    snap = builders.snapshot_of([Node(name=node), Node(name="other")])
    rows = np.array([snap.index[node]], dtype=np.intp)
    res = node_name.new(None).filter(None, pod_info(Pod(uid="p", node_name=wanted)), snap, rows)
    assert res.feasible.tolist() == [fits]
    if not fits:
        assert res.code == Code.UNRESOLVABLE
        assert [r for r, m in res.reasons if m[0]] == [ERR_REASON]


def test_sign_is_the_node_name() -> None:
    pl = node_name.new(None)
    assert pl.sign(pod_info(Pod(uid="a", node_name="x"))) == b"x"
    assert pl.sign(pod_info(Pod(uid="a"))) != pl.sign(pod_info(Pod(uid="a", node_name="x")))


def test_new_rejects_arguments() -> None:
    with pytest.raises(ConfigError):
        node_name.new({"x": 1})


def test_vectorized_matches_scalar_reference_on_random_clusters() -> None:
    rng = random.Random(5)
    pl = node_name.new(None)
    for _ in range(100):
        names = [f"n{i}" for i in range(rng.randint(1, 10))]
        snap = builders.snapshot_of(Node(name=n) for n in names)
        if rng.random() < 0.3:  # a freed row reused by a later node
            snap.remove_node(names.pop(0))
            names.append("late")
            snap.upsert_node(Node(name="late"))
        wanted = rng.choice(names + ["", "nope"])
        rows = np.array([snap.index[n] for n in names], dtype=np.intp)
        got = pl.filter(None, pod_info(Pod(uid="p", node_name=wanted)), snap, rows).feasible
        assert got.tolist() == [not wanted or wanted == n for n in names]
