"""A client's view of a cluster with CSI volumes, driven through the request handler as a client
drives the server (proto messages only): nodes with a CSINode each (one driver, an attach
limit), a WaitForFirstConsumer class that driver provisions, CSI PVs and claims. It confirms
placements as kube's binder and provisioner would (the pod bound, its claims and PVs updated,
a provisioned claim given a new PV), evicts DefaultPreemption's victims and sends the pod
again. `violations` counts what must never happen, from the snapshot alone, independently of
the plugins' code."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from schedsvc.config import parse_config
from schedsvc.engine.scheduler import Engine
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model_storage import READ_WRITE_ONCE_POD
from schedsvc.server.request_handler import RequestHandler
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders.messages import pb_node, pb_pod

__all__ = ["DRIVER", "CLASS", "World", "violations"]

DRIVER = "ebs.csi.aws.com"
CLASS = "wffc"


class _Caller:
    """A caller with no deadline that stays."""

    def time_remaining(self) -> None:
        return None

    def is_active(self) -> bool:
        return True


def csi_pv(
    name: str, handle: str, host: str = "", claim: str = "", mode: str = "ReadWriteOnce"
) -> pb.PersistentVolume:
    """A 10Gi CSI PV of the class, Available (or Bound to `claim`, "namespace/name")."""
    pv = pb.PersistentVolume(
        name=name, storage_class_name=CLASS, capacity={"storage": "10Gi"},
        access_modes=[mode], phase="Bound" if claim else "Available",
        csi=pb.CSIPersistentVolumeSource(driver=DRIVER, volume_handle=handle),
    )
    if host:
        pv.node_affinity.required.node_selector_terms.add().match_expressions.add(
            key="kubernetes.io/hostname", operator="In", values=[host])
    if claim:
        ns, _, cname = claim.partition("/")
        pv.claim_ref.CopyFrom(pb.ClaimReference(namespace=ns, name=cname, uid=f"{cname}-uid"))
    return pv


def claim(name: str, mode: str = "ReadWriteOnce", volume: str = "") -> pb.PersistentVolumeClaim:
    return pb.PersistentVolumeClaim(
        name=name, namespace="default", uid=f"{name}-uid", storage_class_name=CLASS,
        access_modes=[mode], requests={"storage": "1Gi"}, volume_name=volume,
        phase="Bound" if volume else "Pending",
    )


class World:
    """One cluster behind a RequestHandler, and what its client knows."""

    def __init__(self, nodes: int, limit: int, config: dict[str, Any] | None = None) -> None:
        self.handler = RequestHandler(Engine(parse_config(config or {}), seed=5))
        self.nodes = [f"n{i}" for i in range(nodes)]
        self.sent: dict[str, pb.Pod] = {}  # uid -> the pod as last sent
        self.live: dict[str, pb.Placement] = {}  # placed (assumed or bound) pods
        self.claims: dict[str, pb.PersistentVolumeClaim] = {}
        self.pvs: dict[str, pb.PersistentVolume] = {}
        self.update(
            upsert_nodes=[pb_node(n, cpu="8", memory="32Gi") for n in self.nodes],
            upsert_csi_nodes=[pb.CSINode(name=n, drivers=[pb.CSINodeDriver(
                name=DRIVER, allocatable=pb.VolumeNodeResources(count=limit))])
                for n in self.nodes],
            upsert_csi_drivers=[pb.CSIDriver(name=DRIVER)],
            upsert_storage_classes=[pb.StorageClass(
                name=CLASS, provisioner=DRIVER, volume_binding_mode="WaitForFirstConsumer")],
        )

    @property
    def snapshot(self) -> Snapshot:
        return self.handler.engine.cluster("default").snapshot

    def update(self, **fields: Any) -> None:
        self.handler.update_snapshot(pb.UpdateSnapshotRequest(**fields))

    def add_claims(self, *claims: pb.PersistentVolumeClaim) -> None:
        self.claims.update((c.name, c) for c in claims)
        self.update(upsert_persistent_volume_claims=list(claims))

    def add_pvs(self, *pvs: pb.PersistentVolume) -> None:
        self.pvs.update((v.name, v) for v in pvs)
        self.update(upsert_persistent_volumes=list(pvs))

    def pod(self, uid: str, claims: list[str], priority: int = 0) -> pb.Pod:
        return pb_pod(uid, priority=priority, volumes=[
            pb.Volume(name=f"v-{c}", persistent_volume_claim=pb.PersistentVolumeClaimVolumeSource(
                claim_name=c)) for c in claims])

    def schedule(self, pods: list[pb.Pod], dry_run: bool = False) -> list[pb.Placement]:
        """Schedule `pods`; victims of a preemption are evicted and the preemptors sent again."""
        out = self._send(pods, dry_run)
        victims = sorted({v.uid for p in out for v in p.victims})
        if victims and not dry_run:
            self.remove(victims)
            again = [self.sent[p.pod_uid] for p in out if p.victims]
            out += self._send(again, False)
        return out

    def _send(self, pods: list[pb.Pod], dry_run: bool) -> list[pb.Placement]:
        resp = self.handler.schedule(pb.ScheduleRequest(pods=pods, dry_run=dry_run), _Caller())
        if not dry_run:
            self.sent.update((p.uid, p) for p in pods)
            for p in resp.placements:
                if p.outcome == pb.Placement.SCHEDULED:
                    self.live[p.pod_uid] = p
        return list(resp.placements)

    def remove(self, uids: list[str]) -> None:
        self.update(remove_pods=uids)
        for uid in uids:
            self.live.pop(uid, None)

    def bind(self) -> None:
        """Confirm every placed pod as kube's binder would: the pod bound, each claim bound
        to its PV (a provisioned one to a new PV on the selected node)."""
        pods: list[pb.Pod] = []
        pvs: dict[str, pb.PersistentVolume] = {}  # two pods may report the same claim
        pvcs: dict[str, pb.PersistentVolumeClaim] = {}
        for uid, p in self.live.items():
            pod = pb.Pod()
            pod.CopyFrom(self.sent[uid])
            pod.node_name = p.node_name
            pods.append(pod)
            for b in p.volume_bindings:
                name = b.claim.split("/")[1]
                pv_name = b.volume_name or f"pvc-{name}"
                mode = self.claims[name].access_modes[0]
                pv = csi_pv(pv_name, f"prov-{name}", b.selected_node, b.claim, mode)
                if b.volume_name:  # a static binding: the PV as it was, now bound
                    pv.CopyFrom(self.pvs[pv_name])
                    pv.phase = "Bound"
                    pv.claim_ref.CopyFrom(csi_pv("", "", claim=b.claim).claim_ref)
                pvs[pv_name] = pv
                pvcs[name] = claim(name, mode, pv_name)
            del p.volume_bindings[:]
        self.claims.update(pvcs)
        self.pvs.update(pvs)
        self.update(upsert_pods=pods, upsert_persistent_volumes=list(pvs.values()),
                    upsert_persistent_volume_claims=list(pvcs.values()))


def _attached(snap: Snapshot) -> dict[str, Counter[str]]:
    """Node -> driver -> unique volumes its pods use, counted as kube's NodeVolumeLimits counts
    them: a bound claim's PV by `<driver>/<volumeHandle>`, an unbound claim by its class's
    provisioner and the claim's own key (a placeholder handle unique per claim)."""
    st = snap.storage
    keys: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for rec in snap.pods.values():
        pod = rec.pod
        for v in pod.volumes:
            if v.kind != "persistentVolumeClaim":
                continue
            pvc = st.pvcs.get(f"{pod.namespace}/{v.claim_name}")
            if pvc is None:
                continue
            pv = st.pvs.get(pvc.volume_name) if pvc.volume_name else None
            if pv is not None and pv.csi is not None:
                keys[rec.node_name].add((pv.csi.driver, pv.csi.volume_handle))
            elif pv is None and pvc.storage_class_name in st.classes:
                keys[rec.node_name].add((st.classes[pvc.storage_class_name].provisioner,
                                         "placeholder-" + pvc.key))
    return {n: Counter(d for d, _ in ks) for n, ks in keys.items()}


def violations(snap: Snapshot) -> list[str]:
    """What must never hold, read from the snapshot: a PV taken by two claims, a node over a
    CSINode's allocatable count, a ReadWriteOncePod claim used by two placed pods."""
    st = snap.storage
    out: list[str] = []
    for pv, n in Counter(c.volume_name for c in st.pvcs.values() if c.volume_name).items():
        if n > 1:
            out.append(f"PV {pv} bound to {n} claims")
    for node, counts in _attached(snap).items():
        csi = st.csi_nodes.get(node)
        for d in csi.drivers if csi is not None else ():
            if d.allocatable_count is not None and counts[d.name] > d.allocatable_count:
                out.append(f"{node}: {counts[d.name]} {d.name} volumes > {d.allocatable_count}")
    users: Counter[str] = Counter()
    for rec in snap.pods.values():
        for v in rec.pod.volumes:
            pvc = st.pvcs.get(f"{rec.pod.namespace}/{v.claim_name}")
            if pvc is not None and READ_WRITE_ONCE_POD in pvc.access_modes:
                users[pvc.key] += 1
    out += [f"ReadWriteOncePod claim {k} used by {n} pods" for k, n in users.items() if n > 1]
    return out
