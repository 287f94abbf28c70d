"""Simulate's steps proto -> domain (each kind, the field every refusal names) and its results
domain -> proto (each kind, expected messages written out by hand)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from schedsvc.engine.explain import Explanation, NodeExplanation
from schedsvc.engine.preemption.evaluator import Victim
from schedsvc.engine.schedule_one import Placement
from schedsvc.engine.simulate import steps as st
from schedsvc.errors import InvalidArgument
from schedsvc.model import Outcome
from schedsvc.server.convert import Converter
from schedsvc.server.convert_simulation import result_to_pb, steps_from_pb
from schedsvc.v1 import schedule_pb2 as pb
from tests.builders import pb_node, pb_pod

Step = pb.SimulationStep


def _one(step: pb.SimulationStep) -> st.Step:
    (out,) = steps_from_pb(Converter(), pb.SimulateRequest(steps=[step]))
    return out


def test_each_step_kind_converts_to_its_domain_step() -> None:
    conv = Converter()
    req = pb.SimulateRequest(steps=[
        Step(add_nodes=pb.AddNodesStep(template=pb_node("big", cpu="8"), count=3)),
        Step(remove_nodes=pb.RemoveNodesStep(names=["n1", "n2"])),
        Step(schedule=pb.ScheduleStep(pods=[pb_pod("a"), pb_pod("b")], all_or_nothing=True)),
        Step(fill=pb.FillStep(template=pb_pod("t", cpu="100m"), max_pods=50)),
        Step(drain=pb.DrainStep(node_names=["n3"])),
        Step(scale_up=pb.ScaleUpStep(pods=[pb_pod("p")], node_templates=[pb_node("g1")],
                                     max_new_nodes=10)),
        Step(explain=pb.ExplainStep(pod=pb_pod("e"))),
    ])
    add, remove, sched, fill, drain, scale, explain = steps_from_pb(conv, req)
    assert isinstance(add, st.AddNodes) and (add.template.name, add.count) == ("big", 3)
    assert add.template.allocatable["cpu"] == 8000
    assert remove == st.RemoveNodes(("n1", "n2"))
    assert isinstance(sched, st.ScheduleStep) and sched.all_or_nothing
    assert [p.uid for p in sched.pods] == ["a", "b"]
    assert isinstance(fill, st.Fill) and fill.max_pods == 50
    assert (fill.template.uid, fill.template.containers[0].requests["cpu"]) == ("t", 100)
    assert drain == st.Drain(("n3",))
    assert isinstance(scale, st.ScaleUp) and scale.max_new_nodes == 10
    assert [p.uid for p in scale.pods] == ["p"]
    assert [t.name for t in scale.node_templates] == ["g1"]
    assert isinstance(explain, st.ExplainStep) and explain.pod.uid == "e"


def test_a_fill_template_without_uid_is_named_fill_and_keeps_its_shape_token() -> None:
    template = pb_pod("x")
    template.uid = ""
    fill = _one(Step(fill=pb.FillStep(template=template, max_pods=2)))
    assert isinstance(fill, st.Fill)
    assert (fill.template.uid, fill.template.name) == ("fill", "x")
    assert fill.template.shape is not None  # copies share it: PodInfo and signature once


_BAD: list[tuple[str, Callable[[], pb.SimulationStep], str]] = [
    ("a step with none of its kinds set", lambda: Step(), "steps[0]"),
    ("add_nodes without a template",
     lambda: Step(add_nodes=pb.AddNodesStep(count=1)), "steps[0].add_nodes.template"),
    ("add_nodes with count 0",
     lambda: Step(add_nodes=pb.AddNodesStep(template=pb_node("t"))), "steps[0].add_nodes.count"),
    ("add_nodes with a template without a name",
     lambda: Step(add_nodes=pb.AddNodesStep(template=pb.Node(), count=1)),
     "steps[0].add_nodes.template.name"),
    ("add_nodes with a name too long for generated names",
     lambda: Step(add_nodes=pb.AddNodesStep(template=pb.Node(name="n" * 247), count=1)),
     "steps[0].add_nodes.template.name"),
    ("a template with a bad label",
     lambda: Step(add_nodes=pb.AddNodesStep(
         template=pb.Node(name="t", labels={"a": "b c"}), count=1)),
     'steps[0].add_nodes.template.labels["a"]'),
    ("schedule with a pod without uid",
     lambda: Step(schedule=pb.ScheduleStep(pods=[pb_pod("a"), pb.Pod()])),
     "steps[0].schedule.pods[1].uid"),
    ("schedule with a uid twice",
     lambda: Step(schedule=pb.ScheduleStep(pods=[pb_pod("a"), pb_pod("a")])),
     "steps[0].schedule.pods[1].uid"),
    ("fill without a template",
     lambda: Step(fill=pb.FillStep(max_pods=1)), "steps[0].fill.template"),
    ("fill with max_pods 0",
     lambda: Step(fill=pb.FillStep(template=pb_pod("t"))), "steps[0].fill.max_pods"),
    ("fill with negative max_pods",
     lambda: Step(fill=pb.FillStep(template=pb_pod("t"), max_pods=-5)),
     "steps[0].fill.max_pods"),
    ("fill with a bound template",
     lambda: Step(fill=pb.FillStep(template=pb_pod("t", node_name="n0"), max_pods=1)),
     "steps[0].fill.template.node_name"),
    ("scale_up with a bound pending pod",
     lambda: Step(scale_up=pb.ScaleUpStep(
         pods=[pb_pod("a"), pb_pod("b", node_name="n0")], node_templates=[pb_node("g")],
         max_new_nodes=1)),
     "steps[0].scale_up.pods[1].node_name"),
    ("fill with a bad quantity in the template",
     lambda: Step(fill=pb.FillStep(template=pb_pod("t", cpu="lots"), max_pods=1)),
     'steps[0].fill.template.containers[0].requests["cpu"]'),
    ("scale_up without templates",
     lambda: Step(scale_up=pb.ScaleUpStep(pods=[pb_pod("p")], max_new_nodes=1)),
     "steps[0].scale_up.node_templates"),
    ("scale_up with max_new_nodes 0",
     lambda: Step(scale_up=pb.ScaleUpStep(pods=[pb_pod("p")], node_templates=[pb_node("g")])),
     "steps[0].scale_up.max_new_nodes"),
    ("scale_up with two templates of one name",
     lambda: Step(scale_up=pb.ScaleUpStep(
         pods=[pb_pod("p")], node_templates=[pb_node("g"), pb_node("g")], max_new_nodes=1)),
     "steps[0].scale_up.node_templates[1].name"),
    ("explain without a pod", lambda: Step(explain=pb.ExplainStep()), "steps[0].explain.pod"),
    ("a pod's disruption with a bad safe-to-evict",
     lambda: Step(explain=pb.ExplainStep(
         pod=pb_pod("e", disruption=pb.PodDisruption(safe_to_evict="yes")))),
     "steps[0].explain.pod.disruption.safe_to_evict"),
]


@pytest.mark.parametrize(("make", "field"), [c[1:] for c in _BAD], ids=[c[0] for c in _BAD])
def test_a_bad_step_is_refused_naming_its_field(
    make: Callable[[], pb.SimulationStep], field: str
) -> None:
    with pytest.raises(InvalidArgument) as exc:
        _one(make())
    assert exc.value.field == field


def test_the_step_index_is_the_one_refused() -> None:
    req = pb.SimulateRequest(steps=[
        Step(drain=pb.DrainStep(node_names=["n0"])),
        Step(fill=pb.FillStep(template=pb_pod("t"), max_pods=0)),
    ])
    with pytest.raises(InvalidArgument) as exc:
        steps_from_pb(Converter(), req)
    assert exc.value.field == "steps[1].fill.max_pods"


# ---- results ---------------------------------------------------------------------------------

_ON_N1 = Placement("a", "n1", Outcome.SCHEDULED, cycle=4, score=70, nodes_evaluated=3,
                   nodes_feasible=2)
_NOWHERE = Placement("c", "", Outcome.UNSCHEDULABLE,
                     "0/3 nodes are available: 3 Insufficient cpu.", {"Insufficient cpu": 3})
_PB_ON_N1 = pb.Placement(pod_uid="a", node_name="n1", outcome=pb.Placement.SCHEDULED, cycle=4,
                         score=70, nodes_evaluated=3, nodes_feasible=2)
_PB_NOWHERE = pb.Placement(pod_uid="c", outcome=pb.Placement.UNSCHEDULABLE,
                           message="0/3 nodes are available: 3 Insufficient cpu.",
                           reasons={"Insufficient cpu": 3})

_RESULTS: list[tuple[str, st.StepResult, pb.SimulationStepResult]] = [
    ("nodes added", st.AddNodesResult(("big-0", "big-1")),
     pb.SimulationStepResult(add_nodes=pb.AddNodesResult(node_names=["big-0", "big-1"]))),
    ("no node added still says which result it is", st.AddNodesResult(()),
     pb.SimulationStepResult(add_nodes=pb.AddNodesResult())),
    ("nodes removed", st.RemoveNodesResult(("p1",)),
     pb.SimulationStepResult(remove_nodes=pb.RemoveNodesResult(removed_pod_uids=["p1"]))),
    ("a schedule step undone", st.ScheduleStepResult((_ON_N1, _NOWHERE), committed=False),
     pb.SimulationStepResult(schedule=pb.ScheduleStepResult(
         placements=[_PB_ON_N1, _PB_NOWHERE], committed=False))),
    ("a fill stopped by a copy that fits nowhere",
     st.FillResult(5, {"n1": 3, "n2": 2}, _NOWHERE),
     pb.SimulationStepResult(fill=pb.FillResult(
         placed=5, per_node={"n1": 3, "n2": 2}, stopped_by=_PB_NOWHERE))),
    ("a fill that placed max_pods", st.FillResult(2, {"n1": 2}),
     pb.SimulationStepResult(fill=pb.FillResult(placed=2, per_node={"n1": 2}))),
    ("a drain: one node blocked, one moved",
     st.DrainResult((
         st.NodeDrainVerdict(
             "n0", False, st.UnremovableReason.BLOCKED_BY_POD,
             Victim("u1", "kube-system", "dns", 100),
             st.BlockingPodReason.UNMOVABLE_KUBE_SYSTEM_POD,
             "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: dns"),
         st.NodeDrainVerdict("n1", True, moved=(_ON_N1,), daemonset_pod_uids=("ds1",)),
     )),
     pb.SimulationStepResult(drain=pb.DrainResult(nodes=[
         pb.NodeDrainVerdict(
             node_name="n0", reason="BlockedByPod",
             blocking_pod=pb.Victim(uid="u1", namespace="kube-system", name="dns", priority=100),
             blocking_reason="UnmovableKubeSystemPod",
             message="non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: dns"),
         pb.NodeDrainVerdict(node_name="n1", drainable=True, moved=[_PB_ON_N1],
                             daemonset_pod_uids=["ds1"]),
     ]))),
    ("a drain with no place to move a pod",
     st.DrainResult((st.NodeDrainVerdict(
         "n0", False, st.UnremovableReason.NO_PLACE_TO_MOVE_PODS, Victim("c", "default", "c", 0),
         message=_NOWHERE.message, reasons={"Insufficient cpu": 3}),)),
     pb.SimulationStepResult(drain=pb.DrainResult(nodes=[pb.NodeDrainVerdict(
         node_name="n0", reason="NoPlaceToMovePods",
         blocking_pod=pb.Victim(uid="c", namespace="default", name="c"),
         message=_NOWHERE.message, reasons={"Insufficient cpu": 3})]))),
    ("a scale-up",
     st.ScaleUpResult((_ON_N1,), (
         st.TemplateEstimate("g1", 2, True, (_ON_N1,), ("u",), (), ("g1-0", "g1-1")),
         st.TemplateEstimate("g2", 4, False, pending_pod_uids=("c",)),
     )),
     pb.SimulationStepResult(scale_up=pb.ScaleUpResult(scheduled_now=[_PB_ON_N1], templates=[
         pb.TemplateEstimate(template="g1", new_nodes=2, fits=True, placements=[_PB_ON_N1],
                             unhelpable_pod_uids=["u"], new_node_names=["g1-0", "g1-1"]),
         pb.TemplateEstimate(template="g2", new_nodes=4, pending_pod_uids=["c"]),
     ]))),
    ("an explanation",
     Explanation("default-scheduler", (NodeExplanation("n1", True, "", (), {"A": (5, 2)}, 10),),
                 "n1", ""),
     pb.SimulationStepResult(explain=pb.ExplainResponse(
         profile="default-scheduler", chosen_node="n1",
         nodes=[pb.NodeVerdict(name="n1", feasible=True, total_score=10, scores=[
             pb.PluginScore(plugin="A", score=5, weight=2, weighted=10)])]))),
]


@pytest.mark.parametrize(("result", "expected"), [c[1:] for c in _RESULTS],
                         ids=[c[0] for c in _RESULTS])
def test_each_result_converts_to_its_message(
    result: st.StepResult, expected: pb.SimulationStepResult
) -> None:
    out = pb.SimulationStepResult()
    result_to_pb(result, out)
    assert out == expected
    assert out.WhichOneof("result") == expected.WhichOneof("result")
