"""The vectorized Filters of VolumeZone, VolumeRestrictions and NodeVolumeLimits against slow,
node-by-node references written from kube's rules, on random clusters (every node's pods
read from the snapshot's pod lists, not from the plugins' indexes)."""

from __future__ import annotations

import random

import pytest

from schedsvc.framework import PreFilterResult
from schedsvc.framework.feature import EmulatedVersion, Features
from schedsvc.framework.podinfo import pod_info
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Node, Pod
from schedsvc.model_storage import CSIDriver, StorageClass, VolumeAttachment
from schedsvc.model_volume import RBD, AWSElasticBlockStore, GCEPersistentDisk, Volume
from schedsvc.plugins import node_volume_limits, volume_restrictions, volume_zone
from schedsvc.plugins.node_volume_limits.attachable import AttachError, attachable
from tests.builders import rows_of
from tests.builders.volume_plugins import (
    claim_volume,
    csi_pv,
    disk_pv,
    disk_volume,
    make_csi_node,
    make_pvc,
    pod_with_volumes,
    volume_snapshot,
)

Z = "topology.kubernetes.io/zone"
BZ = "failure-domain.beta.kubernetes.io/zone"
ZONES = ["z1", "z2", "z3"]
DRIVERS = ["d1", "d2", "ebs.csi.aws.com"]


def _volume(rng: random.Random, i: int) -> Volume:
    k = rng.randrange(6)
    if k == 0:
        return disk_volume(f"g{i}", gce_persistent_disk=GCEPersistentDisk(
            rng.choice("ab"), read_only=rng.random() < 0.5))
    if k == 1:
        return disk_volume(f"e{i}", aws_elastic_block_store=AWSElasticBlockStore(rng.choice("ab")))
    if k == 2:
        return disk_volume(f"r{i}", rbd=RBD(tuple(rng.sample("mno", 2)), image="i",
                                            read_only=rng.random() < 0.5))
    return claim_volume(f"c{rng.randrange(8)}", name=f"v{i}")


def random_cluster(rng: random.Random) -> tuple[Snapshot, list[str]]:
    names = [f"n{i}" for i in range(8)]
    nodes = []
    for n in names:
        labels = {}
        if rng.random() < 0.7:
            labels[rng.choice([Z, BZ])] = rng.choice(ZONES)
        nodes.append(Node(n, labels=labels))
    pvs, pvcs = [], []
    for c in range(8):
        if c < 6:
            labels = {rng.choice([Z, BZ]): "__".join(rng.sample(ZONES, rng.randint(1, 2)))}
            ebs = AWSElasticBlockStore(f"vol-{c}")
            pv = (disk_pv(f"pv{c}", labels, aws_elastic_block_store=ebs)
                  if c == 5 else csi_pv(f"pv{c}", rng.choice(DRIVERS[:2]), labels=labels))
            pvs.append(pv)
            pvcs.append(make_pvc(f"c{c}", volume_name=f"pv{c}",
                                 access_modes=("ReadWriteOncePod",) if c == 0 else ()))
        else:
            pvcs.append(make_pvc(f"c{c}", storage_class="wait"))
    csi_nodes = [
        make_csi_node(n, {d: rng.choice([None, 0, 1, 2, 3]) for d in rng.sample(DRIVERS, 2)})
        for n in names if rng.random() < 0.8
    ]
    vas = [VolumeAttachment(f"va{i}", attacher="d1", node_name=rng.choice(names),
                            persistent_volume_name=f"pv{rng.randrange(6)}") for i in range(3)]
    placed = [
        (pod_with_volumes(f"p{i}", *(_volume(rng, j) for j in range(rng.randint(0, 3)))),
         rng.choice(names))
        for i in range(14)
    ]
    snap = volume_snapshot(
        nodes, placed, pvs, pvcs, [StorageClass("wait", "d2", "WaitForFirstConsumer")],
        csi_nodes, [CSIDriver("d1", prevent_pod_scheduling_if_missing=rng.random() < 0.5)],
        vas,
    )
    return snap, names


def _conflict(v: Volume, e: Volume) -> bool:
    """kube's isVolumeConflict, spelled out."""
    a, b = v.disk, e.disk
    if a.gce_persistent_disk and b.gce_persistent_disk:
        x, y = a.gce_persistent_disk, b.gce_persistent_disk
        return x.pd_name == y.pd_name and not (x.read_only and y.read_only)
    if a.aws_elastic_block_store and b.aws_elastic_block_store:
        return a.aws_elastic_block_store.volume_id == b.aws_elastic_block_store.volume_id
    if a.rbd and b.rbd:
        x2, y2 = a.rbd, b.rbd
        return (bool(set(x2.monitors) & set(y2.monitors)) and x2.pool == y2.pool
                and x2.image == y2.image and not (x2.read_only and y2.read_only))
    return False


def ref_restrictions(pod: Pod, snap: Snapshot, node: str, rwop_used: bool) -> str:
    on_node = [r.pod for r in snap.pods_on_row[snap.index[node]].values()]
    if any(_conflict(v, e) for v in pod.volumes for p in on_node for e in p.volumes):
        return volume_restrictions.ERR_REASON_DISK_CONFLICT
    return volume_restrictions.ERR_REASON_RWOP_CONFLICT if rwop_used else ""


def ref_zone(topologies: tuple[volume_zone.PVTopology, ...], labels: dict[str, str]) -> str:
    if not any(k in labels for k in volume_zone.TOPOLOGY_LABELS):
        return ""
    for t in topologies:
        value = labels.get(t.key, labels.get(t.key.replace("failure-domain.beta", "topology")))
        if value is None or value not in t.values:
            return volume_zone.ERR_REASON_CONFLICT
    return ""


def ref_limits(pod: Pod, snap: Snapshot, node: str, features: Features) -> str:
    st = snap.storage
    csi_node = st.csi_nodes.get(node)
    new: dict[str, str] = {}
    try:
        attachable(pod, True, st, csi_node, features, new)
    except AttachError as e:
        return str(e)
    if not new:
        return ""
    installed = {d.name for d in csi_node.drivers} if csi_node else set()
    for d in sorted(set(new.values())):
        drv = st.csi_drivers.get(d)
        if features.volume_limit_scaling and drv and drv.prevent_pod_scheduling_if_missing \
                and d not in installed:
            return node_volume_limits.driver_not_installed(d)
    limits = {d.name: d.allocatable_count for d in csi_node.drivers
              if d.allocatable_count is not None} if csi_node else {}
    if not limits:
        return ""
    attached: dict[str, str] = {}
    for rec in snap.pods_on_row[snap.index[node]].values():
        attachable(rec.pod, False, st, csi_node, features, attached)
    count: dict[str, int] = {}
    for u, d in attached.items():
        new.pop(u, None)
        count[d] = count.get(d, 0) + 1
    va_keys = {f"{va.attacher}/{st.pvs[va.persistent_volume_name].csi.volume_handle}": va.attacher
               for va in st.attachments.values() if va.node_name == node
               and st.pvs[va.persistent_volume_name].csi is not None}
    for u, d in va_keys.items():
        if u not in attached:
            count[d] = count.get(d, 0) + 1
    for d in set(new.values()):
        n = sum(1 for x in new.values() if x == d)
        if d in limits and count.get(d, 0) + n > limits[d]:  # type: ignore[operator]
            return node_volume_limits.ERR_REASON_MAX_VOLUME_COUNT
    return ""


def _reasons(plugin: object, pod: Pod, snap: Snapshot, names: list[str]) -> list[str] | None:
    info = pod_info(pod)
    pre = plugin.pre_filter(info, snap)  # type: ignore[attr-defined]
    if not isinstance(pre, PreFilterResult):
        return None
    assert not pre.reject
    out = plugin.filter(pre.state, info, snap, rows_of(snap, names))  # type: ignore[attr-defined]
    return [next((r for r, m in out.reasons if m[i]), "") for i in range(len(names))]


@pytest.mark.parametrize("seed", range(60))
def test_the_filters_agree_with_node_by_node_references(seed: int) -> None:
    rng = random.Random(seed)
    snap, names = random_cluster(rng)
    pod = pod_with_volumes("new", *(_volume(rng, j) for j in range(rng.randint(1, 3))))
    features = Features(rng.choice(list(EmulatedVersion)))
    got = _reasons(volume_restrictions.new(None), pod, snap, names)
    if got is not None:
        rwop_used = any(r.pod.volumes and any(v.claim_name == "c0" for v in r.pod.volumes)
                        for r in snap.pods.values()) and any(
            v.claim_name == "c0" for v in pod.volumes)
        assert got == [ref_restrictions(pod, snap, n, rwop_used) for n in names]
    got = _reasons(volume_zone.new(None), pod, snap, names)
    if got is not None:
        tops = volume_zone.pod_pv_topologies(pod, snap.storage)
        assert got == [ref_zone(tops, dict(snap.node(snap.index[n]).labels)) for n in names]
    got = _reasons(node_volume_limits.new(None, features), pod, snap, names)
    assert (got or [""] * len(names)) == [ref_limits(pod, snap, n, features) for n in names]
