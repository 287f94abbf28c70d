"""Workload-aware preemption against kube v1.37.2 itself: gang cases of i28-oracle's generator
(tools/casegen_gangs.py, kind "preempt", seeds 11-13) recorded with kube-oracle's sequence
steps (GenericWorkload on, two runs agreeing), kept where the case is one group whose first
cycle preempted: tests/data/pod_group_preemption_oracle.jsonl.gz.

The group is sent once through the server's request handler, as a client does. kube's
answer: the pods it deleted (the victims), the PodGroupInitiallyScheduled condition its first
cycle wrote (the whole message: the algorithm's, then "pod group preemption: found a
placement for podgroup, preempting N victims"), and the nodes its members were nominated to
(compared as a multiset: kube picks among tied nodes by its score heap's order, we by a seeded
draw, so identical members may swap nodes).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from schedsvc.config.scheduler import default_config
from schedsvc.engine.scheduler import Engine
from schedsvc.feature_gates import parse_feature_gates, profile_gates
from schedsvc.framework.feature import EmulatedVersion, Features
from schedsvc.server.request_handler import RequestHandler
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.kube import load_cluster

DATA = Path(__file__).parent / "data" / "pod_group_preemption_oracle.jsonl.gz"
CASES = [json.loads(line) for line in gzip.open(DATA, "rt", encoding="utf-8")]
V1_37 = EmulatedVersion.V1_37


class _Caller:
    def time_remaining(self) -> float | None:
        return None

    def is_active(self) -> bool:
        return True


def _read(items: list[dict[str, Any]]) -> Any:
    return load_cluster(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def _handler(case: dict[str, Any]) -> RequestHandler:
    gates = parse_feature_gates(
        ",".join(f"{k}={str(v).lower()}" for k, v in case["featureGates"].items()), V1_37
    )
    config = default_config(V1_37, Features(V1_37, profile_gates(gates)))
    return RequestHandler(Engine(config, seed=1, batching_enabled=gates["OpportunisticBatching"]))


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_first_cycle_preempts_as_kube(case: dict[str, Any]) -> None:
    handler = _handler(case)
    kc = _read([
        *({"apiVersion": "v1", "kind": "Node", **n} for n in case["nodes"]),
        *({"apiVersion": "v1", "kind": "Pod", **p} for p in case["pods"]),
        *case.get("objects", ()),
    ])
    step = case["steps"][0]
    group = _read([step["podGroup"]]).pod_groups
    handler.update_snapshot(pb.UpdateSnapshotRequest(
        replace=True, upsert_nodes=kc.nodes, upsert_pods=kc.pods,
        upsert_namespaces=kc.namespaces, upsert_pod_groups=[*kc.pod_groups, *group],
        upsert_pod_disruption_budgets=kc.pod_disruption_budgets,
    ))
    pods = _read([{"apiVersion": "v1", "kind": "Pod", **p} for p in step["pods"]]).pods
    resp = handler.schedule(pb.ScheduleRequest(pods=pods), _Caller())
    want = case["expected"]["steps"][0]
    (result,) = resp.pod_groups
    assert sorted(f"{v.namespace or 'default'}/{v.name}" for v in result.victims) == sorted(
        want["deleted"]
    )
    assert result.condition.message == want["group"]["conditions"][0]["message"]
    assert sorted(p.nominated_node_name for p in resp.placements) == sorted(
        p.get("nominatedNode", "") for p in want["pods"]
    )
