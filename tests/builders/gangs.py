"""Pod groups for tests: a configuration with GenericWorkload on, and PodGroups and member pods
as protobuf messages."""

from __future__ import annotations

from schedsvc.config import SchedulerConfig
from schedsvc.config.scheduler import parse_config
from schedsvc.framework.feature import EmulatedVersion, Features
from schedsvc.v1 import schedule_pb2 as pb

__all__ = ["GANG_FEATURES", "gang_config", "pb_pod_group", "pb_member", "pb_node"]

GANG_FEATURES = Features(EmulatedVersion.V1_37, (("GenericWorkload", True),))


def gang_config(raw: dict[str, object] | None = None) -> SchedulerConfig:
    """kube v1.37.2's configuration (or `raw`) with --feature-gates GenericWorkload=true."""
    return parse_config(raw or {}, features=GANG_FEATURES)


def pb_pod_group(name: str, min_count: int | None = None, priority: int | None = None,
                 namespace: str = "default") -> pb.PodGroup:
    """A gang of `min_count`, or a basic group when None."""
    spec = pb.PodGroupSpec()
    if min_count is None:
        spec.scheduling_policy.basic.SetInParent()
    else:
        spec.scheduling_policy.gang.min_count = min_count
    if priority is not None:
        spec.priority = priority
    return pb.PodGroup(name=name, namespace=namespace, spec=spec)


def pb_member(uid: str, group: str, cpu: str = "1", priority: int = 0,
              namespace: str = "default") -> pb.Pod:
    pod = pb.Pod(uid=uid, name=uid, namespace=namespace, priority=priority)
    pod.containers.add(name="c", requests={"cpu": cpu})
    pod.scheduling_group.pod_group_name = group
    return pod


def pb_node(name: str, cpu: str = "2") -> pb.Node:
    return pb.Node(
        name=name, labels={"kubernetes.io/hostname": name},
        allocatable={"cpu": cpu, "memory": "8Gi", "pods": "110"},
    )
