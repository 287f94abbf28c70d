"""NodeAffinity PreFilter/Filter: table tests after kube's node_affinity_test.go (nodeSelector,
required terms, match fields), PreFilter narrowing to named nodes, and addedAffinity enforced
before the pod's own.
"""

from __future__ import annotations

import pytest

from schedsvc.framework import SKIP, Code, PreFilterResult
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Pod
from schedsvc.plugins import node_affinity
from schedsvc.plugins.node_affinity import ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD
from tests.builders import node_with_labels, snapshot_of
from tests.builders import pod_with_node_affinity as pod_with
from tests.plugins.node_affinity_cases import ADDED, Req, expr, name_in, run_filter, term

POD = [ERR_REASON_POD]
FILTER_CASES = [
    pytest.param(pod_with(), {"foo": "bar"}, [], id="a pod without selector or affinity fits"),
    pytest.param(
        pod_with({"foo": "bar"}), {}, POD, id="a nodeSelector does not match a node without labels"
    ),
    pytest.param(pod_with({"foo": "bar"}), {"foo": "bar"}, [], id="a matching nodeSelector fits"),
    pytest.param(
        pod_with({"foo": "bar", "baz": "blah"}),
        {"foo": "bar"},
        POD,
        id="every nodeSelector label must be on the node",
    ),
    pytest.param(
        pod_with(required=(term(expr("foo", "In", "value1", "value2")),)),
        {"foo": "bar"},
        POD,
        id="In with none of the node's value does not match",
    ),
    pytest.param(
        pod_with(required=(term(expr("kernel-version", "Gt", "0204")),)),
        {"kernel-version": "0206"},
        [],
        id="Gt compares integers parsed with leading zeros",
    ),
    pytest.param(
        pod_with(required=(term(expr("mem-type", "NotIn", "DDR", "DDR2")),)),
        {"mem-type": "DDR3"},
        [],
        id="NotIn matches a value outside the list",
    ),
    pytest.param(
        pod_with(required=(term(expr("mem-type", "NotIn", "DDR")),)),
        {},
        [],
        id="NotIn matches a node without the key",
    ),
    pytest.param(
        pod_with(required=(term(expr("GPU", "Exists")),)),
        {"GPU": "NVIDIA-GRID-K1"},
        [],
        id="Exists matches a node that has the key",
    ),
    pytest.param(
        pod_with(required=(term(expr("GPU", "DoesNotExist")),)),
        {"GPU": "NVIDIA-GRID-K1"},
        POD,
        id="DoesNotExist rejects a node that has the key",
    ),
    pytest.param(
        pod_with(required=(term(expr("n", "Gt", "5")),)),
        {"n": "abc"},
        POD,
        id="Gt rejects a node label that is not an integer",
    ),
    pytest.param(
        pod_with(required=(term(expr("n", "Lt", "-1")),)),
        {"n": "-5"},
        POD,
        id="a Gt or Lt operand that is not a valid label value makes the term unparsable",
    ),
    pytest.param(
        pod_with(required=(term(expr("n", "Lt", "10", "20")),)),
        {"n": "5"},
        POD,
        id="Lt with two values does not parse and matches nothing",
    ),
    pytest.param(
        pod_with(required=(term(expr("foo", "In", "invalid value: ___@#$%^")),)),
        {"foo": "bar"},
        POD,
        id="an invalid label value in a term matches nothing",
    ),
    pytest.param(
        pod_with(required=(term(expr("foo", "Equals", "bar")),)),
        {"foo": "bar"},
        POD,
        id="an unknown operator matches nothing",
    ),
    pytest.param(
        pod_with(required=()),
        {"foo": "bar"},
        POD,
        id="required node affinity with no terms matches nothing",
    ),
    pytest.param(
        pod_with(required=(term(),)),
        {"foo": "bar"},
        POD,
        id="an empty term matches nothing",
    ),
    pytest.param(
        pod_with(
            required=(
                term(expr("foo", "In", "nope")),
                term(expr("diffkey", "In", "wrong")),
                term(expr("foo", "In", "bar")),
            )
        ),
        {"foo": "bar"},
        [],
        id="terms are ORed",
    ),
    pytest.param(
        pod_with(required=(term(expr("foo", "Exists"), expr("foo", "In", "x")),)),
        {"foo": "bar"},
        POD,
        id="requirements in one term are ANDed",
    ),
    pytest.param(
        pod_with(required=(term(expr("foo", "In", "bar", "<bad>")), term(expr("foo", "Exists")))),
        {"foo": "bar"},
        [],
        id="an unparsable term does not stop another term from matching",
    ),
    pytest.param(
        pod_with({"foo": "bar"}, required=(term(expr("foo", "Exists")),)),
        {"foo": "baz"},
        POD,
        id="nodeSelector and required affinity must both match",
    ),
    pytest.param(
        pod_with(required=(term(fields=(Req("metadata.name", "NotIn", ("node_1",)),)),)),
        {},
        POD,
        id="matchFields NotIn on the node's own name rejects it",
    ),
    pytest.param(
        pod_with(required=(term(fields=(Req("metadata.name", "In", ("node_1", "node_2")),)),)),
        {},
        POD,
        id="matchFields In with two values does not parse",
    ),
    pytest.param(
        pod_with(required=(term(expr("foo", "In", "bar"), fields=(name_in("node_1"),)),)),
        {"foo": "bar"},
        [],
        id="matchFields and matchExpressions of one term are ANDed and both hold",
    ),
]


@pytest.mark.parametrize("pod,labels,want", FILTER_CASES)
def test_filter(pod: Pod, labels: dict[str, str], want: list[str]) -> None:
    pl = node_affinity.new(None)
    assert run_filter(pl, pod, [node_with_labels("node_1", labels)]) == [want]


def test_prefilter_narrows_to_named_nodes_and_reports_the_rest() -> None:
    pl = node_affinity.new(None)
    pod = pod_with(required=(term(fields=(name_in("node_1"),)), term(fields=(name_in("node_3"),))))
    nodes = [node_with_labels(f"node_{i}") for i in (1, 2, 3)]
    assert run_filter(pl, pod, nodes) == [
        [],
        ["node(s) didn't satisfy plugin(s) [NodeAffinity]"],
        [],
    ]


PREFILTER_CASES = [
    pytest.param(pod_with(), "skip", id="nothing to check is a Skip"),
    pytest.param(pod_with({"a": "b"}), None, id="a nodeSelector alone does not narrow the nodes"),
    pytest.param(
        pod_with(required=(term(fields=(name_in("node1"),)),)),
        {"node1"},
        id="one term naming a node narrows to it",
    ),
    pytest.param(
        pod_with(required=(term(fields=(name_in("node1"),)), term(fields=(name_in("node2"),)))),
        {"node1", "node2"},
        id="named nodes of several terms are united",
    ),
    pytest.param(
        pod_with(required=(term(fields=(name_in("node1"),)), term(expr("foo", "Exists")))),
        None,
        id="a term without a name requirement leaves every node eligible",
    ),
    pytest.param(
        pod_with(
            required=(
                term(
                    fields=(
                        Req("metadata.name", "In", ("node1", "node2")),
                        Req("metadata.name", "In", ("node2", "node3")),
                    )
                ),
            )
        ),
        {"node2"},
        id="name requirements within a term are intersected",
    ),
    pytest.param(
        pod_with(
            required=(term(fields=(name_in("node1"), name_in("node2"))), term(fields=(name_in(),)))
        ),
        "conflict",
        id="terms whose names cannot all hold reject the pod as conflicting",
    ),
    pytest.param(pod_with(required=()), None, id="required affinity without terms does not narrow"),
]


@pytest.mark.parametrize("pod,want", PREFILTER_CASES)
def test_prefilter(pod: Pod, want: object) -> None:
    pl = node_affinity.new(None)
    res = pl.pre_filter(pod_info(pod), snapshot_of([node_with_labels("node1")]))
    if want == "skip":
        assert res is SKIP
        return
    assert isinstance(res, PreFilterResult)
    if want == "conflict":
        assert res.reject == (ERR_REASON_CONFLICT,)
        assert res.reject_code == Code.UNRESOLVABLE
    else:
        assert not res.reject
        assert res.node_names == (frozenset(want) if want is not None else None)  # type: ignore[arg-type]


def test_added_affinity_is_enforced_before_the_pods_own() -> None:
    pl = node_affinity.new(ADDED)
    nodes = [
        node_with_labels("n1", {"foo": "bar"}),
        node_with_labels("n2", {"zone": "foo"}),
        node_with_labels("n3", {"zone": "foo", "foo": "bar"}),
    ]
    assert run_filter(pl, pod_with(), nodes) == [[ERR_REASON_ENFORCED], [], []]
    assert run_filter(pl, pod_with({"foo": "bar"}), nodes) == [[ERR_REASON_ENFORCED], POD, []]
