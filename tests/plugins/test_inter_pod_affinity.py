"""InterPodAffinity: its args (kube v1 defaults, bad fields named), its sign for batching, and
the AffinityIndex following pods and nodes added and removed. Filter, score and the random
reference are in test_inter_pod_affinity_filter.py, _score.py and _reference.py.
"""

from __future__ import annotations

import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework.affinity_index import AffinityIndex
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Pod, frozen_map
from schedsvc.plugins import inter_pod_affinity as ipa
from tests.builders import pod_with_affinity
from tests.plugins.inter_pod_affinity_cases import (
    AFF,
    EXISTING,
    ZONES,
    A,
    B,
    remove_node,
    run_filter,
    selector,
    snapshot,
    term,
    weighted,
)


# ---- args and sign -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, field_name",
    [
        ({"hardPodAffinityWeight": 101}, "hardPodAffinityWeight"),
        ({"hardPodAffinityWeight": -1}, "hardPodAffinityWeight"),
        ({"hardPodAffinityWeight": "5"}, "hardPodAffinityWeight"),
        ({"ignorePreferredTermsOfExistingPods": "yes"}, "ignorePreferredTermsOfExistingPods"),
        ({"hardPodAffinityWieght": 5}, "hardPodAffinityWieght"),
    ],
    ids=[
        "a weight above 100 is refused",
        "a negative weight is refused",
        "a weight that is not an integer is refused",
        "a flag that is not a boolean is refused",
        "an unknown field is refused by name",
    ],
)
def test_bad_args_name_the_field(args: dict[str, object], field_name: str) -> None:
    with pytest.raises(ConfigError) as err:
        ipa.new(args)
    assert field_name in str(err.value)


def test_args_default_to_kube_v1_defaults() -> None:
    assert ipa.new(None).args == ipa.InterPodAffinityArgs(1, False)
    assert ipa.new({"hardPodAffinityWeight": 0}).args.hard_pod_affinity_weight == 0


def test_sign_refuses_pods_with_pod_affinity_and_keys_others_by_namespace_and_labels() -> None:
    plugin = ipa.new(None)
    with_terms = pod_with_affinity(A, preferred=[weighted(1, term(selector(A)))])
    assert plugin.sign(pod_info(with_terms)) is None
    a1 = plugin.sign(pod_info(pod_with_affinity({"app": "a", "x": "1"})))
    a2 = plugin.sign(pod_info(Pod(uid="z", labels=frozen_map({"x": "1", "app": "a"}))))
    other_ns = plugin.sign(pod_info(pod_with_affinity({"app": "a", "x": "1"}, namespace="o")))
    assert a1 is not None and a1 == a2
    assert a1 != other_ns
    assert a1 != plugin.sign(pod_info(pod_with_affinity(B)))


# ---- the index ------------------------------------------------------------------------------
def test_index_follows_pods_added_and_removed() -> None:
    snap = snapshot(ZONES)
    index = AffinityIndex.for_snapshot(snap)
    assert AffinityIndex.for_snapshot(snap) is index
    anti = pod_with_affinity(B, required_anti=[term(selector(A))])
    snap.add_pod(anti, "n3")
    assert len(index.required_anti) == 1
    assert run_filter(snap, pod_with_affinity(A)) == [[], [], [EXISTING], []]
    snap.remove_pod(anti.uid)
    assert len(index.required_anti) == 0
    assert run_filter(snap, pod_with_affinity(A)) is None
    # the selector cache made by the first query follows later pods
    pod = pod_with_affinity(required=[term(selector(A))])
    assert run_filter(snap, pod) == [[AFF]] * 4
    p = pod_with_affinity(A)
    snap.add_pod(p, "n1")
    assert run_filter(snap, pod) == [[], [], [AFF], [AFF]]
    remove_node(snap, "n1")
    assert run_filter(snap, pod) == [[AFF]] * 3
