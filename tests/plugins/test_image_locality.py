"""ImageLocality: table tests after kube's image_locality_test.go (1.35 thresholds: 1000MiB per
container, init containers counted), plus a scalar cross-check."""

from __future__ import annotations

import random

import numpy as np
import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework.podinfo import pod_info
from schedsvc.framework.snapshot import Snapshot, normalized_image_name
from schedsvc.model import ContainerImage, Node, Pod
from schedsvc.plugins import image_locality
from tests.builders import node_with_images, pod_with_images

MB = 1024 * 1024

NODE_40_300_2000 = (
    ContainerImage(("gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"), 40 * MB),
    ContainerImage(("gcr.io/300:latest", "gcr.io/300:v1"), 300 * MB),
    ContainerImage(("gcr.io/2000:latest",), 2000 * MB),
)
NODE_250_10 = (
    ContainerImage(("gcr.io/250:latest",), 250 * MB),
    ContainerImage(("gcr.io/10:latest", "gcr.io/10:v1"), 10 * MB),
)


def scores(pod: Pod, nodes: list[Node]) -> list[int]:
    snap = Snapshot()
    for n in nodes:
        snap.upsert_node(n)
    rows = np.array([snap.index[n.name] for n in nodes], dtype=np.intp)
    pl = image_locality.new(None)
    info = pod_info(pod)
    return pl.normalize(None, info, pl.score(None, info, snap, rows)).tolist()


TWO_NODES = [
    node_with_images("machine1", NODE_40_300_2000), node_with_images("machine2", NODE_250_10)
]

CASES = [
    pytest.param(
        pod_with_images("gcr.io/40", "gcr.io/250"),
        TWO_NODES,
        # machine1: 40M/2 < 23M -> 0; machine2: 100 * (250M/2 - 23M) / (2000M - 23M) = 5
        [0, 5],
        id="two images spread on two nodes prefer the larger image one",
    ),
    pytest.param(
        pod_with_images("gcr.io/40", "gcr.io/300"),
        TWO_NODES,
        # machine1: 100 * ((40M + 300M)/2 - 23M) / (2000M - 23M) = 7
        [7, 0],
        id="two images on one node prefer this node",
    ),
    pytest.param(
        pod_with_images("gcr.io/10", "gcr.io/2000"),
        TWO_NODES,
        # machine1: 100 * (2000M/2 - 23M) / (2000M - 23M) = 49; machine2: 10M/2 < 23M
        [49, 0],
        id="the maximum threshold grows with the number of containers",
    ),
    pytest.param(
        pod_with_images("gcr.io/10", "gcr.io/2000"),
        [*TWO_NODES, node_with_images("machine3", ())],
        # machine1: int64(2000M * (1/3)) = 699050666; 100 * (699050666 - 23M) / (2000M - 23M) = 32
        [32, 0, 0],
        id="the spread divides by every node of the cluster",
    ),
    pytest.param(
        pod_with_images("gcr.io/2000"),
        TWO_NODES,
        # one container: 2000M/2 = 1000M reaches the 1000M cap -> 100
        [100, 0],
        id="a sum at the one-container cap scores the maximum",
    ),
    pytest.param(
        pod_with_images("gcr.io/40", init=("gcr.io/300",)),
        TWO_NODES,
        [7, 0],
        id="init container images count like regular ones",
    ),
    pytest.param(
        pod_with_images("gcr.io/300:v1", "gcr.io/300:latest"),
        TWO_NODES,
        # 150M + 150M = 300M over two containers: 100 * (300M - 23M) / (2000M - 23M) = 14
        [14, 0],
        id="every container counts its image even when two name the same image",
    ),
    pytest.param(pod_with_images(), TWO_NODES, [0, 0], id="a pod without containers scores 0"),
]


@pytest.mark.parametrize("pod,nodes,want", CASES)
def test_score(pod: Pod, nodes: list[Node], want: list[int]) -> None:
    assert scores(pod, nodes) == want


@pytest.mark.parametrize(
    "name,want",
    [
        ("root", "root:latest"),
        ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("root:tag", "root:tag"),
        ("root@sha256:abcd", "root@sha256:abcd"),
    ],
    ids=[
        "a bare name gets latest",
        "a registry port is not a tag",
        "a tag is kept",
        "a digest is kept",
    ],
)
def test_normalized_image_name(name: str, want: str) -> None:
    assert normalized_image_name(name) == want


def test_sign_is_the_multiset_of_normalized_images() -> None:
    pl = image_locality.new(None)
    a = pl.sign(pod_info(pod_with_images("x", "y:1")))
    assert a == pl.sign(pod_info(pod_with_images("y:1", "x:latest")))
    assert a != pl.sign(pod_info(pod_with_images("x", "y:1", "x")))


def test_new_rejects_arguments() -> None:
    with pytest.raises(ConfigError):
        image_locality.new({"x": 1})


# ---- scalar reference ----------------------------------------------------------------------
def ref_score(pod: Pod, node: Node, nodes: list[Node]) -> int:
    """kube's cache imageStates built node by node, then sumImageScores for `node`."""
    size: dict[str, int] = {}  # first size reported for each raw name, in node order
    holders: dict[str, set[str]] = {}
    for n in nodes:
        for im in n.images:
            for nm in im.names:
                size.setdefault(nm, im.size_bytes)
                holders.setdefault(nm, set()).add(n.name)
    mine = {nm for im in node.images for nm in im.names}
    total = 0
    containers = [*pod.init_containers, *pod.containers]
    for c in containers:
        nm = normalized_image_name(c.image)
        if nm in mine:
            spread = float(len(holders[nm])) / float(len(nodes))
            total += int(float(size[nm]) * spread)
    lo, hi = 23 * MB, 1000 * MB * len(containers)
    total = lo if total < lo else hi if total > hi else total
    if hi - lo == 0:
        return 0
    return 100 * (total - lo) // (hi - lo)  # both >= 0: Go's truncation


def test_vectorized_matches_scalar_reference_on_random_clusters() -> None:
    rng = random.Random(9)
    names = ["a", "a:latest", "b:1", "c:2", "reg:5000/d", "reg:5000/d:latest"]
    for _ in range(150):
        nodes = []
        for i in range(rng.randint(1, 9)):
            imgs = tuple(
                ContainerImage(
                    (nm,), rng.choice([5, 30, 300, 900, 1500]) * MB + rng.randint(0, 999)
                )
                for nm in rng.sample(names, rng.randint(0, 4))
            )
            nodes.append(node_with_images(f"n{i}", imgs))
        pod = pod_with_images(
            *rng.choices(names + ["e"], k=rng.randint(0, 3)),
            init=tuple(rng.choices(names, k=rng.randint(0, 1))),
        )
        assert scores(pod, nodes) == [ref_score(pod, n, nodes) for n in nodes]


def test_node_image_names_are_matched_as_reported_not_normalized() -> None:
    """kube normalizes the pod's image only: a node reporting plain "img/web" does not hold
    "img/web:latest". n2: 300MiB * 1/4 nodes = 75MiB -> 100 * (75 - 23) / (1000 - 23) = 5."""
    nodes = [
        node_with_images("n1", (ContainerImage(("img/web",), 500 * MB),)),
        node_with_images("n2", (ContainerImage(("img/web:latest",), 300 * MB),)),
        node_with_images("n3", ()),
        node_with_images("n4", ()),
    ]
    assert scores(pod_with_images("img/web"), nodes) == [0, 5, 0, 0]


def test_an_image_keeps_the_size_first_reported_in_the_cluster() -> None:
    """kube's imageState keeps the first node's size: both holders score 800MiB * 2/4 = 400MiB
    -> 100 * (400 - 23) / (1000 - 23) = 38, although n2 reported 200MiB."""
    nodes = [
        node_with_images("n1", (ContainerImage(("img/db:1",), 800 * MB),)),
        node_with_images("n2", (ContainerImage(("img/db:1",), 200 * MB),)),
        node_with_images("n3", ()),
        node_with_images("n4", ()),
    ]
    assert scores(pod_with_images("img/db:1"), nodes) == [38, 38, 0, 0]
