"""What the PodTopologySpread test modules share: reason constants and selectors, constraint,
pod and cluster builders, the plugin's filter/score drivers and the default-args plugin."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import (
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    TopologySpreadConstraint,
    frozen_map,
)
from schedsvc.plugins import pod_topology_spread as pts
from tests import builders

HOST = "kubernetes.io/hostname"
ZONE = "zone"
SKEW = pts.ERR_REASON_CONSTRAINTS_NOT_MATCH
MISSING = pts.ERR_REASON_NODE_LABEL_NOT_MATCH

FOO = LabelSelector(match_expressions=(LabelSelectorRequirement("foo", "Exists"),))
BAR = LabelSelector(match_expressions=(LabelSelectorRequirement("bar", "Exists"),))


# ---- builders --------------------------------------------------------------------------------

def spread(
    max_skew: int,
    key: str,
    when: str = "DoNotSchedule",
    selector: LabelSelector | None = FOO,
    **kw: Any,
) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(
        max_skew=max_skew, topology_key=key, when_unsatisfiable=when, label_selector=selector, **kw
    )


def soft(max_skew: int, key: str, selector: LabelSelector | None = FOO) -> TopologySpreadConstraint:
    return spread(max_skew, key, "ScheduleAnyway", selector)


def existing(node_name: str, n: int = 1, namespace: str = "default", **labels: str) -> list[Pod]:
    return [
        Pod(
            uid=f"{node_name}-{namespace}-{sorted(labels.items())}-{i}",
            namespace=namespace,
            labels=frozen_map(labels),
        )
        for i in range(n)
    ]


def foo_pods(spec: Mapping[str, int]) -> list[tuple[str, Pod]]:
    return [(n, p) for n, k in spec.items() for p in existing(n, k, foo="")]


def cluster(nodes: Sequence[Node], pods: Sequence[tuple[str, Pod]] = ()) -> Snapshot:
    """kube's table order: (node name, pod) pairs; a small capacity so the columns grow."""
    return builders.snapshot_of(nodes, [(p, name) for name, p in pods], capacity=4)


def run_filter(
    plugin: pts.PodTopologySpread, pod: Pod, snap: Snapshot
) -> dict[str, list[str]] | None:
    """Reasons per node name ([] = feasible); None when PreFilter says Skip."""
    out = builders.run_filter(plugin, pod, snap)
    if out is None:
        return None
    return dict(zip(snap.names(snap.order), out.reasons, strict=True))


def run_score(
    plugin: pts.PodTopologySpread, pod: Pod, snap: Snapshot, feasible: Sequence[str]
) -> list[int] | None:
    return builders.run_score(plugin, pod, snap, builders.rows_of(snap, feasible))


DEFAULT = pts.new(None)
