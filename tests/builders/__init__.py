"""The one place test builders live: nodes, pods, clusters and requests, as domain objects
and as schedsvc.v1 messages (kube's testing/wrappers.go counterpart). Test modules build with
these and define none of their own; tests/test_layout.py checks it."""

from __future__ import annotations

from tests.builders.clusters import cluster_of
from tests.builders.domain import (
    GiB,
    MiB,
    container,
    make_node,
    make_pod,
    node,
    node_with_labels,
    node_with_taints,
    pod,
    pod_requesting,
    pod_with_containers,
    pod_with_tolerations,
    resource_name,
)
from tests.builders.group_domain import env_of, gang_cluster, group, member, sized
from tests.builders.messages import pb_node, pb_pod, replace_nodes
from tests.builders.plugin_pods import (
    Port,
    host_node,
    node_with_images,
    pod_with_affinity,
    pod_with_images,
    pod_with_node_affinity,
    pod_with_ports,
    pod_with_spread,
    zone_node,
)
from tests.builders.snapshots import Filtered, rows_of, run_filter, run_score, snapshot_of

__all__ = [
    "GiB",
    "MiB",
    "node",
    "pod",
    "make_pod",
    "resource_name",
    "make_node",
    "container",
    "pod_with_containers",
    "pod_requesting",
    "node_with_labels",
    "node_with_taints",
    "pod_with_tolerations",
    "Port",
    "pod_with_images",
    "node_with_images",
    "pod_with_ports",
    "pod_with_node_affinity",
    "pod_with_affinity",
    "pod_with_spread",
    "host_node",
    "zone_node",
    "cluster_of",
    "pb_node",
    "pb_pod",
    "replace_nodes",
    "snapshot_of",
    "rows_of",
    "Filtered",
    "run_filter",
    "run_score",
    "gang_cluster",
    "group",
    "member",
    "sized",
    "env_of",
]
