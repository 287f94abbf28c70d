"""VolumeRestrictions: kube's volume_restrictions_test.go (TestGCEDiskConflicts,
TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts)
case by case, PreFilter then Filter as kube's harness runs them; the not-found message is a
real lister's (singular)."""

from __future__ import annotations

import dataclasses

import pytest

from schedsvc.framework import Code, PreFilterResult
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Node, Pod
from schedsvc.model_storage import READ_WRITE_MANY, READ_WRITE_ONCE_POD
from schedsvc.model_volume import ISCSI, RBD, AWSElasticBlockStore, GCEPersistentDisk, Volume
from schedsvc.plugins import volume_restrictions
from schedsvc.plugins.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
)
from tests.builders import run_filter
from tests.builders.volume_plugins import (
    claim_volume,
    disk_volume,
    make_pvc,
    pod_with_volumes,
    volume_snapshot,
)

U = Code.UNRESOLVABLE
SKIP = ("skip", "", None)
OK = ("ok", "", None)
DISK = ("filter", ERR_REASON_DISK_CONFLICT, Code.UNSCHEDULABLE)
RWOP = ("filter", ERR_REASON_RWOP_CONFLICT, Code.UNSCHEDULABLE)


def verdict(
    pod: Pod, existing: list[Pod], pvcs: tuple[tuple[str, tuple[str, ...]], ...] = ()
) -> tuple[str, str, Code | None]:
    """("skip" | "prefilter" | "filter" | "ok", reason, code) of `pod` on node-1."""
    snap = volume_snapshot(
        [Node("node-1")], placed=[(p, "node-1") for p in existing],
        pvcs=[make_pvc(n, access_modes=m) for n, m in pvcs],
    )
    pl = volume_restrictions.new(None)
    pre = pl.pre_filter(pod_info(pod), snap)
    if isinstance(pre, PreFilterResult) and pre.reject:
        return "prefilter", pre.reject[0], pre.reject_code
    out = run_filter(pl, pod, snap)
    if out is None:
        return "skip", "", None
    if out.feasible[0]:
        return "ok", "", None
    return "filter", out.reasons[0][0], out.result.code


def disk_cases(a: Volume, b: Volume) -> list[object]:
    """kube's four disk-conflict cases for volumes A and B (B does not conflict with A)."""
    return [
        pytest.param(pod_with_volumes("p"), [], SKIP, id="nothing"),
        pytest.param(pod_with_volumes("p"), [pod_with_volumes("e", a)], SKIP, id="one state"),
        pytest.param(pod_with_volumes("p", a), [pod_with_volumes("e", a)], DISK,
                     id="same state"),
        pytest.param(pod_with_volumes("p", b), [pod_with_volumes("e", a)], OK,
                     id="different state"),
    ]


GCE = disk_cases(
    disk_volume(gce_persistent_disk=GCEPersistentDisk("foo")),
    disk_volume(gce_persistent_disk=GCEPersistentDisk("bar")),
) + [pytest.param(pod_with_volumes("p", Volume("v", "emptyDir")), [], SKIP,
                  id="pod with a volume without restrictions")]
AWS = disk_cases(
    disk_volume(aws_elastic_block_store=AWSElasticBlockStore("foo")),
    disk_volume(aws_elastic_block_store=AWSElasticBlockStore("bar")),
)
RBDS = disk_cases(
    disk_volume(rbd=RBD(monitors=("a", "b"), pool="foo", image="bar")),
    disk_volume(rbd=RBD(monitors=("c", "d"), pool="foo", image="bar")),
)
ISCSIS = disk_cases(
    disk_volume(iscsi=ISCSI("iqn.2016-12.server:storage.target01", "127.0.0.1:3260")),
    disk_volume(iscsi=ISCSI("iqn.2017-12.server:storage.target01", "127.0.0.1:3260")),
)


@pytest.mark.parametrize(("pod", "existing", "want"), GCE)
def test_gce_disk_conflicts(pod: Pod, existing: list[Pod], want: object) -> None:
    assert verdict(pod, existing) == want


@pytest.mark.parametrize(("pod", "existing", "want"), AWS)
def test_aws_disk_conflicts(pod: Pod, existing: list[Pod], want: object) -> None:
    assert verdict(pod, existing) == want


@pytest.mark.parametrize(("pod", "existing", "want"), RBDS)
def test_rbd_disk_conflicts(pod: Pod, existing: list[Pod], want: object) -> None:
    assert verdict(pod, existing) == want


@pytest.mark.parametrize(("pod", "existing", "want"), ISCSIS)
def test_iscsi_disk_conflicts(pod: Pod, existing: list[Pod], want: object) -> None:
    assert verdict(pod, existing) == want


def _ro(v: Volume, read_only: bool) -> Volume:
    """`v` with its disk's readOnly set."""
    d = v.disk
    for f in ("gce_persistent_disk", "aws_elastic_block_store", "iscsi", "rbd"):
        src = getattr(d, f)
        if src is not None:
            return dataclasses.replace(
                v, disk=dataclasses.replace(d, **{f: dataclasses.replace(src, read_only=read_only)})
            )
    return v


@pytest.mark.parametrize(
    ("source", "both_read_only_conflicts"),
    [
        pytest.param(GCE[2].values[0].volumes[0], False, id="gce: two read-only uses share"),
        pytest.param(AWS[2].values[0].volumes[0], True, id="aws: always a conflict"),
        pytest.param(RBDS[2].values[0].volumes[0], False, id="rbd: two read-only uses share"),
        pytest.param(ISCSIS[2].values[0].volumes[0], False, id="iscsi: two read-only share"),
    ],
)
def test_read_only_rules(source: Volume, both_read_only_conflicts: bool) -> None:
    """isVolumeConflict: not both readOnly (EBS: whatever readOnly says)."""
    ro, rw = _ro(source, True), _ro(source, False)
    both = verdict(pod_with_volumes("p", ro), [pod_with_volumes("e", ro)])
    assert both == (DISK if both_read_only_conflicts else OK)
    assert verdict(pod_with_volumes("p", ro), [pod_with_volumes("e", rw)]) == DISK
    assert verdict(pod_with_volumes("p", rw), [pod_with_volumes("e", ro)]) == DISK


def test_rbd_conflicts_on_any_shared_monitor() -> None:
    a = disk_volume(rbd=RBD(monitors=("a", "b"), pool="foo", image="bar"))
    b = disk_volume(rbd=RBD(monitors=("b", "c"), pool="foo", image="bar"))
    other_pool = disk_volume(rbd=RBD(monitors=("a",), pool="baz", image="bar"))
    assert verdict(pod_with_volumes("p", b), [pod_with_volumes("e", a)]) == DISK
    assert verdict(pod_with_volumes("p", other_pool), [pod_with_volumes("e", a)]) == OK


CLAIMS = (
    ("claim-with-rwop-1", (READ_WRITE_ONCE_POD,)),
    ("claim-with-rwop-2", (READ_WRITE_ONCE_POD,)),
    ("claim-with-rwx", (READ_WRITE_MANY,)),
)
RWOP1 = claim_volume("claim-with-rwop-1")
RWOP2 = claim_volume("claim-with-rwop-2")
RWX = claim_volume("claim-with-rwx")
ACCESS = [
    pytest.param(pod_with_volumes("p"), [], CLAIMS, SKIP, id="nothing"),
    pytest.param(
        pod_with_volumes("p", RWOP1), [], (),
        ("prefilter", 'persistentvolumeclaim "claim-with-rwop-1" not found', U),
        id="failed to get PVC",
    ),
    pytest.param(pod_with_volumes("p", RWOP1), [pod_with_volumes("e", RWX)], CLAIMS, SKIP,
                 id="no access mode conflict"),
    pytest.param(
        pod_with_volumes("p", RWOP1), [pod_with_volumes("e", RWX), pod_with_volumes("f", RWOP1)],
        CLAIMS, RWOP, id="access mode conflict",
    ),
    pytest.param(
        pod_with_volumes("p", RWOP1, RWOP2), [pod_with_volumes("e", RWOP1, RWOP2)], CLAIMS, RWOP,
        id="two conflicts",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "pvcs", "want"), ACCESS)
def test_access_mode_conflicts(
    pod: Pod, existing: list[Pod], pvcs: tuple[tuple[str, tuple[str, ...]], ...], want: object
) -> None:
    assert verdict(pod, existing, pvcs) == want


def test_a_claim_in_another_namespace_is_another_claim() -> None:
    """usedPVCRefCounts is keyed by namespace/name."""
    other = pod_with_volumes("e", RWOP1, namespace="other")
    assert verdict(pod_with_volumes("p", RWOP1), [other], CLAIMS) == SKIP


def test_disk_conflict_is_reported_before_rwop() -> None:
    gce = disk_volume(gce_persistent_disk=GCEPersistentDisk("foo"))
    existing = [pod_with_volumes("e", gce, RWOP1)]
    assert verdict(pod_with_volumes("p", gce, RWOP1), existing, CLAIMS) == DISK
