"""Nodes, pods and containers as domain objects (kube's testing/wrappers.go counterpart).

Two families: `node`/`pod`/`make_pod` give schedulable defaults (a 4-CPU node with a hostname
label, a 100m/256Mi pod), for engine and batching tests; `make_node`/`pod_requesting`/
`node_with_labels`/... give bare objects with only what a plugin table case states.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from schedsvc.model import (
    Container,
    ContainerImage,
    Node,
    Pod,
    Taint,
    Toleration,
    frozen_map,
)

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
]

GiB = 2**30
MiB = 2**20


def node(
    name: str,
    cpu: int = 4000,
    memory: int = 8 * GiB,
    pods: int = 110,
    labels: Mapping[str, str] | None = None,
    taints: tuple[Taint, ...] = (),
    images: tuple[ContainerImage, ...] = (),
    unschedulable: bool = False,
) -> Node:
    """A schedulable node: allocatable cpu/memory/pods and its hostname label."""
    return Node(
        name=name,
        labels={"kubernetes.io/hostname": name, **(labels or {})},
        taints=taints,
        allocatable={"cpu": cpu, "memory": memory, "pods": pods},
        images=images,
        unschedulable=unschedulable,
    )


def pod(
    uid: str,
    cpu: int | None = 100,
    memory: int | None = 256 * MiB,
    scheduler_name: str = "default-scheduler",
    **kw: object,
) -> Pod:
    """A pod of one container requesting `cpu`/`memory` (None: not requested); `image` and
    `ports` go to the container, any other keyword to the Pod."""
    req: dict[str, int] = {}
    if cpu is not None:
        req["cpu"] = cpu
    if memory is not None:
        req["memory"] = memory
    image = str(kw.pop("image", "img/web:1"))
    ports = kw.pop("ports", ())
    return Pod(
        uid=uid,
        name=uid,
        scheduler_name=scheduler_name,
        containers=(Container("c", image=image, requests=req, ports=ports),),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def make_pod(
    uid: str, shape: Mapping[str, object], scheduler_name: str = "default-scheduler"
) -> Pod:
    """`pod` from a shape dict (tests/strategies.py draws them)."""
    return pod(uid, scheduler_name=scheduler_name, **dict(shape))


def resource_name(keyword: str) -> str:
    """`ephemeral_storage` -> ephemeral-storage, `example_com__gpu` -> example.com/gpu."""
    if "__" in keyword:
        domain, name = keyword.split("__")
        return f"{domain.replace('_', '.')}/{name.replace('_', '-')}"
    return keyword.replace("_", "-")


def make_node(name: str, cpu: int = 0, memory: int = 0, pods: int = 110, **extra: int) -> Node:
    """A bare node (no labels) with only allocatable resources; `extra` named as resource_name
    spells them (a key that is already a resource name passes through)."""
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    alloc.update({resource_name(k): v for k, v in extra.items()})
    return Node(name=name, allocatable=alloc)


def container(name: str = "c", **requests: int) -> Container:
    return Container(name=name, requests={resource_name(k): v for k, v in requests.items()})


def pod_with_containers(
    *containers: Container,
    uid: str = "p",
    init: Sequence[Container] = (),
    requests: Mapping[str, int] | None = None,
    overhead: Mapping[str, int] | None = None,
) -> Pod:
    """A pod of `containers` and `init` containers, with pod-level `requests` and `overhead`."""
    return Pod(
        uid=uid, containers=tuple(containers), init_containers=tuple(init),
        requests=dict(requests or {}), overhead=dict(overhead or {}),
    )


def pod_requesting(uid: str = "p", containers: int = 1, **requests: int) -> Pod:
    """A pod whose first container requests `requests`; `containers` - 1 more request nothing."""
    extra = [Container(name=f"c{i}") for i in range(1, containers)]
    return pod_with_containers(container(**requests), *extra, uid=uid)


def node_with_labels(
    name: str, labels: Mapping[str, str] | None = None, /, *,
    taints: Sequence[Taint] = (), **more: str,
) -> Node:
    """A bare node with `labels` (a mapping, or keywords for keys that are identifiers)."""
    return Node(name=name, labels=frozen_map({**(labels or {}), **more}), taints=tuple(taints))


def node_with_taints(name: str, taints: Sequence[Taint]) -> Node:
    return Node(name=name, taints=tuple(taints))


def pod_with_tolerations(*tolerations: Toleration) -> Pod:
    return Pod(uid="pod1", name="pod1", tolerations=tolerations)
