"""Per-pod facts computed once (kube's PodInfo): resource requests as the scheduler counts them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..model import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    Container,
    Pod,
)

__all__ = ["PodInfo", "pod_requests", "pod_info"]


def _max_into(acc: dict[str, int], req: Mapping[str, int]) -> None:
    for k, v in req.items():
        if v > acc.get(k, 0):
            acc[k] = v


def pod_requests(pod: Pod, non_missing: bool = False) -> dict[str, int]:
    """kube's resourcehelper.PodRequests (no pod-level resources, no sidecars).

    max(sum of containers, max of each init container) per resource, plus overhead. With
    `non_missing`, a container that does not set cpu/memory counts 100m/200Mi (scoring only).
    """

    def reqs(c: Container) -> Mapping[str, int]:
        if not non_missing:
            return c.requests
        r = dict(c.requests)
        r.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
        r.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
        return r

    total: dict[str, int] = {}
    for c in pod.containers:
        for k, v in reqs(c).items():
            total[k] = total.get(k, 0) + v
    for c in pod.init_containers:
        _max_into(total, reqs(c))
    for k, v in pod.overhead.items():
        total[k] = total.get(k, 0) + v
    return total


@dataclass(frozen=True, slots=True)
class PodInfo:
    pod: Pod
    requests: Mapping[str, int]  # what NodeResourcesFit filters on (no pods entry)
    nonzero_cpu: int  # what the cache's NonZeroRequested adds up for scoring
    nonzero_memory: int
    nonzero_requests: Mapping[str, int]  # PodRequests with non-missing defaults, all resources

    @property
    def uid(self) -> str:
        return self.pod.uid

    def for_pod(self, pod: Pod) -> PodInfo:
        """The same facts for `pod`, which must request what this info's pod requests."""
        return PodInfo(
            pod, self.requests, self.nonzero_cpu, self.nonzero_memory, self.nonzero_requests
        )


def pod_info(pod: Pod, last: PodInfo | None = None) -> PodInfo:
    """`last`, the previous pod's info, is reused when `pod` has its shape (a run of equal
    pods differing only in uid and name)."""
    if last is not None and pod.shape is not None and last.pod.shape is pod.shape:
        return last.for_pod(pod)
    req = pod_requests(pod)
    nz = pod_requests(pod, non_missing=True)
    if not pod.containers and not pod.init_containers:
        # kube applies the defaults per container; a pod with none gets none.
        nz = dict(req)
    return PodInfo(
        pod=pod,
        requests=req,
        nonzero_cpu=nz.get(CPU, 0),
        nonzero_memory=nz.get(MEMORY, 0),
        nonzero_requests=nz,
    )
