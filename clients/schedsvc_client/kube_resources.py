"""A pod's requests as kube-scheduler counts them, read from the pod's JSON.

Two things lie outside the spec a user may hand us. What the API server adds when it stores a pod
(SetDefaults_Pod): a container's limit without a request becomes its request and, with pod-level
limits, a missing pod-level request becomes the containers' aggregate (cpu, memory) or else the
limit. A pod read from a live cluster carries these already, and applying them again changes
nothing; a hand-written manifest would otherwise schedule with smaller requests than kube's.
And what the kubelet reports while an in-place resize is under way: kube counts a pod on a node at
max(spec, status.resources.requests, status.allocatedResources) per container (only the status
values while the resize is Infeasible), InPlacePodVerticalScaling being GA in 1.35.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from schedsvc import model
from schedsvc.errors import InvalidArgument
from schedsvc.quantity import parse_quantity, to_canonical
from schedsvc.resourcehelper import pod_requests
from schedsvc.v1 import schedule_pb2 as pb

from .kube_json import KubeObjectError, as_list, as_object, as_str, join, quantities

__all__ = [
    "ContainerStatus",
    "container_requests",
    "container_statuses",
    "pod_level_requests",
    "resize_infeasible",
    "resized_requests",
]

# (status.resources present, its requests, allocatedResources), by container name
ContainerStatus = tuple[bool, dict[str, str], dict[str, str] | None]


def container_requests(c: Mapping[str, Any], path: str) -> dict[str, str]:
    """resources.requests, a limit standing in for a missing request (SetDefaults_Pod)."""
    res = as_object(c.get("resources"), join(path, "resources"))
    requests = quantities(res.get("requests"), join(path, "resources.requests"))
    for k, v in quantities(res.get("limits"), join(path, "resources.limits")).items():
        requests.setdefault(k, v)
    return requests


def _aggregate(
    containers: Iterable[pb.Container], init_containers: Iterable[pb.Container], path: str
) -> dict[str, int]:
    """The containers' aggregate request (sidecars included), by the engine's own formula."""

    def domain(c: pb.Container) -> model.Container:
        try:
            req = {k: to_canonical(k, v, path) for k, v in c.requests.items()}
        except InvalidArgument as exc:
            raise KubeObjectError(path, exc.description) from None
        return model.Container(c.name, requests=req, restart_policy=c.restart_policy)

    return pod_requests(
        model.Pod(
            uid="",
            containers=tuple(domain(c) for c in containers),
            init_containers=tuple(domain(c) for c in init_containers),
        )
    )


def pod_level_requests(
    spec: Mapping[str, Any],
    path: str,
    containers: Iterable[pb.Container],
    init_containers: Iterable[pb.Container],
) -> dict[str, str]:
    """spec.resources.requests as the API server stores them (defaultPodRequests).

    defaultHugePagePodLimits is left out: it sets a pod-level hugepages limit equal to the
    containers' aggregate, whose request (equal to the limit for hugepages) is what the
    containers already add up to, so it cannot change what the scheduler counts.
    """
    res_path = join(path, "spec.resources")
    res = as_object(spec.get("resources"), res_path)
    requests = quantities(res.get("requests"), join(res_path, "requests"))
    limits = quantities(res.get("limits"), join(res_path, "limits"))
    for which, m in (("requests", requests), ("limits", limits)):
        for k in m:
            if not model.is_supported_pod_level_resource(k):
                raise KubeObjectError(
                    join(res_path, f"{which}.{k}"),
                    "not a supported pod-level resource (cpu, memory, hugepages-*): "
                    "the API server refuses it",
                )
    if limits:
        aggregate = _aggregate(containers, init_containers, res_path)
        for k in (model.CPU, model.MEMORY):  # supported and overcommittable
            if k not in requests and k in aggregate:
                requests[k] = f"{aggregate[k]}m" if k == model.CPU else str(aggregate[k])
        for k, v in limits.items():
            requests.setdefault(k, v)
    return requests


def container_statuses(status: Mapping[str, Any], path: str) -> dict[str, ContainerStatus]:
    """status.containerStatuses and initContainerStatuses by container name."""
    out: dict[str, ContainerStatus] = {}
    for key in ("containerStatuses", "initContainerStatuses"):
        list_path = join(path, key)
        for i, cs in enumerate(as_list(status.get(key), list_path)):
            at = f"{list_path}[{i}]"
            cs = as_object(cs, at)
            name = as_str(cs.get("name"), join(at, "name"))
            res = cs.get("resources")
            actual = (
                quantities(as_object(res, join(at, "resources")).get("requests"),
                           join(at, "resources.requests"))
                if res is not None
                else {}
            )
            alloc = cs.get("allocatedResources")
            allocated = (
                quantities(alloc, join(at, "allocatedResources")) if alloc is not None else None
            )
            out[name] = (res is not None, actual, allocated)
    return out


def resize_infeasible(status: Mapping[str, Any], path: str) -> bool:
    """IsPodResizeInfeasible: a PodResizePending condition with reason Infeasible."""
    for i, cond in enumerate(as_list(status.get("conditions"), join(path, "conditions"))):
        cond = as_object(cond, f"{join(path, 'conditions')}[{i}]")
        if cond.get("type") == "PodResizePending":
            return bool(cond.get("reason") == "Infeasible")
    return False


def _max_into(acc: dict[str, str], other: Mapping[str, str] | None) -> None:
    for k, v in (other or {}).items():
        if k not in acc or parse_quantity(v) > parse_quantity(acc[k]):
            acc[k] = v


def resized_requests(
    spec_requests: dict[str, str], status: ContainerStatus | None, infeasible: bool
) -> dict[str, str]:
    """determineContainerReqs for a container of a pod on a node: unchanged without a status
    carrying `resources`, otherwise the larger of spec and status per resource."""
    if status is None or not status[0]:
        return spec_requests
    _, actual, allocated = status
    out: dict[str, str] = {} if infeasible else dict(spec_requests)
    _max_into(out, actual)
    _max_into(out, allocated)
    return out
