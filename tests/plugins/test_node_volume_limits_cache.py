"""NodeVolumeLimits' attach counts kept across filters (attach_counts.py): pods added, removed,
nominated (two-pass temporaries) and taken off by preemption between filters, and after each
change the verdicts are kube's (a table worked out from csi.go's rules), the pre-cache per-row
count's (`ref_verdict`, kept here only) and those of counts built from scratch."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.framework import Code
from schedsvc.framework.feature import DEFAULT_FEATURES, EmulatedVersion, Features
from schedsvc.framework.pod_volumes import PodVolumeIndex
from schedsvc.framework.snapshot import Snapshot
from schedsvc.model import Node, Pod
from schedsvc.model_storage import CSINode, StorageClass, VolumeAttachment
from schedsvc.plugins import node_volume_limits
from schedsvc.plugins.node_volume_limits import ERR_REASON_MAX_VOLUME_COUNT
from schedsvc.plugins.node_volume_limits.attach_counts import KEY, AttachCounts, attach_counts
from schedsvc.plugins.node_volume_limits.attachable import AttachError, attachable
from tests.builders import rows_of, run_filter
from tests.builders.volume_plugins import (
    claim_volume,
    csi_pv,
    ephemeral_volume,
    make_csi_node,
    make_pvc,
    pod_with_volumes,
    volume_snapshot,
)

NODES = ("a", "b", "c")
Verdict = tuple[str, Code] | None
MAX = (ERR_REASON_MAX_VOLUME_COUNT, Code.UNSCHEDULABLE)
NOT_OWNER = ("PVC default/bad-e was not created for pod default/bad (pod is not owner)", Code.ERROR)


def ref_verdict(pod: Pod, snap: Snapshot, row: int, features: Features) -> Verdict:
    """kube's CSILimits.Filter on one node, as the plugin counted before the cache: the new
    pod's volumes, the drivers it needs installed, then every pod with volumes on the node
    (index order, temporaries included) and the node's VolumeAttachments, recounted."""
    st = snap.storage
    name = snap.node(row).name
    csi_node = st.csi_nodes.get(name)
    new: dict[str, str] = {}
    try:
        attachable(pod, True, st, csi_node, features, new)
    except AttachError as e:
        return str(e), Code.UNRESOLVABLE if e.unresolvable else Code.ERROR
    if not new:
        return None
    installed = {d.name for d in csi_node.drivers} if csi_node else set()
    for d in sorted(set(new.values())):
        drv = st.csi_drivers.get(d)
        if (features.volume_limit_scaling and drv is not None
                and drv.prevent_pod_scheduling_if_missing and d not in installed):
            return node_volume_limits.driver_not_installed(d), Code.UNSCHEDULABLE
    limits = {d.name: d.allocatable_count for d in csi_node.drivers
              if d.allocatable_count is not None} if csi_node else {}
    if not limits:
        return None
    attached: dict[str, str] = {}
    try:
        for p in PodVolumeIndex.for_snapshot(snap).volume_pods.get(row, {}).values():
            attachable(p, False, st, csi_node, features, attached)
    except AttachError as e:
        return str(e), Code.UNRESOLVABLE if e.unresolvable else Code.ERROR
    count: Counter[str] = Counter(attached.values())
    for u in attached:
        new.pop(u, None)
    by_va: dict[str, str] = {}
    for va in st.attachments.values():
        pv = st.pvs.get(va.persistent_volume_name)
        if va.node_name == name and va.attacher and pv is not None and pv.csi is not None:
            by_va[f"{va.attacher}/{pv.csi.volume_handle}"] = va.attacher
    count.update(d for u, d in by_va.items() if u not in attached)
    for d, n in Counter(new.values()).items():
        if d in limits and count[d] + n > limits[d]:  # type: ignore[operator]
            return MAX
    return None


def cached_verdicts(pod: Pod, snap: Snapshot, features: Features = DEFAULT_FEATURES
                    ) -> list[Verdict]:
    """The plugin's verdict per node (in NODES order), through the kept counts."""
    out = run_filter(node_volume_limits.new(None, features), pod, snap, rows_of(snap, NODES))
    if out is None:
        return [None] * len(NODES)
    codes = out.result.reason_codes
    return [(r[0], codes.get(r[0], out.result.code)) if r else None for r in out.reasons]


def check(pod: Pod, snap: Snapshot, features: Features = DEFAULT_FEATURES) -> list[Verdict]:
    """The cached verdicts, checked against the reference and against counts built again."""
    got = cached_verdicts(pod, snap, features)
    assert got == [ref_verdict(pod, snap, snap.index[n], features) for n in NODES]
    index = PodVolumeIndex.for_snapshot(snap)
    kept = index.derived.get(KEY)
    if isinstance(kept, AttachCounts):  # brought up to date (a filter may not have needed it)
        kept = attach_counts(index, kept.cols, features, snap.storage)
        consistent(kept, index)
    index.derived.pop(KEY, None)
    assert cached_verdicts(pod, snap, features) == got  # from scratch
    if kept is not None:
        index.derived[KEY] = kept  # the incremental counts go on being exercised
    return got


def consistent(counts: AttachCounts, index: PodVolumeIndex) -> None:
    """The counts caught up with the index, their error mask and holders in step with the
    errors and the attached volumes per row."""
    assert counts.position == index.volume_position
    assert set(np.flatnonzero(counts.error_rows).tolist()) == set(counts.errors)
    held: dict[str, set[int]] = {}
    for row, attached in counts.attached.items():
        for u in attached:
            held.setdefault(u, set()).add(row)
    assert counts.holders == held


# ---- the table: three nodes, the steps cumulative --------------------------------------------
def _world() -> Snapshot:
    """a: d1 limit 2; b: d1 limit 1, d2 limit 2, a VolumeAttachment of pv5 (d2); c: d1 without
    a limit, d2 limit 0. pv1-pv4 are d1's, pv5 and pv6 d2's (claims c1-c6); claim u is unbound
    (class sc: d1), claim bad-e an ephemeral claim another pod owns."""
    return volume_snapshot(
        [Node(n) for n in NODES],
        pvs=[csi_pv(f"pv{i}", "d1") for i in range(1, 5)]
        + [csi_pv("pv5", "d2"), csi_pv("pv6", "d2")],
        pvcs=[make_pvc(f"c{i}", volume_name=f"pv{i}") for i in range(1, 7)]
        + [make_pvc("u", storage_class="sc"),
           make_pvc("bad-e", storage_class="sc", owner_uid="someone-else")],
        classes=[StorageClass("sc", provisioner="d1")],
        csi_nodes=[make_csi_node("a", {"d1": 2}), make_csi_node("b", {"d1": 1, "d2": 2}),
                   make_csi_node("c", {"d1": None, "d2": 0})],
        attachments=[VolumeAttachment("va5", attacher="d2", node_name="b",
                                      persistent_volume_name="pv5")],
    )


def _claims(name: str, *claims: str) -> Pod:
    """A pod using the claims; "eph" is an ephemeral volume e (its claim "<pod>-e")."""
    return pod_with_volumes(
        name, *(ephemeral_volume("e") if c == "eph" else claim_volume(c) for c in claims)
    )


def _nominate(snap: Snapshot) -> None:
    z = _claims("z", "c4")
    snap.add_nominated(z)
    snap.add_temporary(snap.nominated[z.uid], "b")


def _unnominate(snap: Snapshot) -> None:
    (temp,) = snap.temporaries.values()
    snap.remove_temporary(temp)


Step = Callable[[Snapshot], object]
STEPS: list[tuple[str, Step, tuple[str, ...], list[Verdict]]] = [
    ("no pods: one volume fits each node's limit",
     lambda s: None, ("c1",), [None, None, None]),
    ("a VolumeAttachment counts, and a new pod's same volume counts again (pods' only dedup)",
     lambda s: None, ("c5", "c6"), [None, MAX, MAX]),
    ("two pods' volumes on a fill its limit of 2",
     lambda s: (s.add_pod(_claims("x1", "c1"), "a"), s.add_pod(_claims("x2", "c2"), "a")),
     ("c3",), [MAX, None, None]),
    ("a volume a pod on the node attaches is not counted again",
     lambda s: None, ("c1",), [None, None, None]),
    ("the shared volume is not counted, the other one is",
     lambda s: None, ("c1", "c3"), [MAX, MAX, None]),
    ("a pod removed frees its volume",
     lambda s: s.remove_pod("default/x2"), ("c3",), [None, None, None]),
    ("a pod attaching the VolumeAttachment's volume: counted once, and shared with the new pod",
     lambda s: s.add_pod(_claims("y", "c5"), "b"), ("c5", "c6"), [None, None, MAX]),
    ("a nominated pod's temporary on b counts there",
     _nominate, ("c3",), [None, MAX, None]),
    ("and shares its volume",
     lambda s: None, ("c4",), [None, None, None]),
    ("the temporary removed, b has room again",
     _unnominate, ("c3",), [None, None, None]),
    ("a preemption victim taken off a frees its volume",
     lambda s: s.remove_pod("default/x1"), ("c2", "c3"), [None, MAX, None]),
    ("the victim put back counts again",
     lambda s: s.add_pod(_claims("x1", "c1"), "a"), ("c2", "c3"), [MAX, MAX, None]),
    ("an unbound claim counts for its class's provisioner",
     lambda s: s.add_pod(_claims("w", "u"), "b"), ("c3",), [None, MAX, None]),
    ("the same unbound claim is shared",
     lambda s: None, ("u",), [None, None, None]),
    ("a pod whose volume cannot be counted is kube's Error on its node",
     lambda s: s.add_pod(pod_with_volumes("bad", ephemeral_volume("e")), "a"),
     ("c4",), [NOT_OWNER, MAX, None]),
    ("that pod removed, the node counts again",
     lambda s: s.remove_pod("default/bad"), ("c4",), [None, MAX, None]),
    ("an existing pod's missing claim is not counted",
     lambda s: s.add_pod(_claims("m", "gone"), "a"), ("c3",), [None, MAX, None]),
]


def test_the_steps_of_the_table_give_kubes_verdicts() -> None:
    """One snapshot through every step (its counts kept across them), the verdicts per step."""
    snap = _world()
    for i, (what, change, claims, want) in enumerate(STEPS):
        change(snap)
        assert check(_claims(f"new{i}", *claims), snap) == want, what
    counts = PodVolumeIndex.for_snapshot(snap).derived[KEY]
    assert isinstance(counts, AttachCounts) and counts.errors == {}


@pytest.mark.parametrize("limit", [1, 3])
def test_a_consumer_left_behind_the_kept_changes_rebuilds(limit: int) -> None:
    """With the change log bounded to `limit`, the counts still follow: past it they are
    built again instead of refreshed."""
    with mock.patch("schedsvc.framework.pod_volumes.CHANGE_LOG_LIMIT", limit):
        test_the_steps_of_the_table_give_kubes_verdicts()


def test_the_change_log_gives_the_rows_since_a_position() -> None:
    snap = _world()
    index = PodVolumeIndex.for_snapshot(snap)
    start = index.volume_position
    snap.add_pod(_claims("x", "c1"), "b")
    snap.add_pod(pod_with_volumes("none"), "a")  # no volume: not logged
    snap.remove_pod("default/x")
    assert index.volume_changes_since(start) == [snap.index["b"]] * 2
    assert index.volume_changes_since(index.volume_position) == []


# ---- the property -----------------------------------------------------------------------------
CLAIMS = ("c0", "c1", "c2", "c3", "c4", "u", "eph")
OPS = ("add", "add", "add", "remove", "nominate", "unnominate", "preempt", "update")
POD_NAMES = [f"p{n}" for n in range(12)] + [f"new{n}" for n in range(12)] + ["preemptor"]
limits_st = st.one_of(st.none(), st.integers(0, 3))
csi_st = st.one_of(st.none(), st.fixed_dictionaries({"d1": limits_st, "d2": limits_st}))
ops_st = st.lists(
    st.tuples(st.sampled_from(OPS), st.sampled_from(NODES),
              st.lists(st.sampled_from(CLAIMS), min_size=0, max_size=3, unique=True),
              st.lists(st.sampled_from(CLAIMS), min_size=1, max_size=3, unique=True)),
    min_size=1, max_size=12,
)


def _random_world(drivers: list[str], csi: list[dict[str, int | None] | None],
                  vas: list[tuple[int, str]]) -> Snapshot:
    """c0-c4 bound to pv0-pv4 of the drawn drivers, u unbound (class sc: d1), every pod's
    ephemeral claim owned by another (an Error wherever the pod is); the drawn CSINodes
    (None: none) and VolumeAttachments (pv, node)."""
    csi_nodes: list[CSINode] = [make_csi_node(n, lim) for n, lim in zip(NODES, csi, strict=True)
                                if lim is not None]
    return volume_snapshot(
        [Node(n) for n in NODES],
        pvs=[csi_pv(f"pv{i}", d) for i, d in enumerate(drivers)],
        pvcs=[make_pvc(f"c{i}", volume_name=f"pv{i}") for i in range(5)]
        + [make_pvc("u", storage_class="sc")]
        + [make_pvc(f"{p}-e", storage_class="sc", owner_uid="other") for p in POD_NAMES],
        classes=[StorageClass("sc", provisioner="d1")], csi_nodes=csi_nodes,
        attachments=[VolumeAttachment(f"va{i}", attacher=drivers[pv], node_name=n,
                                      persistent_volume_name=f"pv{pv}")
                     for i, (pv, n) in enumerate(vas)],
    )


def _apply(
    snap: Snapshot, op: str, node: str, claims: list[str], n: int, features: Features
) -> None:
    if op == "update":  # the client's update: a VolumeAttachment more (the columns rebuilt)
        pv = snap.storage.pvs[f"pv{n % 5}"]
        assert pv.csi is not None
        va = VolumeAttachment(f"new-va{n}", pv.csi.driver, node, pv.name)
        snap.storage.attachments[va.name] = va
        snap.storage.objects_generation += 1
        snap.storage.generation += 1
    elif op == "add":
        snap.add_pod(_claims(f"p{n}", *claims), node)
    elif op == "remove" and snap.pods:
        snap.remove_pod(next(iter(snap.pods)))
    elif op == "nominate":
        pod = _claims(f"p{n}", *claims)
        snap.add_nominated(pod)
        snap.add_temporary(snap.nominated[pod.uid], node)
    elif op == "unnominate" and snap.temporaries:
        snap.remove_temporary(next(iter(snap.temporaries.values())))
    elif op == "preempt":  # the victims off, a filter, the victims back (select_victims.py)
        victims = [r for r in snap.pods.values() if r.node_name == node]
        for r in victims:
            snap.remove_pod(r.pod.uid)
        check(_claims("preemptor", *claims), snap, features)
        for r in victims:
            snap.add_pod(r.pod, node, info=r.info)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drivers=st.lists(st.sampled_from(("d1", "d2")), min_size=5, max_size=5),
       csi=st.lists(csi_st, min_size=3, max_size=3),
       vas=st.lists(st.tuples(st.integers(0, 4), st.sampled_from(NODES)), max_size=3),
       ops=ops_st, log_limit=st.sampled_from((2, 4096)),
       version=st.sampled_from(list(EmulatedVersion)))
def test_the_kept_counts_equal_a_recount_on_every_node(
    drivers: list[str], csi: list[dict[str, int | None] | None], vas: list[tuple[int, str]],
    ops: list[tuple[str, str, list[str], list[str]]], log_limit: int, version: EmulatedVersion,
) -> None:
    """After every change, a new pod's verdict on every node is the per-row recount's and that
    of counts built from scratch (claims shared between pods, VolumeAttachments of pods'
    volumes and others, added by updates too, limits 0-3 or none, nodes without a CSINode,
    pods whose volume cannot be counted)."""
    features = Features(version)
    with mock.patch("schedsvc.framework.pod_volumes.CHANGE_LOG_LIMIT", log_limit):
        snap = _random_world(drivers, csi, vas)
        for n, (op, node, claims, new) in enumerate(ops):
            _apply(snap, op, node, claims, n, features)
            check(_claims(f"new{n}", *new), snap, features)
    counts = PodVolumeIndex.for_snapshot(snap).derived.get(KEY)
    assert counts is None or isinstance(counts, AttachCounts)
    if isinstance(counts, AttachCounts):  # nothing kept for rows without a limit
        assert not np.any([a[~counts.cols.has_limits].any() for a in counts.counts.values()])
