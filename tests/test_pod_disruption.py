"""Pod.disruption (issue 27, what a simulated drain reads) is no scheduling input: batching's
signature leaves it out, so pods equal but for it share one signature and one run."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from schedsvc.config import parse_config
from schedsvc.engine.batching import signature
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import PodDisruption
from tests.builders import GiB, make_pod, node

DISRUPTIONS = [
    None,
    PodDisruption(controller_kind="ReplicaSet"),
    PodDisruption(controller_kind="DaemonSet", mirror=True),
    PodDisruption(safe_to_evict="false", safe_to_evict_local_volumes=("scratch",)),
]


def _pods() -> list[Any]:
    return [make_pod(f"p{i}", {"cpu": 500, "memory": GiB, "disruption": d})
            for i, d in enumerate(DISRUPTIONS)]


def test_disruption_is_not_a_signed_field() -> None:
    assert "disruption" not in signature._SIGNED_FIELDS
    assert {"uid", "name", "shape"}.isdisjoint(signature._SIGNED_FIELDS)
    assert "volumes" in signature._SIGNED_FIELDS  # its neighbour still is


def test_pods_differing_only_in_disruption_share_a_signature_and_one_memo_entry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The memo is keyed by the signed fields' identities: were disruption among them, each
    of these pods would be signed again."""
    engine = Engine(parse_config({}), seed=1)
    signer = signature.PodSigner(engine.frameworks["default-scheduler"], soft_spread=False)
    calls: list[str] = []
    real = signature.sign_pod

    def counted(fw: Any, info: Any, soft: bool = False) -> Any:
        calls.append(info.pod.uid)
        return real(fw, info, soft)

    monkeypatch.setattr(signature, "sign_pod", counted)
    base = _pods()[0]
    same_fields = [dataclasses.replace(base, uid=f"q{i}", disruption=d)
                   for i, d in enumerate(DISRUPTIONS)]
    signed = [signer.sign(pod_info(p)) for p in same_fields]
    assert signed[0][0] is not None
    assert all(s == signed[0] for s in signed)
    assert calls == ["q0"]


def test_a_run_of_pods_differing_only_in_disruption_is_hinted() -> None:
    engine = Engine(parse_config({"percentageOfNodesToScore": 100}), seed=3)
    c = engine.cluster("t")
    c.update(SnapshotUpdate(upsert_nodes=[node(f"n{i}", cpu=4000) for i in range(4)]))
    out, _ = c.schedule(_pods())
    assert [p.batched for p in out] == [False, True, True, True]
