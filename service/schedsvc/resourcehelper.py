"""kube's component-helpers/resource (PodRequests) with SidecarContainers and
PodLevelResources on (both default in 1.35): the one formula for what a pod requests. The engine
reads it through PodInfo; the client uses it to default pod-level limits as the API server
would, so both sides count a pod alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .model import (
    CONTAINER_RESTART_POLICY_ALWAYS,
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    Container,
    Pod,
    is_supported_pod_level_resource,
)

__all__ = ["NON_ZERO_DEFAULTS", "pod_requests"]

# kube's schedutil defaults, for a container that does not set the request (scoring only).
NON_ZERO_DEFAULTS: Mapping[str, int] = MappingProxyType(
    {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}
)
_NONE: Mapping[str, int] = MappingProxyType({})


def _add_into(acc: dict[str, int], req: Mapping[str, int]) -> None:
    for k, v in req.items():
        acc[k] = acc.get(k, 0) + v


def _max_into(acc: dict[str, int], req: Mapping[str, int]) -> None:
    """maxResourceList: a key of `req` missing from `acc` is set even when zero."""
    for k, v in req.items():
        if k not in acc or v > acc[k]:
            acc[k] = v


def _with_defaults(
    requests: Mapping[str, int], non_missing: Mapping[str, int]
) -> Mapping[str, int]:
    """applyNonMissing: a resource the container does not set counts the default; an explicit
    zero stays zero."""
    missing = [k for k in non_missing if k not in requests]
    if not missing:
        return requests
    out = dict(requests)
    for k in missing:
        out[k] = non_missing[k]
    return out


def pod_requests(
    pod: Pod, non_missing: Mapping[str, int] = _NONE, pod_level: bool = True
) -> dict[str, int]:
    """kube's PodRequests (component-helpers/resource) with sidecars and pod-level resources.

    App containers and every sidecar (init container with restartPolicy Always) run together,
    so their requests add up. Init containers run in order: a sidecar adds itself to the running
    sidecar total, a plain init container needs its own request on top of the sidecars declared
    before it; the pod needs, per resource, the larger of the running phase and every init step.
    Pod-level requests then replace that for the resources they name (cpu, memory, hugepages-*),
    and overhead is added last. `non_missing` fills resources a container does not set (kube's
    NonMissingContainerRequests, per container, before any sum); `pod_level=False` is kube's
    SkipPodLevelResources.
    """
    total: dict[str, int] = {}
    for c in pod.containers:
        _add_into(total, _with_defaults(c.requests, non_missing) if non_missing else c.requests)
    if pod.init_containers:
        _add_init_containers(total, pod.init_containers, non_missing)
    if pod_level and pod.requests:
        for k, v in pod.requests.items():
            if is_supported_pod_level_resource(k):
                total[k] = v
    if pod.overhead:
        _add_into(total, pod.overhead)
    return total


def _add_init_containers(
    total: dict[str, int], init_containers: tuple[Container, ...], non_missing: Mapping[str, int]
) -> None:
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for c in init_containers:
        req = _with_defaults(c.requests, non_missing) if non_missing else c.requests
        if c.restart_policy == CONTAINER_RESTART_POLICY_ALWAYS:
            _add_into(total, req)
            _add_into(sidecars, req)
            _max_into(init_peak, sidecars)
        else:
            step = dict(req)
            _add_into(step, sidecars)
            _max_into(init_peak, step)
    _max_into(total, init_peak)
