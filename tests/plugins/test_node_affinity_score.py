"""NodeAffinity PreScore/Score: preferred terms' weights after kube's node_affinity_test.go, and
addedAffinity's preferred terms adding to the pod's.
"""

from __future__ import annotations

import pytest

from schedsvc.model import Pod
from schedsvc.plugins import node_affinity
from tests.builders import node_with_labels, run_score, snapshot_of
from tests.builders import pod_with_node_affinity as pod_with
from tests.plugins.node_affinity_cases import ADDED, AFFINITY1, AFFINITY2, expr, pref

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


def score_labels(
    pl: node_affinity.NodeAffinity, pod: Pod, labels: list[dict[str, str]]
) -> list[int] | None:
    nodes = [node_with_labels(f"m{i}", lab) for i, lab in enumerate(labels)]
    return run_score(pl, pod, snapshot_of(nodes))


SCORE_CASES = [
    pytest.param(pod_with(), [LABEL1, LABEL2, LABEL3], None, id="no preferred terms skip scoring"),
    pytest.param(
        pod_with(preferred=AFFINITY1),
        [LABEL4, LABEL2, LABEL3],
        [0, 0, 0],
        id="no node matches the preferred terms",
    ),
    pytest.param(
        pod_with(preferred=AFFINITY1),
        [LABEL1, LABEL2, LABEL3],
        [100, 0, 0],
        id="only the first node matches",
    ),
    pytest.param(
        pod_with(preferred=AFFINITY2),
        [LABEL1, LABEL5, LABEL2],
        # raw 2, 11, 4: 100*2/11 = 18, 100, 100*4/11 = 36
        [18, 100, 36],
        id="all nodes match with different weights",
    ),
    pytest.param(
        pod_with(preferred=(pref(0, expr("foo", "In", "bar")), pref(7))),
        [LABEL1, LABEL2],
        [0, 0],
        id="weight-zero and empty preferred terms count for nothing",
    ),
]


@pytest.mark.parametrize("pod,labels,want", SCORE_CASES)
def test_score(pod: Pod, labels: list[dict[str, str]], want: list[int] | None) -> None:
    assert score_labels(node_affinity.new(None), pod, labels) == want


def test_added_preferred_terms_add_to_the_pods() -> None:
    pl = node_affinity.new(ADDED)
    # raw: LABEL1 2 (pod), LABEL2 3 (added), LABEL5 5 -> 40, 60, 100
    want = [40, 60, 100]
    assert score_labels(pl, pod_with(preferred=AFFINITY1), [LABEL1, LABEL2, LABEL5]) == want
    # no pod preference: scoring still runs for the added terms
    assert score_labels(pl, pod_with(), [LABEL1, LABEL2]) == [0, 100]
