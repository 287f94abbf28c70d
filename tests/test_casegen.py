"""tools/casegen.py: deterministic random clusters that our reader and kube's oracle both accept,
exercising every feature; and tools/conformance_live.py's errors. The oracle part needs the Go
binary (`make oracle`) and is skipped without it; the rest always runs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tools.casegen import FEATURES, generate, make_case
from tools.conformance import CaseFileError, _to_domain, load_cases
from tools.conformance_live import OracleError, ask_oracle, default_oracle, main

SEED = 20261129
CASES = list(generate(SEED, 300))


def test_a_seed_gives_the_same_cases_and_case_i_does_not_depend_on_n() -> None:
    assert list(generate(SEED, 5)) == CASES[:5]
    assert make_case(SEED, 42) == CASES[42]
    assert make_case(SEED + 1, 0) != CASES[0]


def test_cases_are_in_the_conformance_format() -> None:
    ids = {c["id"] for c in CASES}
    assert len(ids) == len(CASES)
    sizes = [len(c["nodes"]) for c in CASES]
    assert min(sizes) >= 3 and max(sizes) <= 60 and max(sizes) > 40
    for c in CASES:
        assert c["percentageOfNodesToScore"] == 100
        assert not c["pod"]["spec"].get("nodeName")
        assert all(p["spec"]["nodeName"] for p in c["pods"])
        for obj in c["objects"]:
            assert obj["apiVersion"] and obj["kind"] and obj["metadata"]["name"]
    kinds = Counter(o["kind"] for c in CASES for o in c["objects"])
    assert set(kinds) == {"Namespace", "ReplicaSet", "Service", "PodDisruptionBudget",
                          "PriorityClass"}
    preempting = sum(bool(c.get("preemption")) for c in CASES)
    assert 50 <= preempting <= 200


def test_every_feature_is_exercised() -> None:
    seen = Counter(f for c in CASES for f in c["features"])
    assert set(seen) == set(FEATURES)
    for feature in FEATURES:
        assert seen[feature] >= 5, feature


def test_what_the_api_server_would_have_set_is_there() -> None:
    """spec.priority beside a priorityClassName, requests beside limits, unique host ports."""
    for c in CASES:
        for p in (*c["pods"], c["pod"]):
            spec = p["spec"]
            if spec.get("priorityClassName"):
                assert "priority" in spec
            for ctr in spec["containers"]:
                res = ctr.get("resources", {})
                for k in res.get("limits", {}):
                    assert k in res.get("requests", {}), (c["id"], ctr)
        for node in c["nodes"]:
            name = node["metadata"]["name"]
            ports = [pt["hostPort"] for p in c["pods"] if p["spec"]["nodeName"] == name
                     for ctr in p["spec"]["containers"] for pt in ctr.get("ports", [])]
            assert len(ports) == len(set(ports)), (c["id"], name)


@pytest.mark.parametrize("start", range(0, 300, 50))
def test_our_reader_and_converter_accept_every_case(start: int) -> None:
    for c in CASES[start:start + 50]:
        upd, pod = _to_domain(c)  # the client's reader (which refuses unmodelled fields), then
        assert pod.uid == c["pod"]["metadata"]["uid"]  # the server's converter
        assert len(upd.upsert_nodes) == len(c["nodes"])
        assert len(upd.upsert_pods) == len(c["pods"])


ORACLE = default_oracle()
needs_oracle = pytest.mark.skipif(not ORACLE.exists(), reason="no kube-oracle (make oracle)")


@needs_oracle
def test_the_oracle_answers_every_case(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    verdicts = ask_oracle(ORACLE, path, [c["id"] for c in CASES])
    assert len(verdicts) == len(CASES)
    nothing_fits = [v for v in verdicts.values() if "fitError" in v]
    assert 20 <= len(nothing_fits) < len(CASES) // 2
    assert any("preemption" in v and v["preemption"].get("nominatedNode")
               for v in verdicts.values())


@needs_oracle
def test_the_oracle_refusing_a_case_is_an_error_naming_it(tmp_path: Path) -> None:
    bad: dict[str, Any] = {**CASES[0], "objects": [{"apiVersion": "example.com/v1",
                                                    "kind": "Widget", "metadata": {"name": "w"}}]}
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(bad) + "\n")
    with pytest.raises(OracleError, match=r"Widget"):
        ask_oracle(ORACLE, path, [bad["id"]])


def test_a_missing_oracle_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(OracleError, match="no kube-oracle binary"):
        ask_oracle(tmp_path / "kube-oracle", tmp_path / "x.jsonl", [])
    assert main(["-n", "1", "--seed", "1", "--oracle", str(tmp_path / "none"),
                 "--out", str(tmp_path / "out")]) == 2


def test_a_bad_case_file_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(CASES[0]) + "\n{not json\n")
    with pytest.raises(CaseFileError, match=r"cases\.jsonl:2: not JSON"):
        list(load_cases(path))
    path.write_text('{"id": "x"}\n')
    with pytest.raises(CaseFileError, match=r"cases\.jsonl:1: not a case: missing nodes"):
        list(load_cases(path))
    with pytest.raises(CaseFileError, match="missing.jsonl"):
        list(load_cases(tmp_path / "missing.jsonl"))
