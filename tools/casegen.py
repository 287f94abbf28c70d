"""Random clusters in the shared/conformance case format, deterministic from a seed.

`generate(seed, n)` yields n cases (`{"id", "nodes", "pods", "pod", "objects",
"percentageOfNodesToScore": 100, "preemption", "features"}`) with Kubernetes JSON as the API
server stores it: nodes with zones/regions, hostnames, taints (not-ready with
tolerationSeconds), capacities (cpu, memory, pods, ephemeral-storage, hugepages-2Mi,
example.com/gpu), images, unschedulable; bound pods and the pod to schedule with requests and
limits, init containers and sidecars, pod-level resources, overhead, node and pod (anti-)affinity
(namespaces, namespaceSelector, matchLabelKeys), topology spread, tolerations, host ports,
priorities, owners; Namespaces, ReplicaSets, Services, PodDisruptionBudgets and PriorityClasses
as full apiVersion/kind objects. Case i depends only on (seed, i).

What the API server would have done before a scheduler sees a pod is done here too, so kube
(which reads these JSON objects without an API server) and our reader see the same pod:
`spec.priority` (and `preemptionPolicy`) set from the pod's PriorityClass, matchLabelKeys merged
into the label selector. Only fields our reader models are used (docs/kube-fields.md): the pod
to schedule never has `spec.nodeName` (our reader reads such a pod as bound, and kube's
scheduler never schedules it), volumes, claims or scheduling gates.

`python -m tools.casegen --seed S -n N [-o FILE]` writes them as JSONL.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["FEATURES", "dump_cases", "generate", "make_case", "main"]

Obj = dict[str, Any]

ZONES = {"zone-a": "region-1", "zone-b": "region-1", "zone-c": "region-2", "zone-d": "region-2"}
HOST, ZONE, REGION = "kubernetes.io/hostname", "topology.kubernetes.io/zone", (
    "topology.kubernetes.io/region"
)
NOT_READY = "node.kubernetes.io/not-ready"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
GPU = "example.com/gpu"
HUGE = "hugepages-2Mi"
IMAGES = {
    "registry.local/web:1": 80_000_000,
    "registry.local/db:3": 450_000_000,
    "registry.local/ml:7": 1_200_000_000,
    "registry.local/tiny:1": 5_000_000,
    "registry.local/cache:2": 300_000_000,
}
APPS = ("a", "b", "c", "d")
HASHES = {"a": "7c6d5e4f3", "b": "5b8f9d6c7", "c": "6f7a8b9c0", "d": "84d9c7b6a"}
NAMESPACES = {"default": {"env": "prod"}, "other": {"env": "dev"}, "team-x": {"env": "prod",
              "team": "x"}}
PRIORITY_CLASSES = {"low": (-5, "PreemptLowerPriority"), "batch": (100, "Never"),
                    "normal": (500, "PreemptLowerPriority"), "high": (1000, "PreemptLowerPriority"),
                    "critical": (3000, "PreemptLowerPriority")}
TAINTS: tuple[Obj, ...] = (
    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "spot", "value": "1", "effect": "PreferNoSchedule"},
    {"key": "noisy", "value": "1", "effect": "PreferNoSchedule"},
    {"key": "old", "value": "1", "effect": "NoExecute"},
    {"key": "maintenance", "effect": "NoSchedule"},
)
CPU = ("100m", "250m", "0.5", "500m", "1", "1.0", "1500m", "2", "3", "4", "6")
MEM = ("64Mi", "128Mi", "134M", "256Mi", "512Mi", "536870912", "1Gi", "1073M", "2048Mi", "4Gi",
       "4294M", "8Gi")
EPHEMERAL = ("1Gi", "5Gi", "500Mi")

# what a case can exercise; every one appears in a few hundred cases (tests/test_casegen.py)
FEATURES = (
    "zones", "regions", "taints", "notReady", "unschedulable", "hugepages", "extendedResource",
    "images", "limits", "initContainers", "sidecars", "podResources", "overhead",
    "nodeSelector", "nodeAffinityRequired", "nodeAffinityPreferred", "matchFields",
    "podAffinity", "podAntiAffinity", "preferredPodAffinity", "namespaceSelector",
    "affinityMatchLabelKeys", "existingPodAffinity", "topologySpread", "spreadMatchLabelKeys",
    "minDomains", "spreadPolicies", "tolerations", "hostPorts", "priorityClass",
    "preemptionPolicyNever", "owners", "nominatedNodeName", "preemption", "pdb",
    "terminatingPod", "largeCluster",
)


_SUFFIX = {"m": 0.001, "k": 1e3, "M": 1e6, "G": 1e9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def _value(q: str) -> int:
    """A quantity of this module's vocabulary in milli-units for cpu-like, units otherwise:
    cpu in millicores ("500m", "1.5"), memory in bytes rounded up to MiB ("134M", "1Gi")."""
    for suffix in ("Ki", "Mi", "Gi", "m", "k", "M", "G"):
        if q.endswith(suffix):
            v = float(q[: -len(suffix)]) * _SUFFIX[suffix]
            return int(v * 1000) if suffix == "m" else -(-int(v) // 2**20) * 2**20
    v = float(q)
    return int(v * 1000) if v < 1000 else -(-int(v) // 2**20) * 2**20


def _ref(rs: Obj) -> Obj:
    meta = rs["metadata"]
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": meta["name"],
            "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


class _Case:
    """One case under construction: the random source, what it has used, its objects."""

    def __init__(self, rng: random.Random, case_id: str) -> None:
        self.rng = rng
        self.id = case_id
        self.features: set[str] = set()
        self.preemption = rng.random() < 0.35
        self.replica_sets: dict[tuple[str, str], Obj] = {}
        self.services: dict[tuple[str, str], Obj] = {}
        self.owned = rng.random() < 0.4

    def chance(self, p: float, feature: str | None = None) -> bool:
        hit = self.rng.random() < p
        if hit and feature:
            self.features.add(feature)
        return hit

    # --- nodes ------------------------------------------------------------------------------

    def node(self, i: int, zoned: bool) -> Obj:
        rng = self.rng
        name = f"n{i}"
        labels = {HOST: name, "disktype": rng.choice(("ssd", "hdd")),
                  "gen": str(rng.randint(1, 5))}
        if zoned and rng.random() < 0.93:
            zone = rng.choice(sorted(ZONES))
            labels[ZONE] = zone
            self.features.add("zones")
            if self.chance(0.8, "regions"):
                labels[REGION] = ZONES[zone]
        alloc = {"cpu": rng.choice(("2", "3500m", "4", "8", "16", "32")),
                 "memory": rng.choice(("4Gi", "8Gi", "12000Mi", "16Gi", "32Gi", "64Gi")),
                 "pods": rng.choice(("4", "8", "16", "110", "110")),
                 "ephemeral-storage": rng.choice(("20Gi", "100Gi"))}
        if self.chance(0.2, "hugepages"):
            alloc[HUGE] = rng.choice(("512Mi", "1Gi", "2Gi"))
        if self.chance(0.2, "extendedResource"):
            alloc[GPU] = rng.choice(("1", "2", "4"))
            labels["gpu"] = "true"
        spec: Obj = {}
        taints = [dict(t) for t in rng.sample(TAINTS, rng.choice((0, 0, 0, 1, 1, 2)))]
        if self.chance(0.08, "notReady"):
            taints.append({"key": NOT_READY, "effect": "NoExecute",
                           "timeAdded": "2026-11-20T10:00:00Z"})
            if rng.random() < 0.5:
                taints.append({"key": NOT_READY, "effect": "NoSchedule"})
        if self.chance(0.06, "unschedulable"):
            spec["unschedulable"] = True
            taints.append({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule",
                           "timeAdded": "2026-11-20T10:00:00Z"})
        if taints:
            self.features.add("taints")
            spec["taints"] = taints
        images = [{"names": [img], "sizeBytes": IMAGES[img]}
                  for img in rng.sample(sorted(IMAGES), rng.randint(0, 3))]
        status: Obj = {"capacity": dict(alloc), "allocatable": alloc}
        if images:
            self.features.add("images")
            status["images"] = images
        return {"metadata": {"name": name, "labels": labels}, "spec": spec, "status": status}

    # --- pods -------------------------------------------------------------------------------

    def requests(self, heavy: bool, gpu_ok: bool, huge_ok: bool) -> tuple[Obj, Obj]:
        """(requests, limits) of one container."""
        rng = self.rng
        req: Obj = {}
        if rng.random() < 0.9:
            req["cpu"] = rng.choice(CPU[5:] if heavy else CPU[:7])
        if rng.random() < 0.85:
            req["memory"] = rng.choice(MEM[6:] if heavy else MEM[:9])
        if rng.random() < 0.1:
            req["ephemeral-storage"] = rng.choice(EPHEMERAL)
        limits: Obj = {}
        if gpu_ok and self.chance(0.3, "extendedResource"):
            req[GPU] = limits[GPU] = rng.choice(("1", "2"))
        if huge_ok and self.chance(0.25, "hugepages"):
            req[HUGE] = limits[HUGE] = rng.choice(("256Mi", "512Mi", "1Gi"))
            req.setdefault("memory", "128Mi")
        if rng.random() < 0.2 and "memory" in req:
            limits["memory"] = req["memory"]
        if self.chance(0.08, "limits"):
            # A limit without a request: the API server defaults the request to the limit and
            # stores both, which is what a scheduler (and the oracle, without an API server)
            # reads; our reader defaults the same way from either form.
            for k in ("cpu", "memory"):
                if k in req:
                    limits[k] = req[k]
        return req, limits

    def container(self, name: str, heavy: bool, gpu_ok: bool = False, huge_ok: bool = False,
                  ports: bool = False, taken: set[int] | None = None) -> Obj:
        """One container; with `ports`, maybe a host port not in `taken` (the ports the node's
        pods already hold: kube never binds two pods with one host port to a node, and its
        NodeInfo would free the port when either left)."""
        req, limits = self.requests(heavy, gpu_ok, huge_ok)
        c: Obj = {"name": name, "image": self.rng.choice(sorted(IMAGES))}
        res: Obj = {}
        if req:
            res["requests"] = req
        if limits:
            res["limits"] = limits
        if res:
            c["resources"] = res
        port = self.rng.choice((7000, 8080, 9090))
        if ports and (taken is None or port not in taken) and self.chance(0.15, "hostPorts"):
            if taken is not None:
                taken.add(port)
            c["ports"] = [{"containerPort": port, "hostPort": port,
                           "protocol": self.rng.choice(("TCP", "TCP", "UDP"))}]
        return c

    def priority(self, spec: Obj, bound: bool) -> None:
        rng = self.rng
        if not self.preemption and rng.random() < 0.7:
            return
        if rng.random() < 0.5:
            name = rng.choice(sorted(PRIORITY_CLASSES))
            value, policy = PRIORITY_CLASSES[name]
            self.features.add("priorityClass")
            spec["priorityClassName"] = name
            spec["priority"] = value  # the Priority admission plugin's work
            if not bound:
                spec["preemptionPolicy"] = policy
                if policy == "Never":
                    self.features.add("preemptionPolicyNever")
        else:
            spec["priority"] = rng.choice((-5, 0, 0, 10, 100, 500, 1000, 1500))
            if not bound and self.chance(0.08, "preemptionPolicyNever"):
                spec["preemptionPolicy"] = "Never"

    def selector(self, app: str, merged_hash: bool = False) -> Obj:
        rng = self.rng
        r = rng.random()
        if r < 0.5:
            sel: Obj = {"matchLabels": {"app": app}}
        elif r < 0.8:
            sel = {"matchExpressions": [{"key": "app", "operator": "In",
                                         "values": sorted({app, rng.choice(APPS)})}]}
        else:
            sel = {"matchExpressions": [{"key": "app", "operator": rng.choice(("NotIn",)),
                                         "values": [rng.choice(APPS)]}]}
        return sel

    def affinity_term(self, app: str, labels: Obj, own_ns: str) -> Obj:
        rng = self.rng
        term: Obj = {"labelSelector": self.selector(app),
                     "topologyKey": rng.choice((HOST, HOST, ZONE, REGION))}
        r = rng.random()
        if r < 0.2:
            term["namespaces"] = sorted({own_ns, rng.choice(sorted(NAMESPACES))})
        elif r < 0.45:
            self.features.add("namespaceSelector")
            term["namespaceSelector"] = rng.choice(
                ({"matchLabels": {"env": "prod"}}, {}, {"matchLabels": {"team": "x"}}))
        hashed = "pod-template-hash" in labels
        if hashed and self.chance(0.25, "affinityMatchLabelKeys"):
            key = "matchLabelKeys" if rng.random() < 0.6 else "mismatchLabelKeys"
            term[key] = ["pod-template-hash"]
            op = "In" if key == "matchLabelKeys" else "NotIn"
            # the API server merges the keys into the selector when it admits the pod
            term["labelSelector"] = {**term["labelSelector"], "matchExpressions": [
                *term["labelSelector"].get("matchExpressions", []),
                {"key": "pod-template-hash", "operator": op,
                 "values": [labels["pod-template-hash"]]}]}
        return term

    def pod_affinity(self, app: str, labels: Obj, ns: str, pending: bool) -> Obj:
        rng = self.rng
        aff: Obj = {}
        for kind, feat in (("podAffinity", "podAffinity"), ("podAntiAffinity", "podAntiAffinity")):
            part: Obj = {}
            if rng.random() < (0.25 if pending else 0.5):
                part["requiredDuringSchedulingIgnoredDuringExecution"] = [
                    self.affinity_term(app, labels, ns)]
                self.features.add(feat if pending else "existingPodAffinity")
            if rng.random() < (0.3 if pending else 0.5):
                part["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": rng.randint(1, 100),
                     "podAffinityTerm": self.affinity_term(app, labels, ns)}
                    for _ in range(rng.randint(1, 2))]
                self.features.add("preferredPodAffinity" if pending else "existingPodAffinity")
            if part:
                aff[kind] = part
        return aff

    def owner(self, meta: Obj, app: str, ns: str) -> None:
        """Own the pod by its app's ReplicaSet; a Service selects the app."""
        h = HASHES[app]
        meta["labels"]["pod-template-hash"] = h
        key = (ns, app)
        if key not in self.replica_sets:
            name = f"{app}-{h}"
            sel = {"app": app, "pod-template-hash": h}
            self.replica_sets[key] = {
                "apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": name, "namespace": ns, "uid": f"rs-{ns}-{name}"},
                "spec": {"replicas": 3, "selector": {"matchLabels": sel}, "template": {
                    "metadata": {"labels": sel},
                    "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
            if self.rng.random() < 0.8:
                self.services[key] = {
                    "apiVersion": "v1", "kind": "Service",
                    "metadata": {"name": f"svc-{app}", "namespace": ns},
                    "spec": {"selector": {"app": app}, "ports": [{"port": 80}]}}
        meta["ownerReferences"] = [_ref(self.replica_sets[key])]
        self.features.add("owners")

    def bound_pod(self, node: Obj, j: int, taken: set[int]) -> Obj:
        rng = self.rng
        name = f"b{node['metadata']['name'][1:]}-{j}"
        ns = rng.choice(("default", "default", "other", "team-x"))
        app = rng.choice(APPS)
        meta: Obj = {"name": name, "uid": f"uid-{name}", "namespace": ns,
                     "labels": {"app": app}}
        if self.owned and rng.random() < 0.6:
            self.owner(meta, app, ns)
        alloc = node["status"]["allocatable"]
        containers = [self.container("c", heavy=rng.random() < 0.3, gpu_ok=GPU in alloc,
                                     huge_ok=HUGE in alloc, ports=True, taken=taken)]
        spec: Obj = {"nodeName": node["metadata"]["name"], "schedulerName": "default-scheduler",
                     "containers": containers}
        if rng.random() < 0.15:
            spec["initContainers"] = [self.container("init", heavy=False)]
            if rng.random() < 0.5:
                spec["initContainers"][0]["restartPolicy"] = "Always"
        if rng.random() < 0.2:
            aff = self.pod_affinity(app, meta["labels"], ns, pending=False)
            if aff:
                spec["affinity"] = aff
        self.priority(spec, bound=True)
        day, hour = rng.randint(1, 28), rng.randint(0, 23)
        status: Obj = {"phase": "Running", "startTime": f"2026-11-{day:02d}T{hour:02d}:00:00Z"}
        if self.preemption and self.chance(0.02, "terminatingPod"):
            meta["deletionTimestamp"] = "2026-11-29T00:00:00Z"
            status["conditions"] = [{"type": "DisruptionTarget", "status": "True",
                                     "reason": "PreemptionByScheduler"}]
        return {"metadata": meta, "spec": spec, "status": status}

    def pending_pod(self, nodes: list[Obj]) -> Obj:
        rng = self.rng
        ns = rng.choice(("default", "default", "default", "other", "team-x"))
        app = rng.choice(APPS)
        meta: Obj = {"name": "p", "uid": f"uid-p{self.id}", "namespace": ns,
                     "labels": {"app": app}}
        if self.owned and rng.random() < 0.7:
            self.owner(meta, app, ns)
        heavy = rng.random() < (0.5 if self.preemption else 0.3)
        own: set[int] = set()  # API validation: a host port once per pod
        containers = [self.container("c", heavy, gpu_ok=True, huge_ok=True, ports=True,
                                     taken=own)]
        if rng.random() < 0.25:
            containers.append(self.container("side", heavy=False, ports=True, taken=own))
        spec: Obj = {"schedulerName": "default-scheduler", "containers": containers}
        inits: list[Obj] = []
        for k in range(rng.choice((0, 0, 0, 1, 2, 3))):
            c = self.container(f"init{k}", heavy=rng.random() < 0.3, ports=True, taken=own)
            if rng.random() < 0.5:
                c["restartPolicy"] = "Always"
                self.features.add("sidecars")
            else:
                self.features.add("initContainers")
            inits.append(c)
        if inits:
            spec["initContainers"] = inits
        if self.chance(0.12, "podResources"):
            spec["resources"] = self.pod_resources(containers, inits)
        if self.chance(0.05, "overhead"):
            spec["overhead"] = {"cpu": "250m", "memory": "120Mi"}
        if self.chance(0.2, "nodeSelector"):
            spec["nodeSelector"] = rng.choice(({"disktype": "ssd"}, {"disktype": "hdd"},
                                               {ZONE: "zone-b"}, {REGION: "region-1"}))
        aff: Obj = {}
        node_aff = self.node_affinity(nodes)
        if node_aff:
            aff["nodeAffinity"] = node_aff
        if rng.random() < 0.5:
            aff.update(self.pod_affinity(app, meta["labels"], ns, pending=True))
        if aff:
            spec["affinity"] = aff
        tols = self.tolerations()
        if tols:
            spec["tolerations"] = tols
        spread = self.spread(app, meta["labels"])
        if spread:
            spec["topologySpreadConstraints"] = spread
        self.priority(spec, bound=False)
        pod: Obj = {"metadata": meta, "spec": spec}
        if self.preemption and self.chance(0.1, "nominatedNodeName"):
            pod["status"] = {"nominatedNodeName": rng.choice(nodes)["metadata"]["name"]}
        return pod

    def pod_resources(self, containers: list[Obj], inits: list[Obj]) -> Obj:
        """Pod-level requests at least the containers' (API validation), cpu and memory."""
        rng = self.rng
        apps = [c.get("resources", {}) for c in containers]
        sidecars = [c.get("resources", {}) for c in inits if c.get("restartPolicy")]
        req: Obj = {}
        for key, unit in (("cpu", 1000), ("memory", 2**20)):
            if rng.random() < 0.8 or (key == "memory" and not req):
                def of(r: Obj, key: str = key) -> int:
                    return _value({**r.get("limits", {}), **r.get("requests", {})}.get(key, "0"))

                need = max([sum(of(r) for r in (*apps, *sidecars)),
                            *(of(c.get("resources", {})) + sum(of(r) for r in sidecars)
                              for c in inits)])
                extra = rng.choice((0, 1, 2, 4)) * unit * (1 if key == "cpu" else 512)
                req[key] = f"{(need + extra) // (1 if key == 'cpu' else unit)}" + (
                    "m" if key == "cpu" else "Mi")
        out: Obj = {"requests": req}
        if rng.random() < 0.3:
            out["limits"] = dict(req)
        return out

    def node_affinity(self, nodes: list[Obj]) -> Obj:
        rng = self.rng
        out: Obj = {}
        if self.chance(0.25, "nodeAffinityRequired"):
            terms = [{"matchExpressions": [self.node_requirement()]}
                     for _ in range(rng.randint(1, 2))]
            if self.chance(0.2, "matchFields"):
                # API validation: metadata.name takes exactly one value
                terms[0]["matchFields"] = [{"key": "metadata.name",
                                            "operator": rng.choice(("In", "NotIn")),
                                            "values": [rng.choice(nodes)["metadata"]["name"]]}]
            out["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
        if self.chance(0.3, "nodeAffinityPreferred"):
            out["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "preference": {
                    "matchExpressions": [self.node_requirement()]}}
                for _ in range(rng.randint(1, 3))]
        return out

    def node_requirement(self) -> Obj:
        rng = self.rng
        r = rng.random()
        if r < 0.3:
            return {"key": ZONE, "operator": rng.choice(("In", "NotIn")),
                    "values": sorted(rng.sample(sorted(ZONES), rng.randint(1, 2)))}
        if r < 0.45:
            return {"key": "gen", "operator": rng.choice(("Gt", "Lt")),
                    "values": [str(rng.randint(1, 4))]}
        if r < 0.6:
            return {"key": "gpu", "operator": rng.choice(("Exists", "DoesNotExist"))}
        if r < 0.75:
            return {"key": REGION, "operator": "In", "values": [rng.choice(("region-1",
                                                                            "region-2"))]}
        return {"key": "disktype", "operator": rng.choice(("In", "NotIn")),
                "values": [rng.choice(("ssd", "hdd"))]}

    def tolerations(self) -> list[Obj]:
        rng = self.rng
        out: list[Obj] = []
        for t in TAINTS:
            if rng.random() < 0.15:
                r = rng.random()
                if r < 0.4:
                    tol = {"key": t["key"], "operator": "Exists"}
                elif r < 0.7:
                    tol = {"key": t["key"], "operator": "Exists", "effect": t["effect"]}
                else:
                    tol = {"key": t["key"], "operator": "Equal", "value": t.get("value", ""),
                           "effect": t["effect"]}
                if t["effect"] == "NoExecute" and tol.get("effect") == "NoExecute":
                    tol["tolerationSeconds"] = 600
                out.append(tol)
        if rng.random() < 0.3:  # as the DefaultTolerationSeconds admission plugin adds them
            out.append({"key": NOT_READY, "operator": "Exists", "effect": "NoExecute",
                        "tolerationSeconds": 300})
            out.append({"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                        "effect": "NoExecute", "tolerationSeconds": 300})
        if rng.random() < 0.04:
            out.append({"key": UNSCHEDULABLE_TAINT, "operator": "Exists",
                        "effect": "NoSchedule"})
        if rng.random() < 0.02:
            out.append({"operator": "Exists"})
        if out:
            self.features.add("tolerations")
        return out

    def spread(self, app: str, labels: Obj) -> list[Obj]:
        rng = self.rng
        out: list[Obj] = []
        for key in (HOST, ZONE):
            if rng.random() >= 0.2:
                continue
            self.features.add("topologySpread")
            hard = rng.random() < 0.6
            c: Obj = {"maxSkew": rng.randint(1, 3), "topologyKey": key,
                      "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
                      "labelSelector": self.selector(app)}
            if hard and self.chance(0.2, "minDomains"):
                c["minDomains"] = rng.randint(2, 5)
            if self.chance(0.2, "spreadPolicies"):
                c["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
                c["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
            if "pod-template-hash" in labels and self.chance(0.4, "spreadMatchLabelKeys"):
                c["matchLabelKeys"] = ["pod-template-hash"]
                # merged into the selector by the API server (MatchLabelKeys...SelectorMerge)
                c["labelSelector"] = {**c["labelSelector"], "matchExpressions": [
                    *c["labelSelector"].get("matchExpressions", []),
                    {"key": "pod-template-hash", "operator": "In",
                     "values": [labels["pod-template-hash"]]}]}
            out.append(c)
        return out

    # --- objects ----------------------------------------------------------------------------

    def objects(self, pods: list[Obj]) -> list[Obj]:
        out: list[Obj] = [
            {"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns, **labels}}}
            for ns, labels in NAMESPACES.items()]
        out += [self.replica_sets[k] for k in sorted(self.replica_sets)]
        out += [self.services[k] for k in sorted(self.services)]
        used = {p["spec"].get("priorityClassName") for p in pods} - {None}
        for name in sorted(used):
            value, policy = PRIORITY_CLASSES[name]
            out.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                        "metadata": {"name": name}, "value": value,
                        "preemptionPolicy": policy})
        if self.preemption:
            for i in range(self.rng.choice((0, 0, 1, 2))):
                self.features.add("pdb")
                ns = self.rng.choice(("default", "default", "other"))
                out.append({
                    "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                    "metadata": {"name": f"pdb-{i}", "namespace": ns},
                    "spec": {"selector": {"matchLabels": {"app": self.rng.choice(APPS)}},
                             "minAvailable": 1},
                    "status": {"disruptionsAllowed": self.rng.choice((0, 0, 1, 2)),
                               "currentHealthy": 3, "desiredHealthy": 1, "expectedPods": 3}})
        return out


def make_case(seed: int, index: int) -> Obj:
    """Case `index` of `seed`: 3-60 nodes (a few in ten small), bound pods, the pod, objects."""
    rng = random.Random(f"schedsvc-casegen/{seed}/{index}")
    c = _Case(rng, f"{seed}-{index}")
    n = rng.randint(3, 12) if rng.random() < 0.6 else rng.randint(13, 60)
    if n > 40:
        c.features.add("largeCluster")
    zoned = rng.random() < 0.85
    nodes = [c.node(i, zoned) for i in range(n)]
    crowd = rng.choice((0, 1, 2, 3, 4)) + (2 if c.preemption else 0)
    pods: list[Obj] = []
    for node in nodes:
        taken: set[int] = set()  # host ports held on this node
        pods += [c.bound_pod(node, j, taken) for j in range(rng.randint(0, crowd))]
    pod = c.pending_pod(nodes)
    if c.preemption:
        c.features.add("preemption")
    case: Obj = {"id": c.id, "nodes": nodes, "pods": pods, "pod": pod}
    case["objects"] = c.objects([*pods, pod])
    case["percentageOfNodesToScore"] = 100
    if c.preemption:
        case["preemption"] = True
    case["features"] = sorted(c.features)
    return case


def generate(seed: int, n: int) -> Iterator[Obj]:
    """n cases from `seed`; case i is the same whatever n is."""
    for i in range(n):
        yield make_case(seed, i)


def main(argv: list[str] | None = None) -> int:
    return write_cases("python -m tools.casegen", __doc__, generate, argv)


def write_cases(
    prog: str, doc: str | None, gen: Callable[[int, int], Iterator[Obj]],
    argv: list[str] | None = None,
) -> int:
    """The generators' command line: `--seed S -n N [-o FILE]`, one JSON case per line."""
    ap = argparse.ArgumentParser(prog=prog, description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("-o", "--output", help="JSONL file (stdout without it)")
    args = ap.parse_args(argv)
    dump_cases(gen(args.seed, args.n), args.output)
    return 0


def dump_cases(cases: Iterable[Obj], path: str | None) -> None:
    """One JSON case per line, into `path` (stdout when None or "-")."""
    out = open(path, "w", encoding="utf-8") if path and path != "-" else sys.stdout
    try:
        for case in cases:
            out.write(json.dumps(case, separators=(",", ":")) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()


if __name__ == "__main__":
    sys.exit(main())
