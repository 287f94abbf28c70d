"""The recorded volume cases (tests/data/volumes, kube-oracle's verdicts) and their generator
(tools/casegen_volumes.py): the recordings parse, hold every outcome the comparison with our
engine needs, and are the generator's cases for the seed their README names."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from schedsvc.model_storage import VolumeBindingResult
from tools.casegen_volumes import generate, make_case
from tools.volume_verdicts import (
    RECORDINGS,
    VolumeCase,
    VolumeCaseError,
    load_volume_cases,
    read_volume_cases,
)

SEED, COUNT = 20261126, 1000  # tests/data/volumes/README.md's command
PLUGINS = ("VolumeBinding", "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits")
CASES = {v: load_volume_cases(v) for v in RECORDINGS}


def _inputs(c: VolumeCase) -> dict[str, object]:
    return {k: v for k, v in c.case.items() if k != "expected"}


@pytest.mark.parametrize("version", sorted(RECORDINGS))
def test_each_recording_holds_every_case_once(version: str) -> None:
    cases = CASES[version]
    assert len(cases) == COUNT
    assert len({c.id for c in cases}) == COUNT
    assert all(len(c.nodes) == len(c.case["nodes"]) for c in cases)


@pytest.mark.parametrize("version", sorted(RECORDINGS))
def test_recordings_hold_both_outcomes_each_plugins_rejections_and_errors(version: str) -> None:
    cases = CASES[version]
    placed = [c for c in cases if c.placed]
    unplaced = [c for c in cases if not c.placed and c.error is None]
    errors = [c for c in cases if c.error is not None]
    assert len(placed) > 100 and len(unplaced) > 100 and len(errors) >= 5
    assert all(c.fit_error for c in unplaced) and not any(c.fit_error for c in placed)
    for c in errors:  # an Error ends kube's cycle: no FitError, no choice
        assert c.error is not None and c.error["message"] and not c.fit_error and not c.placed
    rejecting = Counter(n.plugin for c in cases for n in c.nodes if not n.feasible)
    for plugin in PLUGINS:
        assert rejecting[plugin] > 0, plugin
    codes = {n.code for c in cases for n in c.nodes if not n.feasible}
    assert {"Unschedulable", "UnschedulableAndUnresolvable", "Error"} <= codes


@pytest.mark.parametrize("version", sorted(RECORDINGS))
def test_bindings_name_pvs_and_provisioning_on_the_top_nodes(version: str) -> None:
    bound = [c for c in CASES[version] if c.bindings_by_node]
    assert len(bound) > 30
    static = dynamic = 0
    for c in bound:
        assert set(c.bindings_by_node) <= set(c.max_nodes)
        for node, bindings in c.bindings_by_node.items():
            for b in bindings:
                assert b.claim.startswith("default/")
                if b.provisioned:
                    dynamic += 1
                    assert b.selected_node == node and not b.volume_name
                else:
                    static += 1
                    assert b.volume_name.startswith("pv-") and not b.selected_node
    assert static > 10 and dynamic > 10


def test_the_two_recordings_share_inputs_and_differ_where_the_gates_do() -> None:
    new, old = CASES["1.37"], CASES["1.35"]
    assert [_inputs(c) for c in new] == [_inputs(c) for c in old]
    differ = Counter()
    for a, b in zip(new, old, strict=True):
        for na, nb in zip(a.nodes, b.nodes, strict=True):
            if (na.scores or {}).get("VolumeBinding") != (nb.scores or {}).get("VolumeBinding"):
                differ["VolumeBinding score"] += 1
            if na.reasons != nb.reasons:
                differ["reasons"] += 1
    # StorageCapacityScoring off: VolumeBinding does not score; VolumeLimitScaling off: no
    # "CSI driver is not installed" rejection
    assert differ["VolumeBinding score"] > 50 and differ["reasons"] > 0
    installed = "csi.slow.example.com CSI driver is not installed on the node"
    assert any(installed in n.reasons for c in new for n in c.nodes)
    assert not any(installed in n.reasons for c in old for n in c.nodes)


def test_recorded_inputs_are_the_generators_cases_for_the_readme_seed() -> None:
    cases = CASES["1.37"]
    for i in (0, 1, 123, COUNT - 1):
        assert _inputs(cases[i]) == make_case(SEED, i)


def test_a_seed_gives_the_same_cases_and_case_i_does_not_depend_on_n() -> None:
    first = list(generate(SEED, 4))
    assert list(generate(SEED, 2)) == first[:2]
    assert make_case(SEED + 1, 0) != first[0]


def test_generated_cases_avoid_what_kube_decides_at_random() -> None:
    for c in generate(7, 150):
        objs = c["objects"]
        sizes = [o["spec"]["capacity"]["storage"] for o in objs if o["kind"] == "PersistentVolume"]
        assert len(sizes) == len(set(sizes)), c["id"]  # no equally small matching PVs
        caps = [o for o in objs if o["kind"] == "CSIStorageCapacity"]
        assert all("capacity" in o for o in caps)  # kube's capacity scoring panics without
        per_class = Counter((o["storageClassName"], next(iter(o["nodeTopology"]["matchLabels"])))
                            for o in caps)
        assert len({cls for cls, _ in per_class}) == len(per_class)  # one granularity a class
        names = {n["metadata"]["name"] for n in c["nodes"]}
        assert all(p["spec"]["nodeName"] in names for p in c["pods"])
        claims = [o for o in objs if o["kind"] == "PersistentVolumeClaim"]
        assert all(o["metadata"]["uid"] for o in claims)
        assert all(o["volumeBindingMode"] for o in objs if o["kind"] == "StorageClass")


def test_a_malformed_line_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write('{"id": "x", "expected": {"nodes": [{"name": "n0", "feasible": true}]}}\n')
        f.write('{"id": "y"}\n')
    it = read_volume_cases(path)
    first = next(it)
    assert first.id == "x" and first.nodes[0].feasible and first.error is None
    with pytest.raises(VolumeCaseError, match=r"bad\.jsonl\.gz:2: KeyError"):
        next(it)


def test_binding_records_read_kubes_fields() -> None:
    c = next(c for c in CASES["1.37"] if any(b.provisioned for bs in c.bindings_by_node.values()
                                              for b in bs))
    raw = c.case["expected"]["volumeBindingsByNode"]
    node = next(iter(raw))
    first = raw[node][0]
    assert c.bindings_by_node[node][0] == VolumeBindingResult(
        claim=first["claim"], volume_name=first.get("volumeName", ""),
        provisioned=first.get("provisioned", False), selected_node=first.get("selectedNode", ""))


def test_recorded_cases_cover_every_volume_feature_of_the_generator() -> None:
    seen = Counter(f for c in CASES["1.37"] for f in c.features)
    wanted = {"csiNode", "noCSINode", "attachLimit", "migratedPlugins", "storageCapacity",
              "capacityObject", "maximumVolumeSize", "allowedTopologies", "missingClass",
              "pvNodeAffinity", "pvZoneAffinity", "zoneLabeledPV", "inTreePV",
              "readWriteOncePod", "boundClaim", "claimFitsPV", "lostClaim", "claimBeingDeleted",
              "claimSelector", "volumeAttachment", "pvcVolume", "sharedClaim", "missingClaim",
              "ephemeralVolume", "ephemeralNotOwned", "ephemeralNoClaim", "inTreeDisk",
              "azureDiskShared", "inlineCSI", "emptyDir", "noVolumes",
              "preventPodSchedulingIfMissing"}
    assert {f for f in wanted if seen[f] < 5} == set()
