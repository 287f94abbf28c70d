"""VolumeBinding's capacity score, after kube v1.37.2's TestScore (scorer_test.go): per class
utilization through the shape's broken line, the mean over classes rounded half away from
zero; and the CSI-migration rewrite of an in-tree PV's node affinity (csi-translation-lib)."""

from __future__ import annotations

import numpy as np
import pytest

from schedsvc.model import NodeSelectorRequirement, NodeSelectorTerm
from schedsvc.plugins.volume_binding import PodVolumes
from schedsvc.plugins.volume_binding.matching_static import StaticMatch
from schedsvc.plugins.volume_binding.migration import translated_affinity
from schedsvc.plugins.volume_binding.scorer import score_pod_volumes
from tests.builders.pv_claims import affinity, make_pv, make_pvc

DEFAULT = ((0, 100), (100, 0))  # the default shape, scaled
CUSTOM = ((50, 80, 100), (0, 30, 50))  # given already scaled


def _score(utilizations: tuple[int, ...], shape: tuple[tuple[int, ...], tuple[int, ...]]) -> int:
    """One node whose static bindings put `u` of 100 bytes used in class hdd, then ssd."""
    claims = tuple(make_pvc(f"c{i}", request=u) for i, u in enumerate(utilizations))
    pvs = [make_pv(f"pv{i}", cls, 100) for i, cls in zip(range(len(claims)), ("hdd", "ssd"),
                                                           strict=False)]
    chosen = np.arange(len(claims), dtype=np.int64).reshape(-1, 1)
    ones = np.ones(1, dtype=np.bool_)
    pv = PodVolumes(ones, ones, ones, ones,
                    static=StaticMatch(claims, pvs, chosen, ones))
    return int(score_pod_volumes(pv, shape)[0])


@pytest.mark.parametrize(("utilizations", "want"), [
    ((0,), 100), ((30,), 70), ((50,), 50), ((100,), 0),
    ((0, 0), 100), ((0, 30), 85), ((30, 30), 70), ((30, 60), 55), ((50, 50), 50),
    ((50, 100), 25), ((100, 100), 0),
], ids=lambda v: str(v))
def test_score_with_the_default_shape(utilizations: tuple[int, ...], want: int) -> None:
    assert _score(utilizations, DEFAULT) == want


@pytest.mark.parametrize(("utilizations", "want"), [
    ((0, 0), 0), ((0, 30), 0), ((30, 30), 0), ((30, 60), 5), ((50, 100), 25), ((90, 90), 40),
    ((100, 100), 50),
], ids=lambda v: str(v))
def test_score_with_a_custom_shape(utilizations: tuple[int, ...], want: int) -> None:
    assert _score(utilizations, CUSTOM) == want


GKE = "topology.gke.io/zone"


def _req(key: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key, "In", values)


def test_a_ga_zone_in_the_affinity_is_renamed_to_the_csi_key() -> None:
    pv = make_pv("p", node_affinity=affinity({"topology.kubernetes.io/zone": ["z1", "z2"]}))
    assert translated_affinity(pv, GKE) == (NodeSelectorTerm((_req(GKE, "z1", "z2"),)),)


def test_a_regional_zone_label_is_added_to_every_term_and_the_beta_region_renamed() -> None:
    terms = (NodeSelectorTerm((_req("failure-domain.beta.kubernetes.io/region", "r"),)),
             NodeSelectorTerm((_req("x", "y"),)))
    pv = make_pv("p", node_affinity=terms,
                 labels={"failure-domain.beta.kubernetes.io/zone": "b__a__ a"})
    assert translated_affinity(pv, GKE) == (
        NodeSelectorTerm((_req("topology.kubernetes.io/region", "r"), _req(GKE, "a", "b"))),
        NodeSelectorTerm((_req("x", "y"), _req(GKE, "a", "b"))),
    )


def test_no_affinity_and_no_zone_label_stays_without_affinity() -> None:
    assert translated_affinity(make_pv("p"), GKE) is None
    with_label = make_pv("p", labels={"topology.kubernetes.io/zone": "z"})
    assert translated_affinity(with_label, GKE) == (NodeSelectorTerm((_req(GKE, "z"),)),)
