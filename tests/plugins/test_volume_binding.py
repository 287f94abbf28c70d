"""VolumeBinding at the plugin level: kube v1.37.2's TestVolumeBinding table
(volume_binding_test.go), each case named as kube names it: PreFilter, Filter on each node in
order, PreScore and Score; and the plugin's args under each release's gate."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework import SKIP, Code, PreFilterResult
from schedsvc.framework.feature import EmulatedVersion, Features
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Node, Pod
from schedsvc.model_storage import IMMEDIATE, PersistentVolume, PersistentVolumeClaim
from schedsvc.plugins import volume_binding as vb
from schedsvc.plugins.volume_binding import UtilizationShapePoint, VolumeBindingArgs
from tests.builders.pv_claims import (
    NODE_KEY,
    Gi,
    affinity,
    driver,
    make_capacity,
    make_class,
    make_pv,
    make_pvc,
    make_storage_node,
    pod_with_claims,
    storage_snapshot,
)

CLASSES = (
    make_class("immediate-sc", IMMEDIATE),
    make_class("wait-sc"),
    make_class("wait-hdd-sc"),
    make_class("wait-sc-with-storage-capacity", provisioner="driver-with-storage-capacity"),
)
DRIVERS = (driver("driver-with-storage-capacity", True),)
BIND = [vb.ERR_BIND_CONFLICT]


@dataclass
class Case:
    pod: Pod
    nodes: list[Node]
    pvcs: list[PersistentVolumeClaim] = field(default_factory=list)
    pvs: list[PersistentVolume] = field(default_factory=list)
    capacities: list[object] = field(default_factory=list)
    scoring: bool = False  # kube's test turns the gate on per case
    shape: tuple[tuple[int, int], ...] = ((0, 10), (100, 0))  # defaultShapePoint in 1.37
    pre_filter: str | None = None  # the UnschedulableAndUnresolvable reason, if any
    filters: list[list[str]] = field(default_factory=list)  # reasons per node ([] = fits)
    scores: list[int] | None = None  # None: PreScore skips


def _host_pv(name: str, cls: str, cap: int, host: str) -> PersistentVolume:
    return make_pv(name, cls, cap, node_affinity=affinity({"kubernetes.io/hostname": [host]}))


def _zone_pv(name: str, cap: int, zone: str) -> PersistentVolume:
    return make_pv(name, "wait-sc", cap, node_affinity=affinity({
        "topology.kubernetes.io/region": [f"region-{zone}"],
        "topology.kubernetes.io/zone": [f"zone-{zone}"],
    }))


def _zone_nodes() -> list[Node]:
    return [
        make_storage_node(f"zone-{z}-node-{n}", **{
            "topology.kubernetes.io/region": f"region-{z}",
            "topology.kubernetes.io/zone": f"zone-{z}",
        }) for z in "abc" for n in "ab"
    ]


def _local(scoring: bool) -> Case:
    return Case(
        pod_with_claims("pod-a", "pvc-a"),
        [make_storage_node(n) for n in ("node-a", "node-b", "node-c")],
        [make_pvc("pvc-a", "wait-sc", 50 * Gi)],
        [_host_pv(f"pv-{n}-{i}", "wait-sc", cap * Gi, f"node-{n}")
         for n, cap in (("a", 200), ("b", 100)) for i in (0, 1)],
        scoring=scoring, filters=[[], [], BIND], scores=[75, 50, 0] if scoring else None,
    )


def _zonal(scoring: bool, shape: tuple[tuple[int, int], ...] = ((0, 10), (100, 0)),
           scores: list[int] | None = None) -> Case:
    return Case(
        pod_with_claims("pod-a", "pvc-a"), _zone_nodes(), [make_pvc("pvc-a", "wait-sc", 50 * Gi)],
        [_zone_pv("pv-a-0", 200 * Gi, "a"), _zone_pv("pv-a-1", 200 * Gi, "a"),
         _zone_pv("pv-b-0", 100 * Gi, "b"), _zone_pv("pv-b-1", 100 * Gi, "b")],
        scoring=scoring, shape=shape, filters=[[], [], [], [], BIND, BIND], scores=scores,
    )


def _capacity_nodes(names: str = "abc") -> list[Node]:
    return [make_storage_node(f"node-{n}", **{NODE_KEY: f"node-{n}"}) for n in names]


def _capacities(*caps: int) -> list[object]:
    return [make_capacity(f"node-{n}", "wait-sc-with-storage-capacity", f"node-{n}", c * Gi)
            for n, c in zip("abc", caps, strict=False)]


def _dynamic(caps: tuple[int, ...], shape: tuple[tuple[int, int], ...], scores: list[int]) -> Case:
    return Case(
        pod_with_claims("pod-a", "pvc-dynamic"), _capacity_nodes(),
        [make_pvc("pvc-dynamic", "wait-sc-with-storage-capacity", 10 * Gi)],
        capacities=_capacities(*caps), scoring=True, shape=shape, filters=[[], [], []],
        scores=scores,
    )


CASES = {
    "pod has not pvcs": Case(Pod(uid="pod-a", name="pod-a"), [make_storage_node("node-a")]),
    "all bound": Case(
        pod_with_claims("pod-a", "pvc-a"), [make_storage_node("node-a")],
        [make_pvc("pvc-a", "wait-sc", bound_to="pv-a")], [make_pv("pv-a", "wait-sc")],
        filters=[[]],
    ),
    "PVC does not exist": Case(
        pod_with_claims("pod-a", "pvc-a"), [make_storage_node("node-a")],
        pre_filter='persistentvolumeclaim "pvc-a" not found',
    ),
    "Part of PVCs do not exist": Case(
        pod_with_claims("pod-a", "pvc-a", "pvc-b"), [make_storage_node("node-a")],
        [make_pvc("pvc-a", "wait-sc", bound_to="pv-a")], [make_pv("pv-a", "wait-sc")],
        pre_filter='persistentvolumeclaim "pvc-b" not found',
    ),
    "immediate claims not bound": Case(
        pod_with_claims("pod-a", "pvc-a"), [make_storage_node("node-a")],
        [make_pvc("pvc-a", "immediate-sc")], pre_filter=vb.ERR_UNBOUND_IMMEDIATE,
    ),
    "unbound claims no matches": Case(
        pod_with_claims("pod-a", "pvc-a"), [make_storage_node("node-a")],
        [make_pvc("pvc-a", "wait-sc")], filters=[BIND],
    ),
    "bound and unbound unsatisfied": Case(
        pod_with_claims("pod-a", "pvc-a", "pvc-b"), [make_storage_node("node-a", foo="barbar")],
        [make_pvc("pvc-a", "wait-sc", bound_to="pv-a"), make_pvc("pvc-b", "wait-sc")],
        [make_pv("pv-a", "wait-sc", node_affinity=affinity({"foo": ["bar"]}))],
        filters=[[vb.ERR_NODE_CONFLICT, vb.ERR_BIND_CONFLICT]],
    ),
    "pv not found": Case(
        pod_with_claims("pod-a", "pvc-a"), [make_storage_node("node-a")],
        [make_pvc("pvc-a", "wait-sc", bound_to="pv-a")], filters=[[vb.ERR_PV_NOT_EXIST]],
    ),
    "pv not found claim lost": Case(
        pod_with_claims("pod-a", "pvc-a"), [make_storage_node("node-a")],
        [make_pvc("pvc-a", "wait-sc", bound_to="pv-a", phase="Lost")],
        pre_filter='persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"',
    ),
    "local volumes with close capacity are preferred": _local(True),
    "local volumes with close capacity are preferred (StorageCapacityScoring disabled)":
        _local(False),
    "local volumes with close capacity are preferred (multiple pvcs)": Case(
        pod_with_claims("pod-a", "pvc-0", "pvc-1"),
        [make_storage_node(n) for n in ("node-a", "node-b", "node-c")],
        [make_pvc("pvc-0", "wait-sc", 50 * Gi), make_pvc("pvc-1", "wait-hdd-sc", 100 * Gi)],
        [_host_pv(f"pv-{n}-{i}", cls, cap * Gi, f"node-{n}")
         for n, cap in (("a", 200), ("b", 100))
         for i, cls in enumerate(("wait-sc", "wait-sc", "wait-hdd-sc", "wait-hdd-sc"))],
        scoring=True, filters=[[], [], BIND], scores=[63, 25, 0],
    ),
    "zonal volumes with close capacity are preferred":
        _zonal(True, scores=[75, 75, 50, 50, 0, 0]),
    "zonal volumes with close capacity are preferred (StorageCapacityScoring disabled)":
        _zonal(False),
    "zonal volumes with close capacity are preferred (custom shape)":
        _zonal(True, ((0, 0), (50, 3), (100, 5)), [15, 15, 30, 30, 0, 0]),
    "storage capacity score": _dynamic((100, 50, 10), ((0, 10), (100, 0)), [90, 80, 0]),
    "storage capacity score with static binds": Case(
        pod_with_claims("pod-a", "pvc-dynamic", "pvc-static"), _capacity_nodes(),
        [make_pvc("pvc-dynamic", "wait-sc-with-storage-capacity", 10 * Gi),
         make_pvc("pvc-static", "wait-sc", 50 * Gi)],
        [_host_pv(f"pv-static-{n}", "wait-sc", 100 * Gi, f"node-{n}") for n in "abc"],
        capacities=_capacities(100, 50, 10), scoring=True, filters=[[], [], []],
        scores=[50, 50, 50],
    ),
    "dynamic provisioning with multiple PVCs of the same StorageClass": Case(
        pod_with_claims("pod-a", "pvc-dynamic-0", "pvc-dynamic-1"), _capacity_nodes("a"),
        [make_pvc(f"pvc-dynamic-{i}", "wait-sc-with-storage-capacity", 50 * Gi) for i in (0, 1)],
        capacities=_capacities(100), scoring=True, filters=[[]], scores=[0],
    ),
    "prefer node with least allocatable":
        _dynamic((100, 20, 10), ((0, 0), (100, 10)), [10, 50, 100]),
    "prefer node with maximum allocatable":
        _dynamic((100, 20, 10), ((0, 10), (100, 0)), [90, 50, 0]),
}


def _plugin(case: Case) -> vb.VolumeBinding:
    shape = tuple(UtilizationShapePoint(u, s) for u, s in case.shape) if case.scoring else ()
    return vb.VolumeBinding(VolumeBindingArgs(shape=shape, scoring=case.scoring))


@pytest.mark.parametrize("name", list(CASES))
def test_volume_binding(name: str) -> None:
    case = CASES[name]
    snap = storage_snapshot(case.nodes, pvs=case.pvs, pvcs=case.pvcs, classes=CLASSES,
                            drivers=DRIVERS, capacities=case.capacities)  # type: ignore[arg-type]
    pl, info = _plugin(case), pod_info(case.pod)
    rows = np.array([snap.index[n.name] for n in case.nodes], dtype=np.intp)
    pre = pl.pre_filter(info, snap)
    if pre is SKIP:
        assert not case.filters and case.pre_filter is None
    else:
        assert isinstance(pre, PreFilterResult)
        assert pre.node_names is None  # VolumeBinding never narrows the nodes
        if case.pre_filter is not None:
            assert pre.reject == (case.pre_filter,)
            assert pre.reject_code == Code.UNRESOLVABLE
            return
        assert pre.reject == ()
        res = pl.filter(pre.state, info, snap, rows)
        assert res.code == Code.UNRESOLVABLE
        got = [[r for r, m in res.reasons if m[i]] for i in range(len(rows))]
        assert got == case.filters
        assert res.feasible.tolist() == [not r for r in case.filters]
    scored = pl.pre_score(info, snap, rows)
    if case.scores is None:  # the gate is off in every such case
        assert scored is SKIP
        return
    scores = pl.score(scored, info, snap, rows)
    assert pl.normalize(scored, info, scores).tolist() == case.scores


def test_a_pod_without_claims_scores_zero_in_1_37_and_is_skipped_in_1_35() -> None:
    """StorageCapacityScoring: Beta and on in v1.37.2, Alpha and off in v1.35.4."""
    snap = storage_snapshot([make_storage_node("node-a")], classes=CLASSES)
    info, rows = pod_info(Pod(uid="p", name="p")), np.array([0], dtype=np.intp)
    on = vb.new(None, Features(EmulatedVersion.V1_37))
    off = vb.new(None, Features(EmulatedVersion.V1_35))
    assert on.pre_filter(info, snap) is SKIP and off.pre_filter(info, snap) is SKIP
    assert on.score(on.pre_score(info, snap, rows), info, snap, rows).tolist() == [0]
    assert off.pre_score(info, snap, rows) is SKIP


@pytest.mark.parametrize(("args", "version", "field", "message"), [
    ({"bindTimeoutSeconds": -1}, EmulatedVersion.V1_37, "bindTimeoutSeconds",
     "invalid BindTimeoutSeconds, should not be a negative value"),
    ({"shape": []}, EmulatedVersion.V1_37, "shape", "at least one point must be specified"),
    ({"shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]},
     EmulatedVersion.V1_37, "shape[1].utilization", "values must be sorted in increasing order"),
    ({"shape": [{"utilization": 101, "score": 1}]}, EmulatedVersion.V1_37,
     "shape[0].utilization", "not in valid range [0, 100]"),
    ({"shape": [{"utilization": 1, "score": 11}]}, EmulatedVersion.V1_37, "shape[0].score",
     "not in valid range [0, 10]"),
    ({"shape": [{"utilization": 0, "score": 1}]}, EmulatedVersion.V1_35, "shape",
     "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"),
])
def test_args_are_validated_as_kube_validates_them(
    args: dict[str, object], version: EmulatedVersion, field: str, message: str
) -> None:
    with pytest.raises(ConfigError) as e:
        vb.new(args, Features(version))
    assert e.value.field == f"pluginConfig[VolumeBinding].args.{field}"
    assert message in str(e.value)


def test_args_default_the_shape_only_with_the_gate_on() -> None:
    assert vb.new(None, Features(EmulatedVersion.V1_37)).args.shape == vb.DEFAULT_SHAPE
    assert vb.new(None, Features(EmulatedVersion.V1_35)).args.shape == ()
    assert vb.new({"bindTimeoutSeconds": 30}).args.bind_timeout_seconds == 30


def test_pods_with_claims_are_never_signed_and_others_sign_their_sources() -> None:
    pl = vb.new(None)
    assert pl.sign(pod_info(pod_with_claims("a", "data"))) is None
    assert pl.sign(pod_info(pod_with_claims("a", ephemeral=["scratch"]))) is None
    plain = pl.sign(pod_info(pod_with_claims("a", other=["emptyDir"])))
    assert plain is not None
    assert plain == pl.sign(pod_info(pod_with_claims("b", other=["emptyDir"])))
    # configMap and secret volumes are synthetic sources kube's signer leaves out
    assert pl.sign(pod_info(pod_with_claims("a", other=["configMap"]))) == pl.sign(
        pod_info(Pod(uid="c", name="c"))
    )
