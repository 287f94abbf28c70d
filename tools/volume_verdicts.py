"""Kube's recorded verdicts on the volume cases (tests/data/volumes), read into typed records.

Each line of a recording is a case of tools/casegen_volumes.py (its Kubernetes JSON kept as
is, for the reader that converts it) with `expected`: kube-oracle's answer (per node: feasible,
stage, plugin, code, reasons, scores; fitError; a plugin Error that ended the cycle; the
per-claim bindings VolumeBinding's Reserve assumed on each top node, as the domain's
VolumeBindingResult so they compare with `Placement.volume_bindings` as they are). This module
only reads: comparing with our engine is the caller's business.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedsvc.model_storage import VolumeBindingResult

__all__ = [
    "RECORDINGS",
    "VolumeCase",
    "VolumeCaseError",
    "VolumeNode",
    "load_volume_cases",
    "read_volume_cases",
]

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "volumes"
# emulated release -> its recording (1.35: the 1.37 binary with 1.35's volume gates off)
RECORDINGS: Mapping[str, Path] = {
    "1.37": DATA / "cases-1.37.jsonl.gz",
    "1.35": DATA / "cases-1.35-gates.jsonl.gz",
}


class VolumeCaseError(ValueError):
    """A recording line that is not a case with kube's verdict (names the line)."""


@dataclass(frozen=True, slots=True)
class VolumeNode:
    """One node's verdict: feasible with scores, or rejected at a stage by a plugin."""

    name: str
    feasible: bool
    stage: str = ""
    plugin: str = ""
    code: str = ""
    reasons: tuple[str, ...] = ()
    scores: Mapping[str, int] | None = None  # plugin -> unweighted score
    total: int | None = None


@dataclass(frozen=True, slots=True)
class VolumeCase:
    """A case's inputs (raw Kubernetes JSON) and kube's verdict on it."""

    id: str
    case: Mapping[str, Any]
    nodes: tuple[VolumeNode, ...]
    fit_error: str
    error: Mapping[str, str] | None  # {stage, node, plugin, message}: the cycle's Error
    max_nodes: tuple[str, ...]
    bindings_by_node: Mapping[str, tuple[VolumeBindingResult, ...]]
    features: tuple[str, ...]

    @property
    def placed(self) -> bool:
        return bool(self.max_nodes)


def _node(raw: Mapping[str, Any]) -> VolumeNode:
    scores = raw.get("scores")
    return VolumeNode(
        name=raw["name"], feasible=bool(raw["feasible"]), stage=raw.get("stage", ""),
        plugin=raw.get("plugin", ""), code=raw.get("code", ""),
        reasons=tuple(raw.get("reasons") or ()),
        scores=None if scores is None else {p: int(s["score"]) for p, s in scores.items()},
        total=raw.get("total"))


def _binding(raw: Mapping[str, Any]) -> VolumeBindingResult:
    return VolumeBindingResult(claim=raw["claim"], volume_name=raw.get("volumeName", ""),
                         provisioned=bool(raw.get("provisioned", False)),
                         selected_node=raw.get("selectedNode", ""))


def _case(raw: Mapping[str, Any]) -> VolumeCase:
    exp = raw["expected"]
    by_node = {node: tuple(_binding(b) for b in bs)
               for node, bs in (exp.get("volumeBindingsByNode") or {}).items()}
    return VolumeCase(
        id=str(raw["id"]), case=raw, nodes=tuple(_node(n) for n in exp["nodes"]),
        fit_error=exp.get("fitError", ""), error=exp.get("error"),
        max_nodes=tuple(exp.get("maxNodes") or ()), bindings_by_node=by_node,
        features=tuple(raw.get("features", ())))


def read_volume_cases(path: Path) -> Iterator[VolumeCase]:
    """The cases of one recording, in order; a malformed line raises VolumeCaseError."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield _case(json.loads(line))
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                raise VolumeCaseError(f"{path}:{line_no}: {type(e).__name__}: {e}") from e


def load_volume_cases(version: str = "1.37") -> list[VolumeCase]:
    """All cases recorded for an emulated release ("1.37" or "1.35")."""
    return list(read_volume_cases(RECORDINGS[version]))
