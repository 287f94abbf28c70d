"""Random volume cases in the shared/conformance case format, deterministic from a seed.

`generate(seed, n)` yields n cases (`{"id", "nodes", "pods", "pod", "objects",
"percentageOfNodesToScore": 100, "features"}`) for kube's four volume plugins: 2-6 nodes in
zones, the storage objects of tools/casegen_storage.py (CSINodes with and without attach limits,
CSIDrivers, StorageClasses, CSIStorageCapacities, PVs, claims in each of kube's states,
VolumeAttachments), bound pods using claims and in-tree disks, and the pod to schedule with 0-3
volumes (a claim, a generic ephemeral volume with or without its claim, an in-tree disk, an
inline CSI volume, an emptyDir). Objects are written as the API server stores them (defaulted),
since kube's oracle reads them without an API server. Case i depends only on (seed, i).

`python -m tools.casegen_volumes --seed S -n N [-o FILE]` writes them as JSONL.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from typing import Any

from tools.casegen import write_cases
from tools.casegen_storage import FAST, Storage

__all__ = ["generate", "main", "make_case"]

Obj = dict[str, Any]

PD_NAMES = ("disk-1", "disk-2", "disk-3")
EBS_IDS = ("vol-aaa", "vol-bbb")


class _Pods:
    """The pods of one case: bound pods using volumes, and the pod to schedule."""

    def __init__(self, st: Storage) -> None:
        self.st = st
        self.rng = st.rng
        self.features = st.features
        self.used_claims: list[str] = []

    def pod(self, name: str, node: str, volumes: list[Obj]) -> Obj:
        spec: Obj = {"schedulerName": "default-scheduler", "priority": 0,
                     "containers": [{"name": "c", "resources": {
                         "requests": {"cpu": "100m", "memory": "64Mi"}}}]}
        if volumes:
            spec["volumes"] = volumes
        meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
        if node:
            spec["nodeName"] = node
            return {"metadata": meta, "spec": spec,
                    "status": {"phase": "Running", "startTime": "2026-11-20T10:00:00Z"}}
        return {"metadata": meta, "spec": spec}

    def disk(self, vol: str, pending: bool) -> Obj:
        """An in-tree disk: GCE PD (read-only shares) or EBS (never shares); rarely, on the
        pending pod, an azureDisk of kind Shared (kube's CSI translation fails: an Error)."""
        rng = self.rng
        self.features.add("inTreeDisk")
        if pending and rng.random() < 0.1:
            self.features.add("azureDiskShared")
            return {"name": vol, "azureDisk": {
                "diskName": "az-1", "diskURI": "https://disks.example/az-1", "kind": "Shared",
                "cachingMode": "ReadWrite", "fsType": "ext4", "readOnly": False}}
        if rng.random() < 0.6:
            return {"name": vol, "gcePersistentDisk": {
                "pdName": rng.choice(PD_NAMES), "fsType": "ext4",
                "readOnly": rng.random() < 0.4}}
        return {"name": vol, "awsElasticBlockStore": {
            "volumeID": rng.choice(EBS_IDS), "fsType": "ext4"}}

    def claim_volume(self, vol: str, pending: bool) -> Obj:
        """A persistentVolumeClaim volume: a new claim, one a bound pod uses, or none."""
        rng = self.rng
        self.features.add("pvcVolume")
        r = rng.random()
        if pending and r < 0.35 and self.used_claims:
            self.features.add("sharedClaim")
            name = rng.choice(self.used_claims)
        elif r < 0.39:
            self.features.add("missingClaim")
            name = f"absent-{vol}"
        else:
            name = f"data-{len(self.st.claims)}"
            self.st.claim(name)
            self.used_claims.append(name)
        return {"name": vol, "persistentVolumeClaim": {"claimName": name}}

    def ephemeral(self, pod: str, vol: str) -> Obj:
        """A generic ephemeral volume; its claim `<pod>-<volume>` exists owned by the pod,
        exists owned by no one, or is not created yet."""
        rng = self.rng
        self.features.add("ephemeralVolume")
        r = rng.random()
        if r < 0.65:
            self.st.claim(f"{pod}-{vol}", owner={
                "apiVersion": "v1", "kind": "Pod", "name": pod, "uid": f"uid-{pod}",
                "controller": True, "blockOwnerDeletion": True})
        elif r < 0.75:
            self.features.add("ephemeralNotOwned")
            self.st.claim(f"{pod}-{vol}")
        else:
            self.features.add("ephemeralNoClaim")
        template = {"spec": {"accessModes": ["ReadWriteOnce"],
                             "storageClassName": rng.choice(("fast", "local", "slow")),
                             "resources": {"requests": {"storage": "1Gi"}},
                             "volumeMode": "Filesystem"}}
        return {"name": vol, "ephemeral": {"volumeClaimTemplate": template}}

    def volumes(self, pod: str, pending: bool) -> list[Obj]:
        rng = self.rng
        count = rng.choice((0, 1, 1, 2, 2, 3)) if pending else rng.choice((0, 1, 1, 2))
        out: list[Obj] = []
        for j in range(count):
            vol = f"v{j}"
            r = rng.random()
            if r < 0.45:
                out.append(self.claim_volume(vol, pending))
            elif r < 0.6 and pending:
                out.append(self.ephemeral(pod, vol))
            elif r < 0.8:
                out.append(self.disk(vol, pending))
            elif r < 0.9:
                self.features.add("inlineCSI")
                out.append({"name": vol, "csi": {"driver": FAST,
                                                 "volumeAttributes": {"size": "1Gi"}}})
            else:
                self.features.add("emptyDir")
                out.append({"name": vol, "emptyDir": {}})
        return out


def make_case(seed: int, index: int) -> Obj:
    """Case `index` of `seed`."""
    rng = random.Random(f"schedsvc-casegen-volumes/{seed}/{index}")
    features: set[str] = set()
    st = Storage(rng, features)
    st.make_nodes(rng.randint(2, 6))
    st.make_classes(st.make_drivers())
    for i in range(rng.randint(0, 7)):
        st.make_pv(i)
    pods = _Pods(st)
    bound = []
    for j in range(rng.randint(0, 4)):
        name = f"bound-{j}"
        node = rng.choice(st.nodes)["metadata"]["name"]
        bound.append(pods.pod(name, node, pods.volumes(name, pending=False)))
    name = f"app-{index % 5}"
    pod = pods.pod(name, "", pods.volumes(name, pending=True))
    if not pod["spec"].get("volumes"):
        features.add("noVolumes")
    st.attachments()
    return {"id": f"vol-{seed}-{index}", "nodes": st.nodes, "pods": bound, "pod": pod,
            "objects": st.objects, "percentageOfNodesToScore": 100,
            "features": sorted(features)}


def generate(seed: int, n: int) -> Iterator[Obj]:
    """n cases from `seed`; case i is the same whatever n is."""
    for i in range(n):
        yield make_case(seed, i)


def main(argv: list[str] | None = None) -> int:
    return write_cases("python -m tools.casegen_volumes", __doc__, generate, argv)


if __name__ == "__main__":
    sys.exit(main())
