"""Effective requests (engine/podinfo.py) against kube's formula, worked by hand.

kube's component-helpers/resource PodRequests (SidecarContainers and PodLevelResources on, as in
1.35): reqs = sum of app containers; for each init container in order, a sidecar
(restartPolicy: Always) adds itself to reqs and to the running sidecar total S and the init
step is S, a plain init container's step is its own request + S; reqs = max(reqs, every step)
per resource; pod-level requests (cpu, memory, hugepages-*) replace reqs for what they name;
overhead is added last. Scoring fills a resource a container does not set with 100m cpu /
200Mi memory (an explicit zero stays zero), per container, before any sum. Every expected value
below is that arithmetic done by hand in the comment beside it, never our output.
"""

from __future__ import annotations

import pytest

from schedsvc.framework.podinfo import host_ports, pod_info
from schedsvc.model import CPU, MEMORY, Container, ContainerPort
from schedsvc.resourcehelper import pod_requests
from tests.builders import pod_with_containers

Mi = 1024 * 1024
Gi = 1024 * Mi


def app(cpu: int | None = None, mem: int | None = None, **extra: int) -> Container:
    req: dict[str, int] = dict(extra)
    if cpu is not None:
        req[CPU] = cpu
    if mem is not None:
        req[MEMORY] = mem * Mi
    return Container("c", requests=req)


def init(cpu: int | None = None, mem: int | None = None, **extra: int) -> Container:
    c = app(cpu, mem, **extra)
    return Container("i", requests=c.requests)


def sidecar(cpu: int | None = None, mem: int | None = None, **extra: int) -> Container:
    c = app(cpu, mem, **extra)
    return Container("s", requests=c.requests, restart_policy="Always")


CASES = {
    # app 100m/100Mi; sidecar 50m/50Mi then init 300m/10Mi.
    # running: 100+50 = 150m, 150Mi. steps: sidecar S=50m/50Mi; init 300+50=350m, 10+50=60Mi.
    # max: cpu max(150, 50, 350) = 350m; memory max(150, 50, 60) = 150Mi.
    "sidecar before a plain init container": (
        pod_with_containers(app(100, 100), init=(sidecar(50, 50), init(300, 10))),
        {CPU: 350, MEMORY: 150 * Mi},
    ),
    # the same two in the other order: the init container runs before the sidecar starts.
    # steps: init 300m/10Mi; sidecar S=50m/50Mi. max: cpu max(150, 300, 50) = 300m; 150Mi.
    "sidecar after a plain init container": (
        pod_with_containers(app(100, 100), init=(init(300, 10), sidecar(50, 50))),
        {CPU: 300, MEMORY: 150 * Mi},
    ),
    # app 50m; s1 100m, init 200m, s2 100m, init 150m.
    # running: 50+100+100 = 250m. steps: S=100; 200+100=300; S=200; 150+200=350.
    # max(250, 100, 300, 200, 350) = 350m (the old max-of-inits formula gave 200m).
    "several sidecars": (
        pod_with_containers(app(50), init=(sidecar(100), init(200), sidecar(100), init(150))),
        {CPU: 350},
    ),
    # a sidecar's memory and a plain init container's cpu: each resource on its own.
    # running: cpu 100m, memory 64+32 = 96Mi. steps: S={memory 32Mi}; init 500m + S's 32Mi.
    # cpu max(100, 500) = 500m; memory max(96, 32, 32) = 96Mi.
    "per resource": (
        pod_with_containers(app(100, 64), init=(sidecar(mem=32), init(500))),
        {CPU: 500, MEMORY: 96 * Mi},
    ),
    # pod-level cpu 1 replaces the aggregate cpu (200+100 = 300m); memory stays the
    # aggregate 300+100 = 300Mi + sidecar's 100Mi = 400Mi.
    "pod-level cpu only": (
        pod_with_containers(app(200, 300), init=(sidecar(100, 100),), requests={CPU: 1000}),
        {CPU: 1000, MEMORY: 400 * Mi},
    ),
    # pod-level 1 cpu / 1Gi replace 200m/300Mi; overhead 250m/120Mi is added after.
    "pod-level with overhead": (
        pod_with_containers(
            app(200, 300),
            requests={CPU: 1000, MEMORY: Gi},
            overhead={CPU: 250, MEMORY: 120 * Mi},
        ),
        {CPU: 1250, MEMORY: Gi + 120 * Mi},
    ),
    # pod-level hugepages replace the containers' 4Mi; an extended resource is not a pod-level
    # resource, so the containers' sum stays (2 + 1 from the sidecar).
    "pod-level hugepages, extended resource summed": (
        pod_with_containers(
            app(**{"hugepages-2Mi": 4 * Mi, "example.com/gpu": 2}),
            init=(sidecar(**{"example.com/gpu": 1}),),
            requests={"hugepages-2Mi": 8 * Mi},
        ),
        {"hugepages-2Mi": 8 * Mi, "example.com/gpu": 3},
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_pod_requests_follows_kubes_formula(name: str) -> None:
    p, want = CASES[name]
    assert pod_requests(p) == want
    assert dict(pod_info(p).requests) == want


def test_pod_level_requests_can_be_skipped() -> None:
    # SkipPodLevelResources: the containers' aggregate, overhead still added: 200+250 = 450m.
    p = pod_with_containers(app(200), requests={CPU: 1000}, overhead={CPU: 250})
    assert pod_requests(p, pod_level=False) == {CPU: 450}


def test_scoring_defaults_where_containers_request_nothing() -> None:
    # Two app containers and a sidecar without requests: 3 x 100m, 3 x 200Mi while running;
    # the plain init container's step is its own defaults + the sidecar's: 200m, 400Mi.
    p = pod_with_containers(app(), app(), init=(sidecar(), init()))
    info = pod_info(p)
    assert dict(info.requests) == {}
    assert dict(info.nonzero_requests) == {CPU: 300, MEMORY: 600 * Mi}
    assert (info.nonzero_cpu, info.nonzero_memory) == (300, 600 * Mi)


def test_scoring_defaults_keep_an_explicit_zero() -> None:
    # cpu explicitly 0 stays 0; memory unset counts 200Mi; the second container sets 1Gi.
    p = pod_with_containers(Container("a", requests={CPU: 0}), app(mem=1024))
    info = pod_info(p)
    assert dict(info.nonzero_requests) == {CPU: 100, MEMORY: 200 * Mi + Gi}


def test_scoring_with_pod_level_requests() -> None:
    # The pod being scheduled is scored by NodeResourcesFit without pod-level resources
    # (kube builds Fit's scorer without the flag): containers with defaults, 100m + 200Mi.
    # On a node it counts NonZeroRequested as framework/types.go does: pod-level requests
    # (2 cpu, 1Gi) replace the aggregate and no default is needed.
    p = pod_with_containers(app(), requests={CPU: 2000, MEMORY: Gi})
    info = pod_info(p)
    assert dict(info.requests) == {CPU: 2000, MEMORY: Gi}
    assert dict(info.nonzero_requests) == {CPU: 100, MEMORY: 200 * Mi}
    assert (info.nonzero_cpu, info.nonzero_memory) == (2000, Gi)
    # Pod-level cpu only: memory is missing from the effective requests, so each container
    # gets the 200Mi default for it (getNonMissingContainerRequests): 2 x 200Mi.
    q = pod_with_containers(app(), app(), requests={CPU: 500})
    info = pod_info(q)
    assert (info.nonzero_cpu, info.nonzero_memory) == (500, 400 * Mi)


def test_host_ports_of_sidecars_count_plain_init_containers_do_not() -> None:
    ports = (ContainerPort(container_port=80, host_port=8080),)
    p = pod_with_containers(
        Container("a", ports=(ContainerPort(container_port=1, host_port=9000, protocol="UDP"),)),
        init=(
            Container("i", ports=ports),
            Container("s", ports=(ContainerPort(container_port=1, host_port=7000,
                                                host_ip="10.0.0.1"),),
                      restart_policy="Always"),
        ))
    assert host_ports(p) == (("TCP", 7000, "10.0.0.1"), ("UDP", 9000, "0.0.0.0"))
