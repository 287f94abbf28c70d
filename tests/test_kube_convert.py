"""Kubernetes JSON/YAML -> proto -> domain, on every conformance case and on hand-made inputs."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from schedsvc import model
from schedsvc.server.convert import Converter
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.kube import (
    KubeObjectError,
    default_selector_for,
    load_objects,
    namespace_from_kube,
    node_from_kube,
    pod_from_kube,
)

CONVERTER = Converter()  # one server's conversion and caches, shared by these tests

CONFORMANCE = Path("/work/shared/conformance")


def conformance_cases() -> Iterator[dict[str, Any]]:
    for name in ("cases.jsonl.gz", "profiles.jsonl.gz"):
        path = CONFORMANCE / name
        if not path.exists():
            continue
        with gzip.open(path, "rt") as f:
            for line in f:
                yield json.loads(line)


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    out = list(conformance_cases())
    if not out:
        pytest.skip("conformance cases not available")
    return out


def test_every_conformance_object_converts(cases: list[dict[str, Any]]) -> None:
    """Each object converts, and to itself: name, namespace and labels come through, and a
    bound pod stays on its node."""
    for case in cases:
        for i, n in enumerate(case["nodes"]):
            node = CONVERTER.node_from_pb(
                node_from_kube(n, f"nodes[{i}]"), f"{case['id']}.nodes[{i}]"
            )
            assert node.name == n["metadata"]["name"], case["id"]
            assert dict(node.labels) == n["metadata"].get("labels", {}), case["id"]
        pods = [*case["pods"], case["pod"]]
        for i, p in enumerate(pods):
            pod = CONVERTER.pod_from_pb(pod_from_kube(p, f"pods[{i}]"), f"{case['id']}.pods[{i}]")
            meta = p["metadata"]
            assert (pod.name, pod.namespace) == (
                meta["name"], meta.get("namespace") or "default"
            ), case["id"]
            assert dict(pod.labels) == meta.get("labels", {}), case["id"]
            assert pod.node_name == p.get("spec", {}).get("nodeName", ""), case["id"]


def _case(cases: list[dict[str, Any]], case_id: str) -> dict[str, Any]:
    return next(c for c in cases if c["id"] == case_id)


def test_conformance_spot_checks(cases: list[dict[str, Any]]) -> None:
    case = _case(cases, "1-0")
    n0 = CONVERTER.node_from_pb(node_from_kube(case["nodes"][0]), "n")
    assert n0.taints == (model.Taint(key="maint", value="", effect="NoExecute"),)
    assert n0.allocatable["cpu"] == 3500 and n0.allocatable["memory"] == 4 * 2**30
    assert n0.images == (
        model.ContainerImage(names=("registry.local/web:1",), size_bytes=80_000_000),
    )
    n1 = CONVERTER.node_from_pb(node_from_kube(case["nodes"][1]), "n")
    assert n1.taints == (model.Taint(key="dedicated", value="gpu", effect="NoSchedule"),)
    assert n1.allocatable["example.com/gpu"] == 1

    b0 = CONVERTER.pod_from_pb(pod_from_kube(case["pods"][0]), "p")
    assert b0.containers[0].requests["cpu"] == 100  # "0.1"
    assert b0.node_name == "n0"

    pod = CONVERTER.pod_from_pb(pod_from_kube(case["pod"]), "p")
    assert pod.uid == "uid-p1-0" and pod.priority == 1000
    assert pod.containers[0].requests == {"cpu": 1000, "memory": 134_000_000}  # "134M"
    assert pod.containers[0].ports == (model.ContainerPort(9090, 9090, "UDP", ""),)
    assert pod.init_containers[0].requests["memory"] == 268435456
    assert pod.tolerations == (
        model.Toleration(key="dedicated", operator="Equal", value="gpu", effect="NoSchedule"),
    )
    assert pod.affinity is not None and pod.affinity.node_affinity is not None
    assert pod.affinity.node_affinity.required is None
    assert pod.affinity.node_affinity.preferred == (
        model.PreferredSchedulingTerm(
            56, model.NodeSelectorTerm((model.NodeSelectorRequirement("gen", "Gt", ("3",)),))
        ),
        model.PreferredSchedulingTerm(
            70, model.NodeSelectorTerm((model.NodeSelectorRequirement("gpu", "DoesNotExist"),))
        ),
    )


def _first_pod_with(cases: list[dict[str, Any]], key: str) -> dict[str, Any]:
    for case in cases:
        for p in [*case["pods"], case["pod"]]:
            if key in p["spec"]:
                return p  # type: ignore[no-any-return]
    raise AssertionError(f"no pod with {key}")


def test_conformance_spread_and_affinity_fields(cases: list[dict[str, Any]]) -> None:
    for case in cases:
        for raw in [*case["pods"], case["pod"]]:
            pod = CONVERTER.pod_from_pb(pod_from_kube(raw), "p")
            for got, want in zip(
                pod.topology_spread_constraints,
                raw["spec"].get("topologySpreadConstraints", []),
                strict=True,
            ):
                assert got.max_skew == want["maxSkew"]
                assert got.topology_key == want["topologyKey"]
                assert got.when_unsatisfiable == want["whenUnsatisfiable"]
                assert got.min_domains == want.get("minDomains")
                assert got.node_affinity_policy == want.get("nodeAffinityPolicy", "Honor")
                assert got.node_taints_policy == want.get("nodeTaintsPolicy", "Ignore")
                assert (got.label_selector is None) == ("labelSelector" not in want)
            anti = raw["spec"].get("affinity", {}).get("podAntiAffinity", {})
            for i, term in enumerate(
                anti.get("requiredDuringSchedulingIgnoredDuringExecution", [])
            ):
                assert pod.affinity is not None and pod.affinity.pod_anti_affinity is not None
                got_term = pod.affinity.pod_anti_affinity.required[i]
                assert got_term.topology_key == term["topologyKey"]
                assert got_term.namespaces == tuple(term.get("namespaces", []))
                exprs = term.get("labelSelector", {}).get("matchExpressions", [])
                assert got_term.label_selector is not None
                assert [
                    (r.key, r.operator, list(r.values))
                    for r in got_term.label_selector.match_expressions
                ] == [(e["key"], e["operator"], e.get("values", [])) for e in exprs]
    raw = _first_pod_with(cases, "affinity")
    assert CONVERTER.pod_from_pb(pod_from_kube(raw), "p").affinity is not None


def test_match_fields_and_required_terms(cases: list[dict[str, Any]]) -> None:
    seen = 0
    for case in cases:
        raw = case["pod"]
        na = raw["spec"].get("affinity", {}).get("nodeAffinity", {})
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        if req is None:
            continue
        pod = CONVERTER.pod_from_pb(pod_from_kube(raw), "p")
        assert pod.affinity is not None and pod.affinity.node_affinity is not None
        terms = pod.affinity.node_affinity.required
        assert terms is not None and len(terms) == len(req["nodeSelectorTerms"])
        for got, want in zip(terms, req["nodeSelectorTerms"], strict=True):
            assert len(got.match_fields) == len(want.get("matchFields", []))
            assert len(got.match_expressions) == len(want.get("matchExpressions", []))
        seen += 1
    assert seen > 0


YAML_LIST = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {zone: a}}
  spec:
    taints: [{key: k, value: v, effect: NoSchedule, timeAdded: "2024-01-01T00:00:00Z"}]
  status:
    capacity: {cpu: 4, memory: 8Gi, pods: 110}
    images: [{names: ["img:1"], sizeBytes: 1000}]
- apiVersion: v1
  kind: Pod
  metadata: {name: web-1, namespace: shop, labels: {app: web}}
  spec:
    containers:
    - name: c
      resources: {requests: {cpu: 0.5, memory: 128Mi}}
      ports: [{containerPort: 80, hostPort: 8080, hostIP: 10.0.0.1}]
    tolerations:
    - {key: k, operator: Exists, effect: NoSchedule}
  status: {nominatedNodeName: n1}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {team: a}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ignored}
"""


def test_yaml_list_and_multi_document() -> None:
    nodes, pods, namespaces = load_objects(YAML_LIST)
    assert [n.name for n in nodes] == ["n1"]
    node = CONVERTER.node_from_pb(nodes[0], "n")
    assert node.allocatable == {"cpu": 4000, "memory": 8 * 2**30, "pods": 110}  # from capacity
    assert node.taints == (model.Taint("k", "v", "NoSchedule"),)
    assert node.images == (model.ContainerImage(("img:1",), 1000),)
    pod = CONVERTER.pod_from_pb(pods[0], "p")
    assert pod.uid == "shop/web-1"  # a manifest without uid
    assert pod.namespace == "shop" and pod.nominated_node_name == "n1"
    assert pod.containers[0].requests == {"cpu": 500, "memory": 128 * 2**20}
    assert pod.containers[0].ports == (model.ContainerPort(80, 8080, "TCP", "10.0.0.1"),)
    assert pod.tolerations == (model.Toleration("k", "Exists", "", "NoSchedule"),)
    assert pod.default_selector is None
    assert [(ns.name, dict(ns.labels)) for ns in namespaces] == [("shop", {"team": "a"})]


def test_json_node_list_and_file(tmp_path: Path) -> None:
    node_list = {
        "kind": "NodeList",
        "apiVersion": "v1",
        "items": [
            {"metadata": {"name": "a"}, "status": {"allocatable": {"cpu": 2}}},
            {"metadata": {"name": "b"}, "status": {"allocatable": {"cpu": "1500m"}}},
        ],
    }
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(node_list))
    for source in (path, str(path), json.dumps(node_list)):
        nodes, pods, _ = load_objects(source)
        assert [n.name for n in nodes] == ["a", "b"] and not pods
        assert nodes[0].allocatable["cpu"] == "2"


BAD: list[tuple[str, dict[str, Any], str]] = [
    (
        "a request that is not a quantity",
        {"spec": {"containers": [{"name": "c"}, {"resources": {"requests": {"cpu": "lots"}}}]}},
        "items[3].spec.containers[1].resources.requests.cpu",
    ),
    (
        "a boolean request",
        {"spec": {"containers": [{"resources": {"requests": {"memory": True}}}]}},
        "items[3].spec.containers[0].resources.requests.memory",
    ),
    (
        "a label that is a number",
        {"metadata": {"name": "p", "labels": {"gen": 4}}},
        "items[3].metadata.labels.gen",
    ),
    (
        "a weight that is a word",
        {
            "spec": {
                "affinity": {
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 1},
                            {"weight": "heavy"},
                        ]
                    }
                }
            }
        },
        "items[3].spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[1]"
        ".weight",
    ),
    (
        "a toleration key that is a number",
        {"spec": {"tolerations": [{"key": "a"}, {"key": 5}]}},
        "items[3].spec.tolerations[1].key",
    ),
    (
        "a port that is a string",
        {"spec": {"containers": [{"ports": [{"containerPort": "80"}]}]}},
        "items[3].spec.containers[0].ports[0].containerPort",
    ),
    ("containers that are not a list", {"spec": {"containers": {}}}, "items[3].spec.containers"),
    ("a priority that is a float", {"spec": {"priority": 1.5}}, "items[3].spec.priority"),
]


@pytest.mark.parametrize(("spec", "path"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_pod_names_the_json_path(spec: dict[str, Any], path: str) -> None:
    obj = {"metadata": {"name": "p", "uid": "u"}, **spec}
    if "metadata" in spec:
        obj["metadata"] = {"uid": "u", **spec["metadata"]}
    with pytest.raises(KubeObjectError) as exc:
        pod_from_kube(obj, "items[3]")
    assert exc.value.path == path


def test_bad_object_in_a_list_names_its_index() -> None:
    text = json.dumps(
        {
            "kind": "List",
            "items": [
                {"kind": "Node", "metadata": {"name": "a"}},
                {"kind": "Node", "metadata": {"name": "b"}, "spec": {"taints": [{"effect": 1}]}},
            ],
        }
    )
    with pytest.raises(KubeObjectError) as exc:
        load_objects(text)
    assert exc.value.path == "items[1].spec.taints[0].effect"
    with pytest.raises(KubeObjectError) as exc:
        load_objects('{"metadata": {"name": "x"}}')
    assert exc.value.path == "kind"


def test_namespace_from_kube() -> None:
    ns = namespace_from_kube({"metadata": {"name": "shop", "labels": {"team": "a"}}})
    assert ns == pb.Namespace(name="shop", labels={"team": "a"})


def _pod(labels: dict[str, str], owner: dict[str, Any] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "web-1", "namespace": "shop", "labels": labels}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {"kind": "Pod", "metadata": meta, "spec": {}}


SERVICE = {
    "kind": "Service",
    "apiVersion": "v1",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {"selector": {"app": "web"}},
}
OTHER_NS_SERVICE = {**SERVICE, "metadata": {"name": "web", "namespace": "default"}}
NOT_MATCHING_SERVICE = {**SERVICE, "spec": {"selector": {"app": "db"}}}
REPLICA_SET = {
    "kind": "ReplicaSet",
    "apiVersion": "apps/v1",
    "metadata": {"name": "web-abc", "namespace": "shop"},
    "spec": {
        "selector": {
            "matchLabels": {"app": "web", "pod-template-hash": "abc"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}],
        }
    },
}
RS_OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "controller": True}
LABELS = {"app": "web", "pod-template-hash": "abc", "tier": "front"}


def test_default_selector_from_service_and_replica_set() -> None:
    sel = default_selector_for(
        _pod(LABELS, RS_OWNER), [SERVICE, OTHER_NS_SERVICE, NOT_MATCHING_SERVICE, REPLICA_SET]
    )
    assert sel is not None
    got = CONVERTER.pod_from_pb(pb.Pod(uid="u", default_selector=sel), "p").default_selector
    assert got == model.LabelSelector(
        match_labels=(("app", "web"), ("pod-template-hash", "abc")),
        match_expressions=(model.LabelSelectorRequirement("tier", "In", ("front",)),),
    )
    assert got.matches(LABELS)


def test_default_selector_service_only_and_none() -> None:
    sel = default_selector_for(_pod(LABELS), [SERVICE, REPLICA_SET])
    assert sel == pb.LabelSelector(match_labels={"app": "web"})  # no controller: kube skips the RS
    assert default_selector_for(_pod({"app": "db"}), [SERVICE]) is None
    assert default_selector_for(_pod(LABELS), [OTHER_NS_SERVICE]) is None


def test_load_objects_fills_default_selector() -> None:
    objs = [SERVICE, REPLICA_SET, _pod(LABELS, RS_OWNER)]
    _, pods, _ = load_objects(json.dumps({"kind": "List", "items": objs}))
    assert pods[0].HasField("default_selector")
    assert dict(pods[0].default_selector.match_labels) == {"app": "web", "pod-template-hash": "abc"}
