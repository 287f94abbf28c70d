"""The client's what-if helpers (clients/schedsvc_client/whatif.py) over a fake simulator, and
kubectl JSON's disruption fields (kube_disruption.py): answers sorted, the least-waste measure
worked by hand, the autoscaler's literal reading of its annotations."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client import (
    DrainVerdict,
    IncompleteSimulation,
    TemplateAnswer,
    drain,
    fill,
    pod_from_kube,
    scale_up,
)
from tests.builders import pb_node, pb_pod


class FakeSimulator:
    """Answers each simulate with `resp` and keeps the steps it was sent."""

    def __init__(self, resp: pb.SimulateResponse) -> None:
        self.resp = resp
        self.sent: list[list[pb.SimulationStep]] = []

    def simulate(
        self, steps: Iterable[pb.SimulationStep], timeout: float | None = None
    ) -> pb.SimulateResponse:
        self.sent.append(list(steps))
        return self.resp


def _ok(result: pb.SimulationStepResult) -> pb.SimulateResponse:
    return pb.SimulateResponse(results=[result], complete=True)


def _on(uid: str, node: str) -> pb.Placement:
    return pb.Placement(pod_uid=uid, node_name=node, outcome=pb.Placement.SCHEDULED)


def test_fill_sends_one_step_and_sorts_nodes_by_copies_then_name() -> None:
    sim = FakeSimulator(_ok(pb.SimulationStepResult(fill=pb.FillResult(
        placed=6, per_node={"b": 2, "a": 2, "c": 1, "z": 1}, stopped_by=pb.Placement(
            pod_uid="t-6", outcome=pb.Placement.UNSCHEDULABLE, message="0/4 nodes fit",
            reasons={"Too many pods": 1, "Insufficient cpu": 3})))))
    answer = fill(sim, pb_pod("t"), 10)
    assert [s.WhichOneof("step") for s in sim.sent[0]] == ["fill"]
    assert sim.sent[0][0].fill.max_pods == 10
    assert answer.placed == 6
    assert answer.per_node == (("a", 2), ("b", 2), ("c", 1), ("z", 1))
    assert answer.stopped_by == "0/4 nodes fit"
    assert answer.reasons == (("Insufficient cpu", 3), ("Too many pods", 1))


def test_a_fill_of_max_pods_has_no_stop() -> None:
    sim = FakeSimulator(_ok(pb.SimulationStepResult(fill=pb.FillResult(placed=3,
                                                                       per_node={"a": 3}))))
    answer = fill(sim, pb_pod("t"), 3)
    assert (answer.stopped_by, answer.reasons) == ("", ())


def test_drain_reads_each_verdict_in_order() -> None:
    sim = FakeSimulator(_ok(pb.SimulationStepResult(drain=pb.DrainResult(nodes=[
        pb.NodeDrainVerdict(node_name="n2", drainable=True,
                            moved=[_on("b", "n5"), _on("a", "n4")]),
        pb.NodeDrainVerdict(node_name="n1", reason="BlockedByPod",
                            blocking_pod=pb.Victim(uid="u", namespace="ns", name="db"),
                            blocking_reason="NotReplicated", message="ns/db is not replicated"),
    ]))))
    assert drain(sim, ["n2", "n1"]) == [
        DrainVerdict("n2", True, moved=(("a", "n4"), ("b", "n5"))),
        DrainVerdict("n1", False, "BlockedByPod", "ns/db", "NotReplicated",
                     "ns/db is not replicated"),
    ]
    assert list(sim.sent[0][0].drain.node_names) == ["n2", "n1"]


def test_scale_up_orders_options_fitting_first_then_fewest_nodes_then_least_waste() -> None:
    """Two pods of 1 cpu / 1Gi. small (2 cpu, 4Gi) x1: cpu waste (2-2)/2 = 0, memory
    (4-2)/4 = 0.5 -> 0.5. big (4 cpu, 4Gi) x1: cpu (4-2)/4 = 0.5, memory 0.5 -> 1.0.
    huge does not fit within max_new_nodes: last whatever its count."""
    pods = [pb_pod("p1", cpu="1", memory="1Gi"), pb_pod("p2", cpu="1", memory="1Gi")]
    templates = [pb_node("big", cpu="4", memory="4Gi"), pb_node("small", cpu="2", memory="4Gi"),
                 pb_node("huge", cpu="1", memory="1Gi")]
    sim = FakeSimulator(_ok(pb.SimulationStepResult(scale_up=pb.ScaleUpResult(
        scheduled_now=[_on("p0", "n0")], templates=[
            pb.TemplateEstimate(template="big", new_nodes=1, fits=True, new_node_names=["big-0"],
                                placements=[_on("p2", "big-0"), _on("p1", "big-0")]),
            pb.TemplateEstimate(template="small", new_nodes=1, fits=True,
                                new_node_names=["small-0"],
                                placements=[_on("p1", "small-0"), _on("p2", "small-0")]),
            pb.TemplateEstimate(template="huge", new_nodes=0, fits=False,
                                pending_pod_uids=["p2", "p1"]),
        ]))))
    answer = scale_up(sim, pods, templates, 5)
    assert answer.scheduled_now == (("p0", "n0"),)
    assert [o.template for o in answer.options] == ["small", "big", "huge"]
    assert [o.waste for o in answer.options] == [pytest.approx(0.5), pytest.approx(1.0), 0.0]
    assert answer.options[1].placements == (("p1", "big-0"), ("p2", "big-0"))
    assert answer.options[2] == TemplateAnswer("huge", 0, False, 0.0, pending=("p1", "p2"))
    assert answer.best is answer.options[0]
    assert sim.sent[0][0].scale_up.max_new_nodes == 5


def test_a_simulation_cut_short_raises() -> None:
    sim = FakeSimulator(pb.SimulateResponse(complete=False, stopped_at_step=0))
    with pytest.raises(IncompleteSimulation):
        fill(sim, pb_pod("t"), 1)


def _kube_pod(annotations: dict[str, str], owners: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "uid": "u", "annotations": annotations,
                         "ownerReferences": owners},
            "spec": {"nodeName": "n0", "containers": [{"name": "c", "image": "i"}]}}


RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "1", "controller": True}
_DISRUPTIONS: list[tuple[str, dict[str, str], list[dict[str, Any]], pb.PodDisruption | None]] = [
    ("a pod with no owner and no annotations has none", {}, [], None),
    ("the controller's kind, not another owner's", {},
     [{**RS, "kind": "Deployment", "controller": False}, RS],
     pb.PodDisruption(controller_kind="ReplicaSet")),
    ("a mirror pod", {"kubernetes.io/config.mirror": "abc"}, [],
     pb.PodDisruption(mirror=True)),
    ("safe-to-evict true", {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}, [],
     pb.PodDisruption(safe_to_evict="true")),
    ("safe-to-evict True is read as absent, as the autoscaler compares literally",
     {"cluster-autoscaler.kubernetes.io/safe-to-evict": "True"}, [], None),
    ("local volumes split at commas; an entry no volume can be named is dropped",
     {"cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes": "scratch, cache,tmp"}, [],
     pb.PodDisruption(safe_to_evict_local_volumes=["scratch", "tmp"])),
]


@pytest.mark.parametrize(("annotations", "owners", "expected"), [c[1:] for c in _DISRUPTIONS],
                         ids=[c[0] for c in _DISRUPTIONS])
def test_kubectl_json_disruption_fields(
    annotations: dict[str, str], owners: list[dict[str, Any]],
    expected: pb.PodDisruption | None,
) -> None:
    pod = pod_from_kube(_kube_pod(annotations, owners))
    if expected is None:
        assert not pod.HasField("disruption")
    else:
        assert pod.disruption == expected
