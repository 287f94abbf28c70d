"""What the proto -> domain conversion test modules share: one server's Converter and the proto
pod, node, affinity, spread and selector messages the cases are built from."""

from __future__ import annotations

from schedsvc.server.convert import Converter
from schedsvc.v1 import schedule_pb2 as pb

CONVERTER = Converter()  # one server's conversion and caches, shared by these tests


def a_pod(**kw: object) -> pb.Pod:
    base = pb.Pod(
        uid="u1",
        name="p1",
        labels={"app": "web"},
        containers=[pb.Container(name="c", requests={"cpu": "100m", "memory": "1Gi"})],
    )
    base.MergeFrom(pb.Pod(**kw))  # type: ignore[arg-type]
    return base


def a_node(**kw: object) -> pb.Node:
    base = pb.Node(name="n1", allocatable={"cpu": "4", "memory": "32Gi", "pods": "110"})
    base.MergeFrom(pb.Node(**kw))  # type: ignore[arg-type]
    return base


def node_req(op: str, *values: str, key: str = "zone") -> pb.NodeSelectorRequirement:
    return pb.NodeSelectorRequirement(key=key, operator=op, values=values)


def required_node_affinity(*reqs: pb.NodeSelectorRequirement) -> pb.Affinity:
    a = pb.Affinity()
    terms = a.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms
    terms.add().match_expressions.extend(reqs)
    return a


def field_affinity(req: pb.NodeSelectorRequirement) -> pb.Affinity:
    a = pb.Affinity()
    terms = a.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms
    terms.add().match_fields.append(req)
    return a


def anti_affinity_term(**kw: object) -> pb.Affinity:
    a = pb.Affinity()
    a.pod_anti_affinity.required_during_scheduling_ignored_during_execution.append(
        pb.PodAffinityTerm(**kw)  # type: ignore[arg-type]
    )
    return a


def spread(**kw: object) -> pb.TopologySpreadConstraint:
    base = pb.TopologySpreadConstraint(
        max_skew=1, topology_key="zone", when_unsatisfiable="DoNotSchedule"
    )
    base.MergeFrom(pb.TopologySpreadConstraint(**kw))  # type: ignore[arg-type]
    return base


def selector_expr(op: str, *values: str, key: str = "app") -> pb.LabelSelector:
    return pb.LabelSelector(
        match_expressions=[pb.LabelSelectorRequirement(key=key, operator=op, values=values)]
    )
