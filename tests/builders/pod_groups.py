"""Gang scheduling's objects (issue 28): scheduling.k8s.io/v1beta1 PodGroups and Workloads as
schedsvc.v1 messages and as `kubectl get -o json` prints them, and a configuration with the
GenericWorkload gate on."""

from __future__ import annotations

import copy
from typing import Any

from schedsvc.config import SchedulerConfig, default_config
from schedsvc.framework.feature import Features
from schedsvc.v1 import schedule_pb2 as pb

__all__ = [
    "KUBE_POD_GROUP",
    "KUBE_WORKLOAD",
    "GANG_FEATURES",
    "gang_config",
    "kube_pod_group",
    "kube_workload",
    "pb_basic_group",
    "pb_gang",
    "pb_member",
    "pb_template",
    "pb_workload",
]


GANG_FEATURES = Features(gates=(("GenericWorkload", True),))  # v1.37.2 with the gate on


def gang_config() -> SchedulerConfig:
    """kube's default profile with --feature-gates GenericWorkload=true."""
    return default_config(features=GANG_FEATURES)


def pb_gang(name: str, min_count: int, namespace: str = "default", **spec: Any) -> pb.PodGroup:
    """A PodGroup with a gang policy (PodGroupSpec keywords in `spec`)."""
    return pb.PodGroup(
        name=name, namespace=namespace, uid=f"uid-{name}",
        spec=pb.PodGroupSpec(
            scheduling_policy=pb.PodGroupSchedulingPolicy(
                gang=pb.GangSchedulingPolicy(min_count=min_count)
            ),
            **spec,
        ),
    )


def pb_basic_group(name: str, namespace: str = "default", **spec: Any) -> pb.PodGroup:
    return pb.PodGroup(
        name=name, namespace=namespace, uid=f"uid-{name}",
        spec=pb.PodGroupSpec(
            scheduling_policy=pb.PodGroupSchedulingPolicy(basic=pb.BasicSchedulingPolicy()),
            **spec,
        ),
    )


def pb_member(uid: str, group: str, cpu: str = "1", namespace: str = "default",
              **fields: Any) -> pb.Pod:
    """A pending pod of PodGroup `group` (spec.schedulingGroup.podGroupName), named as its uid."""
    return pb.Pod(
        uid=uid, name=uid, namespace=namespace,
        containers=[pb.Container(name="c", requests={"cpu": cpu})],
        scheduling_group=pb.PodSchedulingGroup(pod_group_name=group), **fields,
    )


def pb_template(name: str, min_count: int | None = None, **fields: Any) -> pb.PodGroupTemplate:
    """A gang template with `min_count`, else a basic one."""
    policy = (
        pb.PodGroupSchedulingPolicy(gang=pb.GangSchedulingPolicy(min_count=min_count))
        if min_count is not None
        else pb.PodGroupSchedulingPolicy(basic=pb.BasicSchedulingPolicy())
    )
    return pb.PodGroupTemplate(name=name, scheduling_policy=policy, **fields)


def pb_workload(name: str, *templates: pb.PodGroupTemplate, **fields: Any) -> pb.Workload:
    return pb.Workload(
        name=name, namespace="default", uid=f"uid-{name}",
        spec=pb.WorkloadSpec(pod_group_templates=list(templates)), **fields,
    )


# Written by hand from k8s.io/api@v0.37.2 scheduling/v1beta1/types.go, as kube v1.37's API
# server returns them: a Job's gang of 4 with its condition after a failed cycle.
KUBE_POD_GROUP: dict[str, Any] = {
    "apiVersion": "scheduling.k8s.io/v1beta1",
    "kind": "PodGroup",
    "metadata": {
        "creationTimestamp": "2026-11-20T09:14:07Z",
        "generation": 2,
        "name": "trainer-workers-0",
        "namespace": "ml",
        "resourceVersion": "48213",
        "uid": "7f1c3a52-0d9e-4c41-9b7a-2f4c8e1d6a90",
        "ownerReferences": [{
            "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "name": "trainer",
            "uid": "0b5c9e0e-64d7-4a43-8f0c-3f1c2a7d9e11", "controller": True,
        }],
    },
    "spec": {
        "workloadRef": {"workloadName": "trainer", "templateName": "workers"},
        "schedulingPolicy": {"gang": {"minCount": 4}},
        "disruptionMode": {"all": {}},
        "priorityClassName": "batch-high",
        "priority": 1000,
    },
    "status": {
        "conditions": [{
            "type": "PodGroupInitiallyScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "pod group is unschedulable, minCount (4) cannot be satisfied: "
                       "0 scheduled, 2 remaining",
            "observedGeneration": 2,
            "lastTransitionTime": "2026-11-20T09:14:09Z",
        }],
    },
}

KUBE_WORKLOAD: dict[str, Any] = {
    "apiVersion": "scheduling.k8s.io/v1beta1",
    "kind": "Workload",
    "metadata": {
        "creationTimestamp": "2026-11-20T09:14:06Z",
        "generation": 1,
        "name": "trainer",
        "namespace": "ml",
        "uid": "0b5c9e0e-64d7-4a43-8f0c-3f1c2a7d9e11",
    },
    "spec": {
        "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "trainer"},
        "podGroupTemplates": [
            {"name": "driver", "schedulingPolicy": {"basic": {}},
             "priorityClassName": "batch-high", "priority": 1000},
            {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}},
             "disruptionMode": {"all": {}}, "priorityClassName": "batch-high",
             "priority": 1000},
        ],
    },
}


def kube_pod_group(**spec: Any) -> dict[str, Any]:
    """KUBE_POD_GROUP with `spec` fields set (a deep copy)."""
    out = copy.deepcopy(KUBE_POD_GROUP)
    out["spec"].update(spec)
    return out


def kube_workload(**spec: Any) -> dict[str, Any]:
    out = copy.deepcopy(KUBE_WORKLOAD)
    out["spec"].update(spec)
    return out
