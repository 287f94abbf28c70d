"""NodePorts: table tests after kube's node_ports_test.go, plus a scalar cross-check."""

from __future__ import annotations

import random

import numpy as np
import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework import SKIP, Code, PreFilterResult
from schedsvc.framework.podinfo import pod_info
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Container, ContainerPort, Node, Pod
from schedsvc.plugins import node_ports
from schedsvc.plugins.node_ports import ERR_REASON
from tests.builders import pod_with_ports


def node_with_pods(*pods: Pod) -> tuple[Snapshot, np.ndarray]:
    snap = Snapshot()
    snap.upsert_node(Node(name="node"))
    for p in pods:
        snap.add_pod(p, "node")
    return snap, np.array([snap.index["node"]], dtype=np.intp)


def fits(pod: Pod, *existing: Pod) -> bool:
    snap, rows = node_with_pods(*existing)
    pl = node_ports.new(None)
    info = pod_info(pod)
    pre = pl.pre_filter(info, snap)
    if pre is SKIP:
        return True
    assert isinstance(pre, PreFilterResult)
    res = pl.filter(pre.state, info, snap, rows)
    if not res.feasible[0]:
        assert res.code == Code.UNSCHEDULABLE
        assert [r for r, m in res.reasons if m[0]] == [ERR_REASON]
    return bool(res.feasible[0])


CASES = [
    pytest.param(pod_with_ports("p"), [], True, id="a pod without host ports fits anywhere"),
    pytest.param(
        pod_with_ports("p", ("UDP", "127.0.0.1", 8080)),
        [pod_with_ports("e", ("UDP", "127.0.0.1", 9090))],
        True,
        id="other port",
    ),
    pytest.param(
        pod_with_ports("p", ("UDP", "127.0.0.1", 8080)),
        [pod_with_ports("e", ("UDP", "127.0.0.1", 8080))],
        False,
        id="same udp port",
    ),
    pytest.param(
        pod_with_ports("p", ("TCP", "127.0.0.1", 8080)),
        [pod_with_ports("e", ("TCP", "127.0.0.1", 8080))],
        False,
        id="same tcp port",
    ),
    pytest.param(
        pod_with_ports("p", ("TCP", "127.0.0.1", 8001)),
        [pod_with_ports("e", ("TCP", "127.0.0.2", 8001))],
        True,
        id="different host ip",
    ),
    pytest.param(
        pod_with_ports("p", ("UDP", "127.0.0.1", 8001)),
        [pod_with_ports("e", ("TCP", "127.0.0.1", 8001))],
        True,
        id="different protocol",
    ),
    pytest.param(
        pod_with_ports("p", ("UDP", "127.0.0.1", 8000), ("UDP", "127.0.0.1", 8080)),
        [pod_with_ports("e", ("UDP", "127.0.0.1", 8080))],
        False,
        id="second udp port conflict",
    ),
    pytest.param(
        pod_with_ports("p", ("TCP", "127.0.0.1", 8001), ("UDP", "127.0.0.1", 8001)),
        [pod_with_ports("e", ("TCP", "127.0.0.1", 8001), ("UDP", "127.0.0.1", 8081))],
        False,
        id="first tcp port conflict",
    ),
    pytest.param(
        pod_with_ports("p", ("TCP", "0.0.0.0", 8001)),
        [pod_with_ports("e", ("TCP", "127.0.0.1", 8001))],
        False,
        id="first tcp port conflict due to 0.0.0.0 hostIP",
    ),
    pytest.param(
        pod_with_ports("p", ("TCP", "10.0.10.10", 8001), ("TCP", "0.0.0.0", 8001)),
        [pod_with_ports("e", ("TCP", "127.0.0.1", 8001))],
        False,
        id="TCP hostPort conflict due to 0.0.0.0 hostIP",
    ),
    pytest.param(
        pod_with_ports("p", ("TCP", "127.0.0.1", 8001)),
        [pod_with_ports("e", ("TCP", "0.0.0.0", 8001))],
        False,
        id="second tcp port conflict to 0.0.0.0 hostIP",
    ),
    pytest.param(
        pod_with_ports("p", ("UDP", "127.0.0.1", 8001)),
        [pod_with_ports("e", ("TCP", "0.0.0.0", 8001))],
        True,
        id="second different protocol",
    ),
    pytest.param(
        pod_with_ports("p", ("UDP", "127.0.0.1", 8001)),
        [pod_with_ports("e", ("TCP", "0.0.0.0", 8001), ("UDP", "0.0.0.0", 8001))],
        False,
        id="UDP hostPort conflict due to 0.0.0.0 hostIP",
    ),
    pytest.param(
        pod_with_ports("p", ("", "", 8001)),
        [pod_with_ports("e", ("TCP", "10.1.1.1", 8001))],
        False,
        id="an empty protocol means TCP and an empty host ip means 0.0.0.0",
    ),
]


@pytest.mark.parametrize("pod,existing,want", CASES)
def test_filter(pod: Pod, existing: list[Pod], want: bool) -> None:
    assert fits(pod, *existing) is want


def test_a_removed_pod_frees_its_port() -> None:
    snap, rows = node_with_pods(pod_with_ports("e", ("TCP", "", 80)))
    pl = node_ports.new(None)
    info = pod_info(pod_with_ports("p", ("TCP", "", 80)))
    pre = pl.pre_filter(info, snap)
    assert isinstance(pre, PreFilterResult)
    assert pl.filter(pre.state, info, snap, rows).feasible.tolist() == [False]
    snap.remove_pod("e")
    assert pl.filter(pre.state, info, snap, rows).feasible.tolist() == [True]


def test_container_ports_without_host_port_are_skipped() -> None:
    pod = Pod(uid="p", containers=(Container(name="c", ports=(ContainerPort(8080),)),))
    assert node_ports.new(None).pre_filter(pod_info(pod), Snapshot()) is SKIP


def test_sign_is_the_sorted_host_ports() -> None:
    pl = node_ports.new(None)
    a = pl.sign(pod_info(pod_with_ports("a", ("TCP", "", 1), ("UDP", "1.2.3.4", 2))))
    b = pl.sign(pod_info(pod_with_ports("b", ("UDP", "1.2.3.4", 2), ("", "0.0.0.0", 1))))
    assert a == b != pl.sign(pod_info(pod_with_ports("c", ("TCP", "", 1))))


def test_new_rejects_arguments() -> None:
    with pytest.raises(ConfigError):
        node_ports.new({"x": 1})


# ---- scalar reference: kube's HostPortInfo as a dict of sets --------------------------------
def ref_fits(pod: Pod, existing: list[Pod]) -> bool:
    used: dict[str, set[tuple[str, int]]] = {}
    for e in existing:
        for c in e.containers:
            for p in c.ports:
                if p.host_port > 0:
                    used.setdefault(p.host_ip or "0.0.0.0", set()).add(
                        (p.protocol or "TCP", p.host_port)
                    )
    for c in pod.containers:
        for p in c.ports:
            if p.host_port <= 0:
                continue
            pp = (p.protocol or "TCP", p.host_port)
            ip = p.host_ip or "0.0.0.0"
            ips = list(used) if ip == "0.0.0.0" else ["0.0.0.0", ip]
            if any(pp in used.get(i, set()) for i in ips):
                return False
    return True


def test_vectorized_matches_scalar_reference_on_random_clusters() -> None:
    rng = random.Random(3)
    pl = node_ports.new(None)

    def rand_pod(uid: str) -> Pod:
        ports = [
            (
                rng.choice(["TCP", "UDP", ""]),
                rng.choice(["", "0.0.0.0", "10.0.0.1", "10.0.0.2"]),
                rng.choice([0, 80, 81]),
            )
            for _ in range(rng.randint(0, 3))
        ]
        return pod_with_ports(uid, *ports)

    for _ in range(150):
        snap = Snapshot()
        placed: dict[str, list[Pod]] = {}
        for i in range(rng.randint(1, 8)):
            snap.upsert_node(Node(name=f"n{i}"))
            placed[f"n{i}"] = []
            for j in range(rng.randint(0, 3)):
                p = rand_pod(f"n{i}-{j}")
                snap.add_pod(p, f"n{i}")
                placed[f"n{i}"].append(p)
        pod = rand_pod("new")
        names = list(placed)
        rows = np.array([snap.index[n] for n in names], dtype=np.intp)
        info = pod_info(pod)
        pre = pl.pre_filter(info, snap)
        got = (
            [True] * len(names)
            if pre is SKIP
            else pl.filter(pre.state, info, snap, rows).feasible.tolist()
        )  # type: ignore[union-attr]
        assert got == [ref_fits(pod, placed[n]) for n in names]
