"""The storage half of a volume case (tools/casegen_volumes.py): nodes in zones, CSINodes,
CSIDrivers, StorageClasses, CSIStorageCapacities, PersistentVolumes and claims, as the API
server stores them (defaulted: kube's oracle has no API server, and our reader must see the
same objects). What kube decides at random is never generated: PV capacities are unique within
a case (no two equally small PVs match one claim), and at most one capacity object matches a
(class, node); every capacity object has a capacity (kube's capacity scoring panics without).
"""

from __future__ import annotations

import random
from typing import Any

__all__ = ["CLASSES", "DRIVERS", "HOST", "ZONE", "Storage"]

Obj = dict[str, Any]

HOST, ZONE, REGION = "kubernetes.io/hostname", "topology.kubernetes.io/zone", (
    "topology.kubernetes.io/region")
ZONES = {"zone-a": "region-1", "zone-b": "region-1", "zone-c": "region-2"}
FAST, SLOW, EBS, PD = "csi.fast.example.com", "csi.slow.example.com", "ebs.csi.aws.com", (
    "pd.csi.storage.gke.io")
DRIVERS = (FAST, SLOW, EBS, PD)
MIGRATED = {EBS: "kubernetes.io/aws-ebs", PD: "kubernetes.io/gce-pd"}
NO_PROVISIONER = "kubernetes.io/no-provisioner"
# name -> (provisioner, volumeBindingMode)
CLASSES = {"fast": (FAST, "WaitForFirstConsumer"), "slow": (SLOW, "WaitForFirstConsumer"),
           "local": (NO_PROVISIONER, "WaitForFirstConsumer"), "instant": (FAST, "Immediate"),
           "ebs": (EBS, "WaitForFirstConsumer")}
MODES = (["ReadWriteOnce"], ["ReadWriteOnce"], ["ReadWriteMany"], ["ReadOnlyMany"],
         ["ReadWriteOnce", "ReadOnlyMany"], ["ReadWriteOncePod"], ["ReadWriteOncePod"])
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"


def _gi(n: int) -> str:
    return f"{n}Gi"


class Storage:
    """One case's cluster and storage objects under construction."""

    def __init__(self, rng: random.Random, features: set[str]) -> None:
        self.rng = rng
        self.features = features
        self.nodes: list[Obj] = []
        self.objects: list[Obj] = []
        self.classes: dict[str, Obj] = {}
        self.pvs: list[Obj] = []
        self.claims: dict[str, Obj] = {}
        self._sizes = iter(rng.sample(range(1, 60), 40))  # unique PV capacities, in Gi

    def feature(self, p: float, name: str) -> bool:
        hit = self.rng.random() < p
        if hit:
            self.features.add(name)
        return hit

    # --- nodes and their drivers ------------------------------------------------------------

    def make_nodes(self, n: int) -> None:
        zones = self.rng.sample(sorted(ZONES), self.rng.randint(1, 3))
        for i in range(n):
            name = f"n{i}"
            labels = {HOST: name}
            if self.rng.random() < 0.92:
                zone = self.rng.choice(zones)
                labels[ZONE], labels[REGION] = zone, ZONES[zone]
            alloc = {"cpu": "4", "memory": "16Gi", "pods": "110"}
            self.nodes.append({"metadata": {"name": name, "labels": labels},
                               "status": {"capacity": dict(alloc), "allocatable": alloc}})
            if self.feature(0.85, "csiNode"):
                self.objects.append(self._csi_node(name))
            else:
                self.features.add("noCSINode")

    def _csi_node(self, node: str) -> Obj:
        drivers = []
        migrated = []
        for d in self.rng.sample(DRIVERS, self.rng.randint(1, 4)):
            entry: Obj = {"name": d, "nodeID": f"{node}-{d}", "topologyKeys": [HOST, ZONE]}
            if self.feature(0.6, "attachLimit"):
                entry["allocatable"] = {"count": self.rng.choice((0, 1, 1, 2, 2, 3, 5))}
            drivers.append(entry)
            if d in MIGRATED and self.rng.random() < 0.8:
                migrated.append(MIGRATED[d])
        if self.rng.random() < 0.2:
            migrated.append("kubernetes.io/azure-disk")  # inline azureDisk kind Shared: Error
        meta: Obj = {"name": node}
        if migrated:
            self.features.add("migratedPlugins")
            meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins":
                                   ",".join(sorted(migrated))}
        return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta,
                "spec": {"drivers": sorted(drivers, key=lambda e: e["name"])}}

    def make_drivers(self) -> set[str]:
        """CSIDrivers for the example drivers; returns those that ask for capacity checks."""
        capacity = set()
        for d in (FAST, SLOW):
            if self.rng.random() < 0.15:
                continue  # no CSIDriver object: no capacity check, no install check
            cap = self.feature(0.5, "storageCapacity")
            spec: Obj = {"attachRequired": True, "podInfoOnMount": False,
                         "storageCapacity": cap, "fsGroupPolicy": "ReadWriteOnceWithFSType",
                         "requiresRepublish": False, "seLinuxMount": False,
                         "volumeLifecycleModes": ["Persistent"]}
            # only SLOW: when several drivers are missing kube names one in map order
            if d == SLOW and self.feature(0.3, "preventPodSchedulingIfMissing"):
                spec["preventPodSchedulingIfMissing"] = True
            self.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                                 "metadata": {"name": d}, "spec": spec})
            if cap:
                capacity.add(d)
        return capacity

    # --- classes and capacities -------------------------------------------------------------

    def make_classes(self, capacity_drivers: set[str]) -> None:
        for name, (prov, mode) in CLASSES.items():
            if self.rng.random() < 0.07:
                self.features.add("missingClass")
                continue
            sc: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                       "metadata": {"name": name}, "provisioner": prov,
                       "reclaimPolicy": "Delete", "volumeBindingMode": mode}
            if prov != NO_PROVISIONER and self.feature(0.3, "allowedTopologies"):
                zones = self.rng.sample(sorted(ZONES), self.rng.randint(1, 2))
                sc["allowedTopologies"] = [{"matchLabelExpressions": [
                    {"key": ZONE, "values": zones}]}]
            self.classes[name] = sc
            self.objects.append(sc)
            if prov in capacity_drivers:
                self._capacities(name)

    def _capacities(self, cls: str) -> None:
        """One CSIStorageCapacity per zone or per node (never both: one match per node)."""
        per_node = self.rng.random() < 0.5
        keys = ([n["metadata"]["name"] for n in self.nodes] if per_node else
                sorted({n["metadata"]["labels"][ZONE] for n in self.nodes
                        if ZONE in n["metadata"]["labels"]}))
        for k in keys:
            if self.rng.random() < 0.25:
                continue
            self.features.add("capacityObject")
            cap: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                        "metadata": {"name": f"cap-{cls}-{k}", "namespace": "kube-system"},
                        "storageClassName": cls,
                        "nodeTopology": {"matchLabels": {HOST if per_node else ZONE: k}},
                        "capacity": _gi(self.rng.choice((0, 1, 3, 8, 20, 100)))}
            if self.feature(0.3, "maximumVolumeSize"):
                cap["maximumVolumeSize"] = _gi(self.rng.choice((1, 2, 5)))
            self.objects.append(cap)

    # --- persistent volumes -----------------------------------------------------------------

    def make_pv(self, i: int) -> Obj:
        rng = self.rng
        cls = rng.choice((*CLASSES, "local", "local", ""))
        size = next(self._sizes)
        spec: Obj = {"accessModes": list(rng.choice(MODES)), "capacity": {"storage": _gi(size)},
                     "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"}
        if "ReadWriteOncePod" in spec["accessModes"]:
            self.features.add("readWriteOncePod")
        if cls:
            spec["storageClassName"] = cls
        meta: Obj = {"name": f"pv-{i}"}
        if rng.random() < 0.15:
            meta["labels"] = {"tier": "gold"}
        self._pv_source(spec, meta, i, CLASSES.get(cls, (FAST, ""))[0])
        self._pv_affinity(spec)
        pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec,
              "status": {"phase": "Available"}}
        self.pvs.append(pv)
        self.objects.append(pv)
        return pv

    def _pv_source(self, spec: Obj, meta: Obj, i: int, prov: str) -> None:
        r = self.rng.random()
        zones = sorted({n["metadata"]["labels"].get(ZONE, "zone-a") for n in self.nodes})
        if r < 0.15:
            self.features.add("inTreePV")
            spec["gcePersistentDisk"] = {"pdName": f"pd-{i}", "fsType": "ext4"}
        elif r < 0.3:
            self.features.add("inTreePV")
            spec["awsElasticBlockStore"] = {"volumeID": f"vol-{i:04d}", "fsType": "ext4"}
        else:
            driver = prov if prov in DRIVERS else self.rng.choice(DRIVERS)
            spec["csi"] = {"driver": driver, "volumeHandle": f"h-{i}"}
        if self.feature(0.35, "zoneLabeledPV"):
            zone = self.rng.choice(zones)
            labels = meta.setdefault("labels", {})
            labels[ZONE] = zone if self.rng.random() < 0.8 else f"{zone}__{self.rng.choice(zones)}"
            if self.rng.random() < 0.5:
                labels[REGION] = ZONES.get(zone, "region-1")

    def _pv_affinity(self, spec: Obj) -> None:
        r = self.rng.random()
        if r < 0.4:
            self.features.add("pvNodeAffinity")
            node = self.rng.choice(self.nodes)["metadata"]["name"]
            expr = {"key": HOST, "operator": "In", "values": [node]}
        elif r < 0.65:
            self.features.add("pvZoneAffinity")
            expr = {"key": ZONE, "operator": "In", "values": [self.rng.choice(sorted(ZONES))]}
        else:
            return
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [expr]}]}}

    # --- claims -----------------------------------------------------------------------------

    def claim(self, name: str, ns: str = "default", owner: Obj | None = None) -> Obj:
        """A claim in one of kube's states: bound, unbound (WFFC / Immediate / missing class),
        being deleted, Lost."""
        rng = self.rng
        meta: Obj = {"name": name, "namespace": ns, "uid": f"uid-pvc-{ns}-{name}"}
        if owner is not None:
            meta["ownerReferences"] = [owner]
        spec: Obj = {"accessModes": list(rng.choice(MODES)),
                     "resources": {"requests": {"storage": _gi(rng.choice((1, 2, 4, 8, 16)))}},
                     "volumeMode": "Filesystem"}
        status: Obj = {"phase": "Pending"}
        claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                 "spec": spec, "status": status}
        r = rng.random()
        free = [pv for pv in self.pvs if "claimRef" not in pv["spec"]]
        if r < 0.4 and free:
            self._bind(claim, rng.choice(free))
        elif r < 0.38:
            self.features.add("lostClaim")
            spec["storageClassName"] = "fast"
            spec["volumeName"] = "pv-gone"
            meta["annotations"] = {BIND_COMPLETED: "yes"}
            status["phase"] = "Lost"
        elif r < 0.6 and free:
            self._fit(claim, rng.choice(free))
        else:
            spec["storageClassName"] = rng.choice(("fast", "slow", "local", "local", "instant",
                                                   "ebs", "fast", "gone"))
            if spec["storageClassName"] == "gone":
                self.features.add("missingClass")
            if self.feature(0.08, "claimSelector"):
                spec["selector"] = {"matchLabels": {"tier": "gold"}}
        if self.feature(0.05, "claimBeingDeleted"):
            meta["deletionTimestamp"] = "2026-11-20T10:00:00Z"
            meta["finalizers"] = ["kubernetes.io/pvc-protection"]
        if "ReadWriteOncePod" in spec["accessModes"]:
            self.features.add("readWriteOncePod")
        self.claims[f"{ns}/{name}"] = claim
        self.objects.append(claim)
        return claim

    def _fit(self, claim: Obj, pv: Obj) -> None:
        """Unbound, shaped after an available PV (its class and modes, no larger), so that
        kube's matching finds it where its node affinity allows."""
        self.features.add("claimFitsPV")
        spec = claim["spec"]
        spec["storageClassName"] = pv["spec"].get("storageClassName", "")
        spec["accessModes"] = list(pv["spec"]["accessModes"][:1])
        size = int(pv["spec"]["capacity"]["storage"].removesuffix("Gi"))
        spec["resources"]["requests"]["storage"] = _gi(self.rng.randint(1, size))

    def _bind(self, claim: Obj, pv: Obj) -> None:
        """Bind as the PV controller does: both sides, bind-completed, phases Bound."""
        self.features.add("boundClaim")
        meta, spec = claim["metadata"], claim["spec"]
        spec["volumeName"] = pv["metadata"]["name"]
        spec["accessModes"] = list(pv["spec"]["accessModes"])
        spec["storageClassName"] = pv["spec"].get("storageClassName", "")
        meta["annotations"] = {BIND_COMPLETED: "yes"}
        claim["status"] = {"phase": "Bound", "accessModes": spec["accessModes"],
                           "capacity": dict(pv["spec"]["capacity"])}
        pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                                  "namespace": meta["namespace"], "name": meta["name"],
                                  "uid": meta["uid"]}
        pv["status"] = {"phase": "Bound"}
        labels = pv["metadata"].setdefault("labels", {})
        affinity = pv["spec"].get("nodeAffinity")
        if ZONE in labels or not self.feature(0.4 if affinity else 0.7, "zoneLabeledPV"):
            return
        # VolumeZone checks bound PVs' labels; a zone affinity and its label agree
        expr = affinity["required"]["nodeSelectorTerms"][0]["matchExpressions"][0] if (
            affinity) else {"key": ""}
        labels[ZONE] = (expr["values"][0] if expr["key"] == ZONE else
                        self.rng.choice(sorted(ZONES)))

    def attachments(self) -> None:
        """VolumeAttachments of some bound CSI PVs to nodes (NodeVolumeLimits counts them)."""
        for pv in self.pvs:
            csi = pv["spec"].get("csi")
            if csi is None or self.rng.random() > 0.25:
                continue
            self.features.add("volumeAttachment")
            node = self.rng.choice(self.nodes)["metadata"]["name"]
            self.objects.append({
                "apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                "metadata": {"name": f"va-{pv['metadata']['name']}-{node}"},
                "spec": {"attacher": csi["driver"], "nodeName": node,
                         "source": {"persistentVolumeName": pv["metadata"]["name"]}},
                "status": {"attached": True}})
