"""Per-pod facts computed once (kube's PodInfo): requests as the scheduler counts them, host ports.

Requests come from `resourcehelper.pod_requests` (kube's PodRequests); every consumer reads
them through PodInfo:
NodeResourcesFit's filter, the snapshot's Requested and NonZeroRequested columns, and each
scoring strategy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..model import (
    CONTAINER_RESTART_POLICY_ALWAYS,
    CPU,
    MEMORY,
    Pod,
)
from ..resourcehelper import NON_ZERO_DEFAULTS, pod_requests

__all__ = ["HostPort", "PodInfo", "host_ports", "pod_info"]

HostPort = tuple[str, int, str]  # (protocol, host port, host ip), defaulted as HostPortInfo does


def _node_info_non_missing(pod: Pod, requests: Mapping[str, int]) -> Mapping[str, int]:
    """kube's getNonMissingContainerRequests (framework/types.go): with pod-level requests set,
    a default applies only to a resource the pod's effective requests lack altogether."""
    if not pod.requests:
        return NON_ZERO_DEFAULTS
    return {k: v for k, v in NON_ZERO_DEFAULTS.items() if k not in requests}


def host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """kube's GetHostPorts: host ports (> 0) of sidecars, then of app containers; a plain init
    container has exited before the app starts, so its ports are free again."""
    out: list[HostPort] = []
    for group, sidecars_only in ((pod.init_containers, True), (pod.containers, False)):
        for c in group:
            if sidecars_only and c.restart_policy != CONTAINER_RESTART_POLICY_ALWAYS:
                continue
            for p in c.ports:
                if p.host_port > 0:
                    out.append((p.protocol or "TCP", p.host_port, p.host_ip or "0.0.0.0"))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class PodInfo:
    pod: Pod
    requests: Mapping[str, int]  # PodRequests: NodeResourcesFit's filter, Requested, useRequested
    nonzero_cpu: int  # what the cache's NonZeroRequested adds up for a pod placed on a node
    nonzero_memory: int
    # What the pod being scheduled adds in NodeResourcesFit's scoring (every strategy):
    # PodRequests with the non-zero defaults per container and without pod-level resources.
    # kube 1.35 builds Fit's scorer (nodeResourceStrategyTypeMap) without its PodLevelResources
    # flag, so SkipPodLevelResources holds there, unlike in BalancedAllocation (which reads
    # `requests`). The recorded verdicts confirm it (real-pods.jsonl.gz, case 3-11).
    nonzero_requests: Mapping[str, int]
    host_ports: tuple[HostPort, ...] = ()

    @property
    def uid(self) -> str:
        return self.pod.uid

    def for_pod(self, pod: Pod) -> PodInfo:
        """The same facts for `pod`, which must request what this info's pod requests."""
        return PodInfo(
            pod,
            self.requests,
            self.nonzero_cpu,
            self.nonzero_memory,
            self.nonzero_requests,
            self.host_ports,
        )


def pod_info(pod: Pod, last: PodInfo | None = None) -> PodInfo:
    """`last`, the previous pod's info, is reused when `pod` has its shape (a run of equal
    pods differing only in uid and name)."""
    if last is not None and pod.shape is not None and last.pod.shape is pod.shape:
        return last.for_pod(pod)
    req = pod_requests(pod)
    # NodeResourcesFit scores the pod being scheduled with the defaults in every container and
    # no pod-level resources; a pod on a node is counted in NonZeroRequested as
    # framework/types.go does. Both are the same for a pod without pod-level requests.
    scored = pod_requests(pod, NON_ZERO_DEFAULTS, pod_level=False)
    non_missing = _node_info_non_missing(pod, req)
    if non_missing is NON_ZERO_DEFAULTS:  # no pod-level requests
        counted: Mapping[str, int] = scored
    elif non_missing:
        counted = pod_requests(pod, non_missing)
    else:
        counted = req
    return PodInfo(
        pod=pod,
        requests=req,
        nonzero_cpu=counted.get(CPU, 0),
        nonzero_memory=counted.get(MEMORY, 0),
        nonzero_requests=scored,
        host_ports=host_ports(pod),
    )
