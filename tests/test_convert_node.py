"""proto -> domain conversion of nodes and namespaces: every validation rule names the field as
the request spells it, and both round-trip through tests/builders/to_pb.py.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from schedsvc.errors import InvalidArgument
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import to_pb
from tests.convert_cases import CONVERTER, a_node

NODE_CASES: list[tuple[str, Callable[[], pb.Node], str]] = [
    ("a node without name", lambda: pb.Node(allocatable={"cpu": "1"}), "upsert_nodes[0].name"),
    (
        "an unknown taint effect",
        lambda: a_node(taints=[pb.Taint(key="a", effect="NoSchedule"), pb.Taint(key="b")]),
        "upsert_nodes[0].taints[1].effect",
    ),
    (
        "a taint without key",
        lambda: a_node(taints=[pb.Taint(effect="NoSchedule")]),
        "upsert_nodes[0].taints[0].key",
    ),
    (
        "a duplicate taint",
        lambda: a_node(
            taints=[pb.Taint(key="a", effect="NoSchedule"), pb.Taint(key="a", effect="NoSchedule")]
        ),
        "upsert_nodes[0].taints[1]",
    ),
    (
        "bad allocatable",
        lambda: a_node(allocatable={"memory": "32 Gi"}),
        'upsert_nodes[0].allocatable["memory"]',
    ),
    ("a bad label", lambda: a_node(labels={"-x": "y"}), 'upsert_nodes[0].labels["-x"]'),
    (
        "a negative image size",
        lambda: a_node(images=[pb.ContainerImage(names=["a"], size_bytes=-1)]),
        "upsert_nodes[0].images[0].size_bytes",
    ),
]


@pytest.mark.parametrize(
    ("make", "field"), [c[1:] for c in NODE_CASES], ids=[c[0] for c in NODE_CASES]
)
def test_node_validation_names_the_field(make: Callable[[], pb.Node], field: str) -> None:
    with pytest.raises(InvalidArgument) as exc:
        CONVERTER.node_from_pb(make(), "upsert_nodes[0]")
    assert exc.value.field == field


def test_namespace_needs_a_name() -> None:
    with pytest.raises(InvalidArgument) as exc:
        CONVERTER.namespace_from_pb(pb.Namespace(), "upsert_namespaces[3]")
    assert exc.value.field == "upsert_namespaces[3].name"


def test_node_and_namespace_round_trip() -> None:
    node = CONVERTER.node_from_pb(
        a_node(
            labels={"zone": "a"},
            taints=[pb.Taint(key="k", value="v", effect="NoExecute")],
            unschedulable=True,
            images=[pb.ContainerImage(names=["a:1", "a@sha"], size_bytes=5_000_000)],
        ),
        "node",
    )
    assert node.allocatable == {"cpu": 4000, "memory": 32 * 2**30, "pods": 110}
    assert CONVERTER.node_from_pb(to_pb.node_to_pb(node), "node") == node
    ns = CONVERTER.namespace_from_pb(pb.Namespace(name="other", labels={"team": "a"}), "ns")
    assert CONVERTER.namespace_from_pb(to_pb.namespace_to_pb(ns), "ns") == ns
