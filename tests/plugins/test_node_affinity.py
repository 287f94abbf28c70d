"""NodeAffinity: its args (each bad field named), its sign for batching, and the parsing helpers
it shares with kube's apimachinery (Go int64 parsing, label key and value validation). Filter,
score and the scalar reference are in test_node_affinity_filter.py, _score.py and _reference.py.
"""

from __future__ import annotations

import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework.podinfo import pod_info
from schedsvc.names import is_qualified_name, is_valid_label_value
from schedsvc.plugins import node_affinity
from schedsvc.plugins.selectors import parse_go_int64
from tests.builders import pod_with_node_affinity as pod_with
from tests.plugins.node_affinity_cases import AFFINITY1, AFFINITY2, expr, term


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
