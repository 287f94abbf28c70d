"""PodTopologySpread: its args (system and list defaulting, bad fields named), its sign for
batching, and the SelectorCounts index (adds, removes, growth, eviction, empty selectors).
Filter, score and the random reference are in test_pod_topology_spread_filter.py, _score.py
and _reference.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework.podinfo import pod_info
from schedsvc.framework.selector_counts import SelectorCounts
from schedsvc.model import (
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    TopologySpreadConstraint,
    frozen_map,
)
from schedsvc.plugins import pod_topology_spread as pts
from tests.builders import host_node, pod_with_spread
from tests.plugins.pod_topology_spread_cases import DEFAULT, FOO, HOST, cluster, soft


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
