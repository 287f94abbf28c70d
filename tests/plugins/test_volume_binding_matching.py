"""VolumeBinding's static matching over every row (matching_static.py) against kube's
findMatchingVolumes written out node by node: claims by requested size, each running
FindMatchingVolume over the class's PVs with the PVs earlier claims took on that node excluded
(the pre-bound PV returned when its affinity fits, else nothing; otherwise the smallest fitting
PV, ties by name where kube's follow map order)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.framework import storage as storage_module
from schedsvc.framework.snapshot import Snapshot
from schedsvc.framework.storage import Assumption
from schedsvc.model import LabelSelector, NodeSelectorRequirement, NodeSelectorTerm
from schedsvc.model_storage import (
    BLOCK,
    FILESYSTEM,
    READ_WRITE_MANY,
    READ_WRITE_ONCE,
    ClaimRef,
    PersistentVolume,
    PersistentVolumeClaim,
)
from schedsvc.plugins.volume_binding.matching_static import match_static
from tests.builders.pv_claims import make_pv, make_pvc, make_storage_node, storage_snapshot

ZONES = ("a", "b")
NODES = tuple(make_storage_node(f"n{i}", zone=ZONES[i % 2]) for i in range(5))
CLAIMS = tuple(f"c{i}" for i in range(3))


def _admits(pv: PersistentVolume, labels: Mapping[str, str]) -> bool:
    if pv.node_affinity is None:
        return True
    return any(
        all(labels.get(r.key) in r.values for r in term.match_expressions)
        for term in pv.node_affinity
    )


def _refers(pv: PersistentVolume, c: PersistentVolumeClaim) -> bool:
    ref = pv.claim_ref
    return ref is not None and (ref.namespace, ref.name, ref.uid) == (c.namespace, c.name, c.uid)


def _find_matching_volume(
    c: PersistentVolumeClaim, pvs: list[PersistentVolume], labels: Mapping[str, str],
    excluded: set[str],
) -> str | None:
    smallest: PersistentVolume | None = None
    for pv in sorted(pvs, key=lambda p: p.name):
        if pv.name in excluded or pv.class_name() != c.class_name():
            continue
        if pv.claim_ref is not None and not _refers(pv, c):
            continue
        if (pv.capacity or 0) < (c.request or 0) or pv.volume_mode != c.volume_mode:
            continue
        if _refers(pv, c):
            return pv.name if _admits(pv, labels) else None
        if pv.phase != "Available" or not _admits(pv, labels):
            continue
        if c.selector is not None and not c.selector.matches(pv.labels):
            continue
        if not set(c.access_modes) <= set(pv.access_modes):
            continue
        if smallest is None or (smallest.capacity or 0) > (pv.capacity or 0):
            smallest = pv
    return smallest.name if smallest is not None else None


def _reference(claims: list[PersistentVolumeClaim], pvs: list[PersistentVolume]) -> list[list]:
    ordered = sorted(claims, key=lambda c: c.request or 0)
    out: list[list] = [[] for _ in ordered]
    for node in NODES:
        taken: set[str] = set()
        for k, c in enumerate(ordered):
            found = _find_matching_volume(c, pvs, node.labels, taken)
            if found is not None:
                taken.add(found)
            out[k].append(found)
    return out


def _affinity(kind: str, i: int) -> tuple[NodeSelectorTerm, ...] | None:
    if kind == "none":
        return None
    key, value = ("zone", ZONES[i % 2]) if kind == "zone" else ("kubernetes.io/hostname", f"n{i}")
    return (NodeSelectorTerm((NodeSelectorRequirement(key, "In", (value,)),)),)


@st.composite
def worlds(draw: st.DrawFn) -> tuple[list[PersistentVolumeClaim], list[PersistentVolume]]:
    claims = [
        make_pvc(name, draw(st.sampled_from(["x", "y"])), draw(st.sampled_from([1, 2, 4])),
                 access_modes=(draw(st.sampled_from([READ_WRITE_ONCE, READ_WRITE_MANY])),),
                 volume_mode=draw(st.sampled_from([FILESYSTEM, FILESYSTEM, BLOCK])),
                 selector=draw(st.sampled_from([None, LabelSelector((("tier", "fast"),))])))
        for name in CLAIMS[: draw(st.integers(1, 3))]
    ]
    pvs = []
    for i in range(draw(st.integers(0, 12))):
        ref = draw(st.sampled_from([None, None, None, *claims]))
        pvs.append(make_pv(
            f"pv{draw(st.integers(0, 99)):02d}-{i}", draw(st.sampled_from(["x", "y"])),
            draw(st.sampled_from([1, 2, 4, 8])),
            node_affinity=_affinity(draw(st.sampled_from(["none", "zone", "host"])),
                                    draw(st.integers(0, 5))),
            phase=draw(st.sampled_from(["Available"] * 3 + ["Bound", "Released"])),
            claim=ref, labels={"tier": draw(st.sampled_from(["fast", "slow"]))},
            access_modes=tuple(draw(st.sets(st.sampled_from([READ_WRITE_ONCE, READ_WRITE_MANY])))),
            volume_mode=draw(st.sampled_from([FILESYSTEM, FILESYSTEM, BLOCK])),
        ))
    return claims, pvs


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_match_over_every_row_is_kube_find_matching_volumes_per_node(
    world: tuple[list[PersistentVolumeClaim], list[PersistentVolume]],
) -> None:
    claims, pvs = world
    snap = storage_snapshot(NODES, pvs=pvs, pvcs=claims)
    found = match_static(claims, snap)
    rows = [snap.row_of(n.name) for n in NODES]
    got = [
        [found.pvs[int(found.chosen[k, r])].name if found.chosen[k, r] >= 0 else None
         for r in rows]
        for k in range(len(found.claims))
    ]
    assert got == _reference(claims, pvs)
    assert found.all_found[rows].tolist() == [
        all(col) for col in zip(*[[x is not None for x in per] for per in got], strict=True)
    ]


def test_a_take_of_every_row_reads_the_rows_asked() -> None:
    claims = [make_pvc("c0", "x", 1, access_modes=(READ_WRITE_ONCE,))]
    pvs = [make_pv(f"pv{i}", "x", 1, node_affinity=_affinity("host", i), phase="Available",
                   access_modes=(READ_WRITE_ONCE,)) for i in (1, 3)]
    snap = storage_snapshot(NODES, pvs=pvs, pvcs=claims)
    rows = np.array([snap.row_of("n3"), snap.row_of("n0"), snap.row_of("n1")], dtype=np.intp)
    part = match_static(claims, snap).take(rows)
    assert [part.pvs[i].name if i >= 0 else None for i in part.chosen[0].tolist()] == [
        "pv3", None, "pv1"
    ]
    assert part.all_found.tolist() == [True, False, True]


def test_a_second_claim_takes_the_next_pv_of_the_same_zone() -> None:
    """Two claims of one class, three PVs of zone a: on each node of zone a the smaller claim
    takes the smallest PV, the larger the next (the first is excluded there); zone b has none."""
    claims = [make_pvc(f"c{i}", "x", 1 + i, access_modes=(READ_WRITE_ONCE,)) for i in range(2)]
    pvs = [make_pv(f"pv{i}", "x", 2 + i, node_affinity=_affinity("zone", 0), phase="Available",
                   access_modes=(READ_WRITE_ONCE,)) for i in range(3)]
    snap = storage_snapshot(NODES, pvs=pvs, pvcs=claims)
    found = match_static(claims, snap)
    names = [[found.pvs[i].name if i >= 0 else None for i in per.tolist()]
             for per in found.chosen]
    zone_a = [snap.row_of(n.name) for n in NODES if n.labels["zone"] == "a"]
    zone_b = [snap.row_of(n.name) for n in NODES if n.labels["zone"] == "b"]
    assert {names[0][r] for r in zone_a} == {"pv0"} and {names[1][r] for r in zone_a} == {"pv1"}
    assert {names[0][r] for r in zone_b} | {names[1][r] for r in zone_b} == {None}


def _assume(snap: Snapshot, uid: str, pv: PersistentVolume, c: PersistentVolumeClaim) -> None:
    taken = dataclasses.replace(pv, claim_ref=ClaimRef(c.namespace, c.name, c.uid))
    snap.storage.assume(uid, Assumption(((pv, taken),), (), ()))


@pytest.mark.parametrize("kept", [4096, 1], ids=["log kept", "log restarted every change"])
def test_the_kept_claim_refs_follow_assumes_and_restores(
    kept: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An assume takes a PV from the other claims and pre-binds it to its own; a restore gives
    it back; the kept claimRefs follow both, whether read from the log or rebuilt."""
    monkeypatch.setattr(storage_module, "_PV_CHANGES_KEPT", kept)
    c0, c1 = (make_pvc(f"c{i}", "x", 1, access_modes=(READ_WRITE_ONCE,)) for i in range(2))
    pvs = [make_pv(f"pv{i}", "x", 1 + i, phase="Available", access_modes=(READ_WRITE_ONCE,))
           for i in range(2)]
    snap = storage_snapshot(NODES, pvs=pvs, pvcs=[c0, c1])

    def first(c: PersistentVolumeClaim) -> str | None:
        found = match_static([c], snap)
        i = int(found.chosen[0, 0])
        return found.pvs[i].name if i >= 0 else None

    assert (first(c0), first(c1)) == ("pv0", "pv0")
    _assume(snap, "p0", pvs[0], c0)
    assert (first(c0), first(c1)) == ("pv0", "pv1")  # pv0 pre-bound to c0, taken for c1
    _assume(snap, "p1", pvs[1], c1)
    assert (first(c0), first(c1)) == ("pv0", "pv1")
    snap.storage.restore("p0")
    assert (first(c0), first(c1)) == ("pv0", "pv1")  # c0 free to take pv0 again
    snap.storage.restore("p1")
    assert (first(c0), first(c1)) == ("pv0", "pv0")
