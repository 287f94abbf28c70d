"""NodeAffinity: table tests after kube's node_affinity_test.go, plus a scalar cross-check."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework import SKIP, Code, PreFilterResult
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import (
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
)
from schedsvc.names import is_qualified_name, is_valid_label_value
from schedsvc.plugins import node_affinity
from schedsvc.plugins.node_affinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
)
from schedsvc.plugins.selectors import parse_go_int64
from tests.builders import node_with_labels, run_score, snapshot_of
from tests.builders import pod_with_node_affinity as pod_with

Req = NodeSelectorRequirement


def expr(key: str, op: str, *values: str) -> Req:
    return Req(key, op, tuple(values))


def term(*exprs: Req, fields: tuple[Req, ...] = ()) -> NodeSelectorTerm:
    return NodeSelectorTerm(match_expressions=tuple(exprs), match_fields=fields)


def name_in(*names: str) -> Req:
    return Req("metadata.name", "In", tuple(names))


def run_filter(pl: node_affinity.NodeAffinity, pod: Pod, nodes: list[Node]) -> list[list[str]]:
    """Reasons per node in input order ([] = fits), PreFilter narrowing included."""
    snap = snapshot_of(nodes)
    info = pod_info(pod)
    pre = pl.pre_filter(info, snap)
    if pre is SKIP:
        return [[] for _ in nodes]
    assert isinstance(pre, PreFilterResult)
    if pre.reject:
        return [list(pre.reject) for _ in nodes]
    rows = np.array([snap.index[n.name] for n in nodes], dtype=np.intp)
    res = pl.filter(pre.state, info, snap, rows)
    assert res.code == Code.UNRESOLVABLE
    out = []
    for i, n in enumerate(nodes):
        if pre.node_names is not None and n.name not in pre.node_names:
            out.append(["node(s) didn't satisfy plugin(s) [NodeAffinity]"])
        elif res.feasible[i]:
            out.append([])
        else:
            out.append([r for r, m in res.reasons if m[i]])
    return out


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


ADDED = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["foo"]}]}
            ]
        },
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 3,
                "preference": {
                    "matchExpressions": [{"key": "key", "operator": "In", "values": ["value"]}]
                },
            }
        ],
    }
}


def test_added_affinity_is_enforced_before_the_pods_own() -> None:
    pl = node_affinity.new(ADDED)
    nodes = [
        node_with_labels("n1", {"foo": "bar"}),
        node_with_labels("n2", {"zone": "foo"}),
        node_with_labels("n3", {"zone": "foo", "foo": "bar"}),
    ]
    assert run_filter(pl, pod_with(), nodes) == [[ERR_REASON_ENFORCED], [], []]
    assert run_filter(pl, pod_with({"foo": "bar"}), nodes) == [[ERR_REASON_ENFORCED], POD, []]


# ---- score ---------------------------------------------------------------------------------
def pref(weight: int, *exprs: Req) -> PreferredSchedulingTerm:
    return PreferredSchedulingTerm(weight, term(*exprs))


AFFINITY1 = (pref(2, expr("foo", "In", "bar")),)
AFFINITY2 = (
    pref(2, expr("foo", "In", "bar")),
    pref(4, expr("key", "In", "value")),
    pref(5, expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")),
)
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


# ---- args, sign, parsing helpers -------------------------------------------------------------
@pytest.mark.parametrize(
    "args,field",
    [
        ({"addedAfinity": {}}, "pluginConfig[NodeAffinity].args.addedAfinity"),
        (
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "zone", "operator": "Foo", "values": ["x"]}
                                ]
                            }
                        ]
                    }
                }
            },
            "pluginConfig[NodeAffinity].args.addedAffinity."
            "requiredDuringSchedulingIgnoredDuringExecution",
        ),
        (
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": "3", "preference": {}}
                    ]
                }
            },
            "pluginConfig[NodeAffinity].args.addedAffinity."
            "preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        ),
        (
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 3,
                            "preference": {
                                "matchExpressions": [
                                    {"key": "a", "operator": "Gt", "values": ["x"]}
                                ]
                            },
                        }
                    ]
                }
            },
            "pluginConfig[NodeAffinity].args.addedAffinity."
            "preferredDuringSchedulingIgnoredDuringExecution",
        ),
    ],
    ids=[
        "an unknown args key is refused",
        "an unparsable required added term is refused",
        "a weight that is not an integer is refused",
        "an unparsable preferred added term is refused",
    ],
)
def test_new_validates_args(args: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError) as exc:
        node_affinity.new(args)
    assert exc.value.field == field


def test_sign_covers_selector_and_both_affinities() -> None:
    pl = node_affinity.new(None)
    base = pl.sign(pod_info(pod_with({"a": "1"}, required=(term(expr("b", "Exists")),))))
    assert base == pl.sign(pod_info(pod_with({"a": "1"}, required=(term(expr("b", "Exists")),))))
    assert base != pl.sign(pod_info(pod_with({"a": "2"}, required=(term(expr("b", "Exists")),))))
    assert base != pl.sign(pod_info(pod_with({"a": "1"}, required=())))
    assert base != pl.sign(pod_info(pod_with({"a": "1"})))
    assert pl.sign(pod_info(pod_with(preferred=AFFINITY1))) != pl.sign(
        pod_info(pod_with(preferred=AFFINITY2))
    )


@pytest.mark.parametrize(
    "text,want",
    [
        ("42", 42),
        ("+7", 7),
        ("-0012", -12),
        ("9223372036854775807", 2**63 - 1),
        ("9223372036854775808", None),
        ("1_000", None),
        (" 1", None),
        ("", None),
        ("0x10", None),
    ],
)
def test_parse_go_int64_follows_strconv(text: str, want: int | None) -> None:
    assert parse_go_int64(text) == want


def test_label_key_and_value_validation() -> None:
    assert is_qualified_name("kubernetes.io/hostname")
    assert is_qualified_name("GPU")
    assert not is_qualified_name("/name")
    assert not is_qualified_name("a/b/c")
    assert not is_qualified_name("Example.com/x")  # the prefix is a lower-case DNS subdomain
    assert not is_qualified_name("x" * 64)
    assert is_valid_label_value("")
    assert is_valid_label_value("a-b_c.d")
    assert not is_valid_label_value("-5")
    assert not is_valid_label_value("a" * 64)


# ---- scalar reference ----------------------------------------------------------------------
INT_RE = re.compile(r"[+-]?[0-9]+")


def ref_int(s: str) -> int | None:
    if not INT_RE.fullmatch(s):
        return None
    v = int(s)
    return v if -(2**63) <= v < 2**63 else None


def ref_valid_value(v: str) -> bool:
    return (
        len(v) <= 63 and re.fullmatch(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", v) is not None
    )


def ref_term_parses(t: NodeSelectorTerm) -> bool:
    for r in t.match_expressions:
        if r.operator in ("In", "NotIn") and not r.values:
            return False
        if r.operator in ("Exists", "DoesNotExist") and r.values:
            return False
        if r.operator in ("Gt", "Lt") and (len(r.values) != 1 or ref_int(r.values[0]) is None):
            return False
        if r.operator not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
            return False
        if not all(ref_valid_value(v) for v in r.values):
            return False
    return all(f.operator in ("In", "NotIn") and len(f.values) == 1 for f in t.match_fields)


def ref_term(t: NodeSelectorTerm, node: Node) -> bool:
    if not t.match_expressions and not t.match_fields or not ref_term_parses(t):
        return False
    for r in t.match_expressions:
        has = r.key in node.labels
        v = node.labels.get(r.key)
        if r.operator == "In" and not (has and v in r.values):
            return False
        if r.operator == "NotIn" and has and v in r.values:
            return False
        if r.operator == "Exists" and not has:
            return False
        if r.operator == "DoesNotExist" and has:
            return False
        if r.operator in ("Gt", "Lt"):
            lv = ref_int(v) if v is not None else None
            rv = ref_int(r.values[0])
            assert rv is not None
            if lv is None or not (lv > rv if r.operator == "Gt" else lv < rv):
                return False
    for f in t.match_fields:
        actual = node.name if f.key == "metadata.name" else ""
        if (actual == f.values[0]) != (f.operator == "In"):
            return False
    return True


def ref_filter(pod: Pod, node: Node) -> bool:
    if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    na = pod.affinity.node_affinity if pod.affinity else None
    if na is None or na.required is None:
        return True
    return any(ref_term(t, node) for t in na.required)


def ref_raw_score(pod: Pod, node: Node) -> int:
    na = pod.affinity.node_affinity if pod.affinity else None
    if na is None:
        return 0
    return sum(p.weight for p in na.preferred if p.weight and ref_term(p.preference, node))


def random_req(rng: random.Random, names: list[str]) -> Req:
    keys, vals = ["a", "b", "c"], ["1", "2", "10", "x", "-3", ""]
    op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
    if op in ("Exists", "DoesNotExist"):
        values: tuple[str, ...] = () if rng.random() < 0.9 else ("1",)
    elif op in ("Gt", "Lt"):
        values = (rng.choice(["1", "2", "5", "x"]),)
    else:
        values = tuple(rng.sample(vals, rng.randint(0 if rng.random() < 0.1 else 1, 3)))
    return Req(rng.choice(keys), op, values)


def random_term(rng: random.Random, names: list[str]) -> NodeSelectorTerm:
    exprs = tuple(random_req(rng, names) for _ in range(rng.randint(0, 2)))
    fields: tuple[Req, ...] = ()
    if rng.random() < 0.3:
        key = "metadata.name" if rng.random() < 0.9 else "metadata.uid"
        fields = (Req(key, rng.choice(["In", "NotIn"]), (rng.choice(names + ["zz"]),)),)
    return NodeSelectorTerm(exprs, fields)


def test_vectorized_matches_scalar_reference_on_random_clusters() -> None:
    rng = random.Random(11)
    pl = node_affinity.new(None)
    for _ in range(300):
        nodes = []
        for i in range(rng.randint(1, 10)):
            labels = {
                k: rng.choice(["1", "2", "10", "x", "+4", "007"])
                for k in "abc"
                if rng.random() < 0.6
            }
            nodes.append(node_with_labels(f"n{i}", labels))
        names = [n.name for n in nodes]
        selector = {"a": rng.choice(["1", "2"])} if rng.random() < 0.2 else {}
        required = None
        if rng.random() < 0.8:
            required = tuple(random_term(rng, names) for _ in range(rng.randint(0, 3)))
        preferred = tuple(
            PreferredSchedulingTerm(rng.randint(0, 100), random_term(rng, names))
            for _ in range(rng.randint(0, 3))
        )
        pod = pod_with(selector, required, preferred)
        snap = snapshot_of(nodes)
        info = pod_info(pod)
        rows = np.array([snap.index[n] for n in names], dtype=np.intp)
        pre = pl.pre_filter(info, snap)
        state = pre.state if isinstance(pre, PreFilterResult) else None
        res = pl.filter(state, info, snap, rows)
        assert res.feasible.tolist() == [ref_filter(pod, n) for n in nodes]
        st = pl.pre_score(info, snap, rows)
        if st is SKIP:
            assert not preferred
            continue
        raw = pl.score(st, info, snap, rows)
        assert raw.tolist() == [ref_raw_score(pod, n) for n in nodes]
