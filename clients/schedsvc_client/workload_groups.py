"""Pod groups in workload files (issue 28): `createPods` with `podGroups` stamps its pods into
PodGroups of `size` consecutive pods, as a Job controller creates a gang's pods together::

    - opcode: createPods
      countParam: $pods
      podGroups: {size: 8, minCount: 8}      # a gang; {size: 8, policy: basic} for basic
      podTemplate: {...}

Pod i of op k names PodGroup `op<k>-g<i // size>` (spec.schedulingGroup.podGroupName); the
driver sends the op's PodGroups (scheduling.k8s.io/v1beta1: a gang's minCount, or basic)
before its pods, and cuts its Schedule requests at group boundaries: a group is one pod group
cycle only when all its members come in one request. They are scheduled as groups only when
the server runs with `--feature-gates GenericWorkload=true`, which a workload file asks for
with `featureGates:` (used when the command line gives none).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from schedsvc.v1 import schedule_pb2 as pb

__all__ = ["PodGroups", "batches_keeping_groups", "parse_pod_groups", "requests_by_group"]


@dataclass(frozen=True, slots=True)
class PodGroups:
    size: int
    min_count: int | None  # None: the basic policy
    namespace: str = "default"

    def name(self, op_index: int, i: int) -> str:
        """The PodGroup of the op's i-th pod."""
        return f"op{op_index}-g{i // self.size}"

    def objects(self, op_index: int, count: int) -> Iterator[pb.PodGroup]:
        """The op's PodGroups, one per `size` pods (the last may hold fewer)."""
        for g in range(-(-count // self.size)):
            pg = pb.PodGroup(name=f"op{op_index}-g{g}", namespace=self.namespace)
            if self.min_count is None:
                pg.spec.scheduling_policy.basic.SetInParent()
            else:
                pg.spec.scheduling_policy.gang.min_count = self.min_count
            yield pg


def parse_pod_groups(raw: Any, where: str, namespace: str) -> PodGroups | None:
    """`podGroups: {size, minCount | policy: basic}`; None when absent. ValueError names the
    field."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: expected a mapping")
    unknown = set(raw) - {"size", "minCount", "policy"}
    if unknown:
        raise ValueError(f"{where}: unknown fields {sorted(unknown)}")
    size = raw.get("size")
    if not isinstance(size, int) or size < 1:
        raise ValueError(f"{where}.size: expected a positive integer, got {size!r}")
    policy = raw.get("policy", "gang")
    if policy not in ("gang", "basic"):
        raise ValueError(f"{where}.policy: expected gang or basic, got {policy!r}")
    if policy == "basic":
        if "minCount" in raw:
            raise ValueError(f"{where}.minCount: a basic group has none")
        return PodGroups(size, None, namespace or "default")
    min_count = raw.get("minCount", size)
    if not isinstance(min_count, int) or min_count < 1:
        raise ValueError(f"{where}.minCount: expected a positive integer, got {min_count!r}")
    return PodGroups(size, min_count, namespace or "default")


def requests_by_group(pods: list[pb.Pod], groups: PodGroups, batch_size: int) -> Iterator[
        list[pb.Pod]]:
    """`pods` in requests of whole groups: as many as fit in `batch_size` pods, at least one."""
    per = max(1, batch_size // groups.size) * groups.size
    for i in range(0, len(pods), per):
        yield pods[i:i + per]


def batches_keeping_groups(pods: list[pb.Pod], batch_size: int) -> Iterator[list[pb.Pod]]:
    """`pods` in order, in batches of about `batch_size` that never split a pod group's
    members (a group's members that follow one another stay in one batch, however many):
    the server schedules a group only with the members one request holds."""
    batch: list[pb.Pod] = []
    for i, pod in enumerate(pods):
        group = (pod.namespace, pod.scheduling_group.pod_group_name)
        prev = pods[i - 1] if i else None
        same = prev is not None and group[1] and group == (
            prev.namespace, prev.scheduling_group.pod_group_name
        )
        if len(batch) >= batch_size and not same:
            yield batch
            batch = []
        batch.append(pod)
    if batch:
        yield batch
