"""NodeUnschedulable: table tests after kube's node_unschedulable_test.go, plus a cross-check."""

from __future__ import annotations

import random

import numpy as np
import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework import Code
from schedsvc.framework.podinfo import pod_info
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Node, Pod, Toleration
from schedsvc.plugins import node_unschedulable
from schedsvc.plugins.node_unschedulable import ERR_REASON_UNSCHEDULABLE
from tests.builders import pod_with_tolerations

UNSCHEDULABLE_KEY = "node.kubernetes.io/unschedulable"


def filter_one(pod: Pod, unschedulable: bool) -> tuple[bool, list[str], str]:
    snap = Snapshot()
    snap.upsert_node(Node(name="n", unschedulable=unschedulable))
    rows = np.array([snap.index["n"]], dtype=np.intp)
    res = node_unschedulable.new(None).filter(None, pod_info(pod), snap, rows)
    return bool(res.feasible[0]), [r for r, m in res.reasons if m[0]], res.code


CASES = [
    pytest.param(pod_with_tolerations(), False, True, id="a schedulable node accepts any pod"),
    pytest.param(
        pod_with_tolerations(), True, False, id="an unschedulable node rejects a plain pod"
    ),
    pytest.param(
        pod_with_tolerations(Toleration(UNSCHEDULABLE_KEY, "Exists", "", "NoSchedule")),
        True,
        True,
        id="a pod tolerating the unschedulable taint fits a cordoned node",
    ),
    pytest.param(
        pod_with_tolerations(Toleration("", "Exists")),
        True,
        True,
        id="a toleration of everything fits a cordoned node",
    ),
    pytest.param(
        pod_with_tolerations(Toleration(UNSCHEDULABLE_KEY, "Exists", "", "NoExecute")),
        True,
        False,
        id="a toleration for another effect does not tolerate the cordon",
    ),
    pytest.param(
        pod_with_tolerations(Toleration(UNSCHEDULABLE_KEY, "Equal", "x", "NoSchedule")),
        True,
        False,
        id="an Equal toleration with a value does not match the empty-valued cordon taint",
    ),
]


@pytest.mark.parametrize("pod,unschedulable,fits", CASES)
def test_filter(pod: Pod, unschedulable: bool, fits: bool) -> None:
    ok, reasons, code = filter_one(pod, unschedulable)
    assert ok is fits
    if not fits:
        assert reasons == [ERR_REASON_UNSCHEDULABLE]
        assert code == Code.UNRESOLVABLE


def test_sign_says_whether_the_pod_tolerates_the_cordon() -> None:
    pl = node_unschedulable.new(None)
    tolerant = pod_with_tolerations(Toleration(UNSCHEDULABLE_KEY, "Exists"))
    assert pl.sign(pod_info(tolerant)) != pl.sign(pod_info(pod_with_tolerations()))


def test_new_rejects_arguments() -> None:
    with pytest.raises(ConfigError):
        node_unschedulable.new({"x": 1})


def test_vectorized_matches_scalar_reference_on_random_clusters() -> None:
    rng = random.Random(1)
    pl = node_unschedulable.new(None)
    for _ in range(100):
        flags = [rng.random() < 0.4 for _ in range(rng.randint(1, 10))]
        snap = Snapshot()
        for i, f in enumerate(flags):
            snap.upsert_node(Node(name=f"n{i}", unschedulable=f))
        tolerant = rng.random() < 0.3
        pod = (
            pod_with_tolerations(Toleration(UNSCHEDULABLE_KEY, "Exists"))
            if tolerant
            else Pod(uid="p")
        )
        rows = np.array([snap.index[f"n{i}"] for i in range(len(flags))], dtype=np.intp)
        got = pl.filter(None, pod_info(pod), snap, rows).feasible.tolist()
        assert got == [tolerant or not f for f in flags]
