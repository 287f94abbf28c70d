"""No field silently ignored: what kube-scheduler acts on and we do not model is refused or
reported (clients/schedsvc_client/unmodelled.py), and what real pods carry is read as kube
counts it (sidecars, pod-level resources, PriorityClasses, an in-place resize in progress).

Pods here are shaped as the official `kubernetes` Python client prints them
(`ApiClient().sanitize_for_serialization(pod)`: camelCase keys, None fields dropped, times as
ISO strings, a PodList's items without `kind`), which is also what `kubectl get -o json` prints.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from schedsvc.server.convert import Converter
from schedsvc_client.kube import KubeObjectError, load_objects, pod_from_kube
from schedsvc_client.load import main
from schedsvc_client.unmodelled import LoadReport, UnmodelledFieldWarning

CONVERTER = Converter()  # one server's conversion and caches, shared by these tests


def client_pod(name: str = "web-0", **spec: Any) -> dict[str, Any]:
    """A pending pod as sanitize_for_serialization prints a V1Pod read from the API."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": "2025-05-01T10:00:00+00:00",
            "name": name,
            "namespace": "shop",
            "resourceVersion": "4711",
            "uid": f"uid-{name}",
        },
        "spec": {
            "containers": [
                {
                    "image": "nginx:1.27",
                    "name": "web",
                    "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                    "terminationMessagePath": "/dev/termination-log",
                }
            ],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True,
            "priority": 0,
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "serviceAccountName": "default",
            "volumes": [
                {
                    "name": "kube-api-access-x",
                    "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {
                        "expirationSeconds": 3607, "path": "token"}}]},
                }
            ],
            **spec,
        },
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }


def pod_list(*pods: dict[str, Any]) -> str:
    """A V1PodList through sanitize_for_serialization: items carry no kind."""
    items = []
    for p in pods:
        p = copy.deepcopy(p)
        p.pop("kind", None)
        p.pop("apiVersion", None)
        items.append(p)
    return json.dumps({"apiVersion": "v1", "kind": "PodList", "items": items,
                       "metadata": {"resourceVersion": "5000"}})


# field (as reported) -> (spec/metadata/status patch, JSON path of the refusal, words of "why")
REFUSED: dict[str, tuple[dict[str, Any], str, str]] = {
    "spec.schedulingGates": (
        {"spec": {"schedulingGates": [{"name": "example.com/quota"}]}},
        "items[0].spec.schedulingGates",
        "SchedulingGates",
    ),
    "spec.resourceClaims": (
        {"spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-t"}]}},
        "items[0].spec.resourceClaims",
        "DynamicResources",
    ),
    "metadata.deletionTimestamp": (
        {"metadata": {"deletionTimestamp": "2025-05-01T10:05:00+00:00"}},
        "items[0].metadata.deletionTimestamp",
        "being deleted",
    ),
    "spec.priorityClassName": (
        {"spec": {"priority": None, "priorityClassName": "batch-low"}},
        "items[0].spec.priorityClassName",
        "PriorityClass 'batch-low' is not in the input",
    ),
    "status.containerStatuses[].resources": (
        {"status": {"containerStatuses": [{"name": "web", "resources": {
            "requests": {"cpu": "500m"}}}]}},
        "items[0].status.containerStatuses[0].resources",
        "in-place resize",
    ),
    "status.containerStatuses[].allocatedResources": (
        {"status": {"containerStatuses": [{"name": "web", "allocatedResources": {
            "cpu": "500m"}}]}},
        "items[0].status.containerStatuses[0].allocatedResources",
        "in-place resize",
    ),
    "status.initContainerStatuses[].resources": (
        {"status": {"initContainerStatuses": [{"name": "s", "resources": {}}]}},
        "items[0].status.initContainerStatuses[0].resources",
        "in-place resize",
    ),
}
# kube v1.37's NodeDeclaredFeatures filter: the pod needs a feature nodes declare
_WEB = {"image": "nginx:1.27", "name": "web",
        "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}}
_RESTART_ALL = [{"action": "RestartAllContainers",
                 "exitCodes": {"operator": "In", "values": [42]}}]
_BIND = [{"name": "data", "mountPath": "/data", "bindMountOptions": ["nosuid", "nodev"]}]
REFUSED.update({
    "spec.containers[].restartPolicyRules[].action: RestartAllContainers": (
        {"spec": {"containers": [{**_WEB, "restartPolicyRules": _RESTART_ALL}]}},
        "items[0].spec.containers[0].restartPolicyRules[0].action",
        "RestartAllContainersOnContainerExits",
    ),
    "spec.initContainers[].restartPolicyRules[].action: RestartAllContainers": (
        {"spec": {"initContainers": [{"image": "busybox", "name": "init",
                                      "restartPolicyRules": _RESTART_ALL}]}},
        "items[0].spec.initContainers[0].restartPolicyRules[0].action",
        "NodeDeclaredFeatures",
    ),
    "spec.hostUsers": (
        {"spec": {"hostNetwork": True, "hostUsers": False}},
        "items[0].spec.hostUsers",
        "UserNamespacesHostNetworkSupport",
    ),
    "spec.containers[].volumeMounts[].bindMountOptions": (
        {"spec": {"containers": [{**_WEB, "volumeMounts": _BIND}],
                  "volumes": [{"name": "data", "emptyDir": {}}]}},
        "items[0].spec.containers[0].volumeMounts[0].bindMountOptions",
        "VolumeBindMountOptions",
    ),
    "spec.ephemeralContainers[].volumeMounts[].bindMountOptions": (
        {"spec": {"ephemeralContainers": [{"image": "busybox", "name": "debug",
                                           "volumeMounts": _BIND}],
                  "volumes": [{"name": "data", "emptyDir": {}}]}},
        "items[0].spec.ephemeralContainers[0].volumeMounts[0].bindMountOptions",
        "v1.37's NodeDeclaredFeatures",
    ),
})
def _patched(patch: dict[str, Any], name: str = "web-0") -> dict[str, Any]:
    pod = client_pod(name)
    for part, fields in patch.items():
        for k, v in fields.items():
            if v is None:
                pod[part].pop(k, None)
            else:
                pod[part][k] = v
    return pod


@pytest.mark.parametrize("field", list(REFUSED))
def test_unmodelled_field_is_refused_with_its_name_and_why(field: str) -> None:
    patch, path, why = REFUSED[field]
    with pytest.raises(KubeObjectError) as exc:
        load_objects(pod_list(_patched(patch)))
    assert exc.value.path == path
    assert why in exc.value.description
    assert "ignore_unmodelled=True" in exc.value.description


@pytest.mark.parametrize("field", list(REFUSED))
def test_lenient_mode_reports_the_field_per_count(field: str) -> None:
    patch, path, _ = REFUSED[field]
    report = LoadReport()
    plain = client_pod("plain")
    _, pods, _ = load_objects(
        pod_list(_patched(patch, "a"), plain, _patched(patch, "b")),
        ignore_unmodelled=True,
        report=report,
    )
    assert [p.name for p in pods] == ["a", "plain", "b"]
    assert list(report.ignored) == [field]
    entry = report.ignored[field]
    assert (entry.count, entry.pods, entry.first) == (2, 2, path)
    assert f"ignored {field}: 2 time(s) in 2 pod(s)" in report.render()
    for i, p in enumerate(pods):  # what is scheduled is what the server accepts
        CONVERTER.pod_from_pb(p, f"pods[{i}]")


def test_lenient_mode_without_a_report_warns() -> None:
    patch, _, _ = REFUSED["spec.schedulingGates"]
    with pytest.warns(UnmodelledFieldWarning, match="spec.schedulingGates: 1 time"):
        load_objects(pod_list(_patched(patch)), ignore_unmodelled=True)


def test_the_issue_example_pvc_and_gate_from_the_python_client() -> None:
    """A pod with a PVC and a scheduling gate: kube would not schedule it at all. The gate is
    unmodelled; the claim is converted (issue 26) and left to the volume plugins."""
    pod = client_pod(
        schedulingGates=[{"name": "example.com/wait"}],
        volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "db"}}],
    )
    with pytest.raises(KubeObjectError, match="SchedulingGates"):
        pod_from_kube(pod)
    report = LoadReport()
    pod_from_kube(pod, ignore_unmodelled=True, report=report)
    assert {k: v.count for k, v in report.ignored.items()} == {"spec.schedulingGates": 1}
    assert pod_from_kube(pod, ignore_unmodelled=True, report=LoadReport()).volumes[
        0].persistent_volume_claim.claim_name == "db"


def test_a_bound_pod_is_not_audited() -> None:
    """Its resource claims cannot change the answer for a pod that has none (DynamicResources
    skips such a pod), and a pending pod that has some is refused. Its volumes are converted,
    as every pod's are: the volume plugins count them on its node."""
    bound = client_pod(nodeName="n1",
                       volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "db"}}],
                       resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-0"}])
    _, pods, _ = load_objects(pod_list(bound))
    assert pods[0].node_name == "n1"
    assert [v.persistent_volume_claim.claim_name for v in pods[0].volumes] == ["db"]


def test_modelled_and_harmless_fields_pass_silently() -> None:
    """Projected, configMap, secret, emptyDir, hostPath and inline csi volumes are read by no
    default plugin (NodeVolumeLimits counts inline volumes only when migratable to CSI)."""
    vols = [{"name": n, src: body} for n, src, body in (
        ("a", "configMap", {"name": "cfg"}), ("b", "secret", {"secretName": "s"}),
        ("c", "emptyDir", {}), ("d", "hostPath", {"path": "/var/log"}),
        ("e", "csi", {"driver": "secrets-store.csi.k8s.io"}), ("f", "downwardAPI", {}),
    )]
    report = LoadReport()
    _, pods, _ = load_objects(pod_list(client_pod(volumes=vols)), report=report)
    assert not report.ignored
    assert [(v.name, v.WhichOneof("source")) for v in pods[0].volumes] == [
        ("a", "other"), ("b", "other"), ("c", "other"), ("d", "other"), ("e", "csi"),
        ("f", "other")]
    assert [v.other for v in pods[0].volumes] == [
        "configMap", "secret", "emptyDir", "hostPath", "", "downwardAPI"]


def test_what_node_declared_features_does_not_infer_from_passes_silently() -> None:
    """Only RestartAllContainers rules, hostNetwork with hostUsers: false and bindMountOptions
    make kube v1.37.2's NodeDeclaredFeatures require a node feature; their neighbours do not."""
    report = LoadReport()
    pods = [
        client_pod("restart", containers=[{**_WEB, "restartPolicyRules": [
            {"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}]}]),
        client_pod("userns", hostUsers=False),  # no hostNetwork
        client_pod("hostnet", hostNetwork=True, hostUsers=True),
        client_pod("mounts", containers=[{**_WEB, "volumeMounts": [
            {"name": "data", "mountPath": "/d", "bindMountOptions": []}]}],
            volumes=[{"name": "data", "emptyDir": {}}]),
    ]
    _, got, _ = load_objects(pod_list(*pods), report=report)
    assert len(got) == 4 and not report.ignored


def test_priority_class_resolves_as_the_admission_plugin_does() -> None:
    classes = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "high"}, "value": 1000},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "everyone"}, "value": 7, "globalDefault": True},
    ]
    a = _patched({"spec": {"priority": None, "priorityClassName": "high"}}, "a")
    b = _patched({"spec": {"priority": None}}, "b")
    c = _patched({"spec": {"priority": None, "priorityClassName": "system-node-critical"}}, "c")
    text = json.dumps({"kind": "List", "items": [*classes, a, b, c]})
    _, pods, _ = load_objects(text)
    assert [p.priority for p in pods] == [1000, 7, 2000001000]


def test_sidecars_and_pod_level_resources_are_carried() -> None:
    pod = client_pod(
        initContainers=[
            {"name": "istio-proxy", "image": "proxyv2", "restartPolicy": "Always",
             "resources": {"limits": {"cpu": "2", "memory": "1Gi"},
                           "requests": {"cpu": "100m"}}},
            {"name": "migrate", "image": "tool", "resources": {"requests": {"cpu": "1"}}},
        ],
        resources={"limits": {"cpu": "4", "memory": "2Gi"}},
    )
    p = pod_from_kube(pod)
    sidecar, init = p.init_containers
    assert sidecar.restart_policy == "Always" and init.restart_policy == ""
    # A limit stands in for a missing request (SetDefaults_Pod): memory 1Gi.
    assert dict(sidecar.requests) == {"cpu": "100m", "memory": "1Gi"}
    # Pod-level limits only: the API server defaults the pod-level request of cpu and memory
    # to the containers' aggregate: cpu max(250m + 100m, 1 + 100m) = 1100m, memory
    # 64Mi + 1Gi = 1088Mi (= 1140850688 bytes).
    requests = {k: v for k, v in p.resources.requests.items()}
    domain = CONVERTER.pod_from_pb(p, "pod")
    assert domain.requests == {"cpu": 1100, "memory": 1088 * 1024 * 1024}, requests


@pytest.mark.parametrize(
    ("where", "container", "message"),
    [
        ("containers", {"name": "app", "restartPolicy": "Always"}, "only init containers"),
        ("initContainers", {"name": "i", "restartPolicy": "OnFailure"}, "only to Always"),
    ],
)
def test_restart_policy_outside_kube_validation_is_refused(
    where: str, container: dict[str, Any], message: str
) -> None:
    with pytest.raises(KubeObjectError, match=message) as exc:
        pod_from_kube(client_pod(**{where: [container]}))
    assert exc.value.path == f"spec.{where}[0].restartPolicy"


def test_unsupported_pod_level_resource_is_refused() -> None:
    pod = client_pod(resources={"requests": {"example.com/gpu": "1"}})
    with pytest.raises(KubeObjectError) as exc:
        pod_from_kube(pod)
    assert exc.value.path == "spec.resources.requests.example.com/gpu"


def test_bound_pod_in_place_resize_counts_the_larger() -> None:
    """A bound pod mid-resize holds max(spec, status.resources, allocatedResources) on its
    node; while the resize is Infeasible, only the status values."""
    status = {"phase": "Running", "containerStatuses": [{
        "name": "web", "allocatedResources": {"cpu": "500m", "memory": "32Mi"},
        "resources": {"requests": {"cpu": "300m", "memory": "32Mi"}}}]}
    pod = client_pod(nodeName="n1")
    pod["status"] = status
    assert dict(pod_from_kube(pod).containers[0].requests) == {"cpu": "500m", "memory": "64Mi"}
    pod["status"] = {**status, "conditions": [{"type": "PodResizePending",
                                                "reason": "Infeasible", "status": "True"}]}
    assert dict(pod_from_kube(pod).containers[0].requests) == {"cpu": "500m", "memory": "32Mi"}


def _replay_files(tmp_path: Path) -> tuple[Path, Path]:
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"kind": "NodeList", "items": [
        {"metadata": {"name": "a"},
         "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}]}))
    pods = tmp_path / "pods.json"
    gated = client_pod("gated", schedulingGates=[{"name": "example.com/wait"}])
    sidecar = client_pod("meshed", initContainers=[
        {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1600m"}}}])
    pods.write_text(pod_list(gated, sidecar))
    return nodes, pods


def test_replay_refuses_an_unmodelled_field(tmp_path: Path, capsys: Any) -> None:
    nodes, pods = _replay_files(tmp_path)
    rc = main(["replay", "--nodes", str(nodes), "--pods", str(pods), "--target", "127.0.0.1:1"])
    assert rc == 1
    err = capsys.readouterr().err
    assert f"{pods}:items[0].spec.schedulingGates: not modelled" in err


def test_replay_lenient_reports_and_schedules(make_server: Any, tmp_path: Path,
                                              capsys: Any) -> None:
    server, _ = make_server(seed=1)
    nodes, pods = _replay_files(tmp_path)
    rc = main(["replay", "--nodes", str(nodes), "--pods", str(pods), "--ignore-unmodelled",
               "--target", f"127.0.0.1:{server.port}"])
    assert rc == 0
    out = capsys.readouterr().out.splitlines()
    assert any(ln.startswith("ignored spec.schedulingGates: 1 time(s) in 1 pod(s)") for ln in out)
    assert "to schedule: 1 with sidecars, 0 with pod-level resources" in out[1]
    # node a has 2 cpu: the gated pod (250m) goes first, leaving 1750m; the sidecar's 1600m
    # + the app's 250m = 1850m do not fit (kube counts the sidecar beside the app container;
    # the max of init and app containers, 1600m, would).
    assert "shop/gated\tSCHEDULED\ta" in out
    assert any(ln.startswith("shop/meshed\tUNSCHEDULABLE\t0/1 nodes are available: "
                             "1 Insufficient cpu") for ln in out)
