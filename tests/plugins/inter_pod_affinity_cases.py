"""What the InterPodAffinity test modules share: reason constants, the small snapshot, term and
selector builders, the plugin's filter/score drivers and the node sets the tables are laid on."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import (
    LabelSelector,
    LabelSelectorRequirement,
    Pod,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)
from schedsvc.plugins import inter_pod_affinity as ipa
from tests import builders
from tests.builders import node_with_labels, snapshot_of

snapshot = functools.partial(snapshot_of, capacity=4)  # small: the columns grow

AFF = ipa.ERR_REASON_AFFINITY_RULES_NOT_MATCH
ANTI = ipa.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH
EXISTING = ipa.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
ZONE = "zone"
HOST = "hostname"


# ---- builders --------------------------------------------------------------------------------

def selector(
    match_labels: Mapping[str, str] | None = None, **exprs: Sequence[str]
) -> LabelSelector:
    """`selector({"app": "a"}, security_In=["S1"])`: matchLabels plus `<key>_<Op>=values`."""
    reqs = []
    for spec, values in exprs.items():
        key, op = spec.rsplit("_", 1)
        reqs.append(LabelSelectorRequirement(key, op, tuple(values)))
    return LabelSelector(
        match_labels=tuple(sorted((match_labels or {}).items())), match_expressions=tuple(reqs)
    )


def term(
    sel: LabelSelector | None,
    key: str = ZONE,
    namespaces: Sequence[str] = (),
    ns_selector: LabelSelector | None = None,
    match_label_keys: Sequence[str] = (),
    mismatch_label_keys: Sequence[str] = (),
) -> PodAffinityTerm:
    return PodAffinityTerm(
        topology_key=key,
        label_selector=sel,
        namespaces=tuple(namespaces),
        namespace_selector=ns_selector,
        match_label_keys=tuple(match_label_keys),
        mismatch_label_keys=tuple(mismatch_label_keys),
    )


def weighted(weight: int, t: PodAffinityTerm) -> WeightedPodAffinityTerm:
    return WeightedPodAffinityTerm(weight=weight, term=t)


def remove_node(snap: Snapshot, name: str) -> None:
    """Snapshot.remove_node, removing the node's pods first (it looks their node up by name)."""
    row = snap.row_of(name)
    assert row is not None
    for uid in list(snap.pods_on_row[row]):
        snap.remove_pod(uid)
    snap.remove_node(name)


def run_filter(
    snap: Snapshot, pod: Pod, plugin: ipa.InterPodAffinity | None = None
) -> list[list[str]] | None:
    """Reasons per node in snapshot order ([] = feasible); None when PreFilter says Skip."""
    out = builders.run_filter(plugin or ipa.new(None), pod, snap)
    return None if out is None else out.reasons


def run_score(
    snap: Snapshot, pod: Pod, plugin: ipa.InterPodAffinity | None = None
) -> list[int] | None:
    """Normalized scores over every node (all feasible); None when PreScore says Skip."""
    return builders.run_score(plugin or ipa.new(None), pod, snap)


ZONES = [
    node_with_labels("n1", zone="z1", hostname="n1"),
    node_with_labels("n2", zone="z1", hostname="n2"),
    node_with_labels("n3", zone="z2", hostname="n3"),
    node_with_labels("n4", hostname="n4"),  # no zone label
]
A = {"app": "a"}
B = {"app": "b"}


REGIONS = [
    node_with_labels("m1", region="China", hostname="m1"),
    node_with_labels("m2", region="India", hostname="m2"),
    node_with_labels("m3", az="az1", hostname="m3"),
]
S1 = {"security": "S1"}
S2 = {"security": "S2"}
