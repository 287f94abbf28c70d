"""Random gang scheduling cases for kube-oracle's sequence mode, deterministic from a seed.

`generate(seed, n)` yields n cases `{"id", "kind", "featureGates", "nodes", "pods", "objects",
"steps"}` in Kubernetes JSON as the API server stores it. `nodes` are 3-16 nodes in three zones
with varied cpu/memory, some tainted or labelled `disk: ssd`, each with a distinct `rank` label;
`pods` are bound pods with priorities and start times, some of them members of bound PodGroups
(`objects`, with `disruptionMode` single or all) and some covered by PodDisruptionBudgets.
`steps` run in order (tools/kube-oracle/README.md): `{"pods": [...]}` ordinary pods, or
`{"podGroup": {...}, "pods": [...]}` a group's members then its PodGroup (gang with minCount <=
size, or basic; `spec.priority` equal to its pods' priority, as kube's validatePodGroup asks);
a step without `podGroup` whose pods name a group adds members to a PodGroup of `objects` that
already has bound members (they count toward minCount).

`kind` is what the case was built to show: `fit`, `nofit` (cannot reach minCount, nothing to
preempt), `preempt` (fits only by preempting lower-priority bound pods) or `mixed` (ordinary pods
and groups in several steps, bound members, gated gangs); the recording says what kube did.
Members share one shape: cpu/memory requests, and some of: zone spread, required anti-affinity
between members, a node selector, a toleration, a host port. Most pods prefer nodes by `rank`
(distinct weights) so that kube's random choice among tied nodes rarely matters.

`python -m tools.casegen_gangs --seed S -n N [--start I] [--kind K] [--generic-workload false]
[-o FILE]`
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterator
from typing import Any

from tools.casegen import dump_cases

__all__ = ["KINDS", "generate", "make_case", "main"]

Obj = dict[str, Any]

KINDS = {"fit": 0.30, "nofit": 0.25, "preempt": 0.25, "mixed": 0.20}
ZONES = ("zone-a", "zone-b", "zone-c")
HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
NODE_CPU = (4000, 6000, 8000, 12000, 16000)
NODE_MEM_GI = (8, 16, 32, 64)
MEMBER_CPU = (250, 500, 1000, 1500, 2000, 3000)
MEMBER_MEM_MI = (256, 512, 1024, 2048, 4096)
T0 = "2026-01-01T00:00:00Z"


def _start(i: int) -> str:
    return f"2026-01-01T{i // 60 % 24:02d}:{i % 60:02d}:00Z"


class _Builder:
    """One case under construction: its random source and the objects made so far."""

    def __init__(self, rng: random.Random, case_id: str) -> None:
        self.rng = rng
        self.id = case_id
        self.nodes: list[Obj] = []
        self.bound: list[Obj] = []
        self.objects: list[Obj] = []
        self.steps: list[Obj] = []
        self.free: dict[str, int] = {}  # node -> free millicores (roughly: for sizing only)
        self.serial = 0

    def name(self, prefix: str) -> str:
        self.serial += 1
        return f"{prefix}{self.serial}"

    # -- cluster --------------------------------------------------------------------------
    def cluster(self, n: int) -> None:
        ranks = list(range(1, n + 1))
        self.rng.shuffle(ranks)
        for i in range(n):
            name = f"n{i}"
            cpu = self.rng.choice(NODE_CPU) + self.rng.randrange(0, 8) * 125
            mem = self.rng.choice(NODE_MEM_GI) * 1024 + self.rng.randrange(0, 8) * 64
            labels = {HOST: name, ZONE: ZONES[i % 3], "rank": str(ranks[i])}
            if self.rng.random() < 0.35:
                labels["disk"] = "ssd"
            spec: Obj = {}
            if self.rng.random() < 0.15:
                spec["taints"] = [{"key": "dedicated", "value": "gang", "effect": "NoSchedule"}]
            alloc = {"cpu": f"{cpu}m", "memory": f"{mem}Mi", "pods": "110"}
            self.nodes.append({"metadata": {"name": name, "labels": labels}, "spec": spec,
                               "status": {"allocatable": alloc, "capacity": dict(alloc)}})
            self.free[name] = cpu

    def node_names(self) -> list[str]:
        return [n["metadata"]["name"] for n in self.nodes]

    def fill(self, share: float, priorities: tuple[int, ...],
             jitter: tuple[float, float] = (0.6, 1.2)) -> None:
        """Bound pods using about `share` of each node's cpu (never more than all of it), some
        in bound PodGroups."""
        groups: list[tuple[str, int]] = []
        for node in self.node_names():
            target = int(self.free[node] * min(1.0, share * self.rng.uniform(*jitter)))
            while target >= 250:
                cpu = min(target, self.rng.choice((250, 500, 1000, 2000)))
                prio = self.rng.choice(priorities)
                pod = self.pod(self.name("b"), cpu, self.rng.choice((128, 256, 512)), prio)
                if self.rng.random() < 0.3:
                    group = self._bound_group(groups, prio)
                    pod["spec"]["schedulingGroup"] = {"podGroupName": group}
                    pod["metadata"]["labels"]["group"] = group
                pod["spec"]["nodeName"] = node
                pod["status"] = {"phase": "Running", "startTime": _start(len(self.bound))}
                self.bound.append(pod)
                self.free[node] -= cpu
                target -= cpu
        self._pdbs()

    def _bound_group(self, groups: list[tuple[str, int]], prio: int) -> str:
        for g, p in groups:
            if p == prio and self.rng.random() < 0.7:
                return g
        g = self.name("old")
        mode = self.rng.choice(("single", "all"))
        self.objects.append(self.pod_group(g, self.rng.choice((0, 1, 2)), prio, mode))
        groups.append((g, prio))
        return g

    def _pdbs(self) -> None:
        if not self.bound or self.rng.random() < 0.5:
            return
        victim = self.rng.choice(self.bound)
        victim["metadata"]["labels"]["pdb"] = "guarded"
        for other in self.rng.sample(self.bound, min(2, len(self.bound))):
            other["metadata"]["labels"]["pdb"] = "guarded"
        guarded = sum(1 for p in self.bound if p["metadata"]["labels"].get("pdb"))
        self.objects.append({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "guard", "namespace": "default", "uid": "uid-pdb-guard"},
            "spec": {"minAvailable": guarded, "selector": {"matchLabels": {"pdb": "guarded"}}},
            "status": {"currentHealthy": guarded, "desiredHealthy": guarded,
                       "disruptionsAllowed": 0, "expectedPods": guarded}})

    # -- objects --------------------------------------------------------------------------
    def pod(self, name: str, cpu: int, mem: int, prio: int) -> Obj:
        return {
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                         "labels": {"app": name}},
            "spec": {"schedulerName": "default-scheduler", "priority": prio,
                     "preemptionPolicy": "PreemptLowerPriority",
                     "containers": [{"name": "c", "image": "registry.local/app:1",
                                     "resources": {"requests": {"cpu": f"{cpu}m",
                                                                "memory": f"{mem}Mi"}}}]},
            "status": {"phase": "Pending"},
        }

    def pod_group(self, name: str, min_count: int, prio: int, mode: str = "single") -> Obj:
        policy: Obj = {"gang": {"minCount": min_count}} if min_count > 0 else {"basic": {}}
        return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                "metadata": {"name": name, "namespace": "default", "uid": f"uid-pg-{name}",
                             "generation": 1, "creationTimestamp": T0},
                "spec": {"schedulingPolicy": policy, "disruptionMode": {mode: {}},
                         "priority": prio}}

    def shape(self, group: str, size: int) -> Obj:
        """One shape for a group's members: which constraints they carry."""
        r = self.rng
        return {"cpu": r.choice(MEMBER_CPU), "mem": r.choice(MEMBER_MEM_MI),
                "spread": r.random() < 0.25, "spreadHard": r.random() < 0.5,
                "anti": r.random() < 0.2 and size <= len(self.nodes) + 2,
                "selector": r.random() < 0.15, "tolerate": r.random() < 0.3,
                "port": r.random() < 0.1, "rank": r.random() < 0.85, "group": group}

    def member(self, name: str, shape: Obj, prio: int, group: str | None) -> Obj:
        pod = self.pod(name, shape["cpu"], shape["mem"], prio)
        spec, labels = pod["spec"], pod["metadata"]["labels"]
        labels["set"] = shape["group"]
        if group is not None:
            spec["schedulingGroup"] = {"podGroupName": group}
            labels["group"] = group
        sel = {"matchLabels": {"set": shape["group"]}}
        if shape["spread"]:
            spec["topologySpreadConstraints"] = [{
                "maxSkew": 1, "topologyKey": ZONE, "labelSelector": sel,
                "whenUnsatisfiable": "DoNotSchedule" if shape["spreadHard"] else "ScheduleAnyway"}]
        affinity: Obj = {}
        if shape["anti"]:
            affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": sel, "topologyKey": HOST}]}
        if shape["rank"]:
            affinity["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 3 * int(n["metadata"]["labels"]["rank"]) % 100 + 1, "preference": {
                    "matchExpressions": [{"key": "rank", "operator": "In",
                                          "values": [n["metadata"]["labels"]["rank"]]}]}}
                for n in self.nodes]}
        if affinity:
            spec["affinity"] = affinity
        if shape["selector"]:
            spec["nodeSelector"] = {"disk": "ssd"}
        if shape["tolerate"]:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "gang",
                                    "effect": "NoSchedule"}]
        if shape["port"]:
            spec["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080,
                                               "protocol": "TCP"}]
        return pod

    # -- steps ----------------------------------------------------------------------------
    def group_step(self, size: int, min_count: int, prio: int, shape: Obj | None = None,
                   mode: str = "single") -> Obj:
        g = self.name("g")
        shape = shape or self.shape(g, size)
        pods = [self.member(f"{g}-{i}", shape, prio, g) for i in range(size)]
        step = {"podGroup": self.pod_group(g, min_count, prio, mode), "pods": pods}
        self.steps.append(step)
        return step

    def plain_step(self, count: int, prio: int) -> None:
        pods = []
        for _ in range(count):
            name = self.name("p")
            pods.append(self.member(name, self.shape(name, 1), prio, None))
        self.steps.append({"pods": pods})

    def add_members_step(self, prio: int) -> None:
        """A PodGroup with bound members (in objects), and a step adding more members."""
        g = self.name("g")
        size = self.rng.randint(2, 6)
        bound_n = self.rng.randint(1, size)
        shape = self.shape(g, size + bound_n)
        min_count = self.rng.randint(1, size + bound_n)
        self.objects.append(self.pod_group(g, min_count, prio))
        nodes = self.node_names()
        for i in range(bound_n):
            pod = self.member(f"{g}-b{i}", shape, prio, g)
            pod["spec"].pop("affinity", None)
            pod["spec"].pop("topologySpreadConstraints", None)
            pod["spec"]["nodeName"] = nodes[i % len(nodes)]
            pod["status"] = {"phase": "Running", "startTime": _start(len(self.bound))}
            self.bound.append(pod)
        self.steps.append({"pods": [self.member(f"{g}-{i}", shape, prio, g)
                                    for i in range(size)]})

    def size_and_min(self, lo: int = 2, hi: int = 12) -> tuple[int, int]:
        size = self.rng.randint(lo, hi)
        basic = self.rng.random() < 0.2
        return size, 0 if basic else self.rng.randint(max(1, size // 2), size)


def _fit(b: _Builder) -> None:
    b.cluster(b.rng.randint(3, 16))
    b.fill(b.rng.uniform(0.0, 0.5), (0, 0, 10))
    if b.rng.random() < 0.3:
        b.plain_step(b.rng.randint(1, 3), 0)
    size, m = b.size_and_min()
    shape = b.shape("s", size)
    shape["cpu"] = min(shape["cpu"], 1000)
    b.group_step(size, m, b.rng.choice((0, 10)), shape)


def _nofit(b: _Builder) -> None:
    b.cluster(b.rng.randint(3, 10))
    b.fill(b.rng.uniform(0.3, 0.8), (10, 50))
    size = b.rng.randint(3, 12)
    shape = b.shape("s", size)
    if b.rng.random() < 0.5:
        shape["anti"] = True
        size = max(size, len(b.nodes) + b.rng.randint(1, 3))
    else:
        shape["cpu"] = b.rng.choice((2000, 3000, 4000, 6000))
    b.group_step(size, b.rng.randint(max(2, size - 2), size), b.rng.choice((0, 10)), shape)


def _preempt(b: _Builder) -> None:
    b.cluster(b.rng.randint(3, 10))
    b.fill(1.0, (0, 0, 10, 500), (0.8, 1.0))
    if b.rng.random() < 0.25:
        b.plain_step(1, 1000)
    size, m = b.size_and_min(2, 8)
    shape = b.shape("s", size)
    shape["cpu"] = b.rng.choice((1000, 1500, 2000, 3000))
    shape["port"] = shape["port"] and b.rng.random() < 0.5
    b.group_step(size, m, 1000, shape)


def _mixed(b: _Builder) -> None:
    b.cluster(b.rng.randint(3, 16))
    b.fill(b.rng.uniform(0.1, 0.7), (0, 10, 100))
    for _ in range(b.rng.randint(2, 4)):
        r = b.rng.random()
        if r < 0.3:
            b.plain_step(b.rng.randint(1, 3), b.rng.choice((0, 100)))
        elif r < 0.55:
            b.add_members_step(b.rng.choice((0, 100)))
        elif r < 0.75:
            size = b.rng.randint(2, 6)  # gated: fewer members than minCount
            b.group_step(size, size + b.rng.randint(1, 3), 0)
        else:
            size, m = b.size_and_min(2, 8)
            b.group_step(size, m, b.rng.choice((0, 100, 200)))


_BUILD = {"fit": _fit, "nofit": _nofit, "preempt": _preempt, "mixed": _mixed}


def make_case(seed: int, i: int, generic_workload: bool = True, kind: str | None = None) -> Obj:
    """Case i of seed: depends on (seed, i, kind) only; `kind` forces what it is built to
    show (by default drawn with KINDS' weights)."""
    rng = random.Random(f"gangs-{seed}-{i}")
    drawn = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
    kind = kind or drawn
    b = _Builder(rng, f"gang-{seed}-{i}")
    _BUILD[kind](b)
    gates = {"GenericWorkload": generic_workload, "OpportunisticBatching": rng.random() < 0.5}
    return {"id": b.id, "kind": kind, "featureGates": gates, "nodes": b.nodes, "pods": b.bound,
            "objects": b.objects, "steps": b.steps}


def generate(seed: int, n: int, generic_workload: bool = True, start: int = 0,
             kind: str | None = None) -> Iterator[Obj]:
    for i in range(start, start + n):
        yield make_case(seed, i, generic_workload, kind)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--generic-workload", choices=("true", "false"), default="true")
    ap.add_argument("--kind", choices=sorted(KINDS), help="every case of this kind")
    ap.add_argument("-o", "--out", default="-")
    args = ap.parse_args(argv)
    dump_cases(generate(args.seed, args.n, args.generic_workload == "true", args.start,
                        args.kind), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
