"""Simulate's steps proto -> domain (engine/simulate/steps.py) and its results back.

Pods and nodes inside steps go through the handler's Converter, so they are validated, bounded
and cached exactly as in Schedule and UpdateSnapshot, with field paths under the step
(`steps[3].fill.template.containers[0]...`). A step's own fields are checked here: what is
required, counts at least 1, generated names that stay DNS subdomains. The static size limits
are simulation_limits.py's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from google.protobuf.internal.containers import RepeatedCompositeFieldContainer
from google.protobuf.message import Message

from ..engine.explain import Explanation
from ..engine.schedule_one import Placement
from ..engine.simulate import steps as st
from ..errors import InvalidArgument
from ..model import Node, Pod
from ..v1 import schedule_pb2 as pb
from .convert import Converter
from .convert_results import explanation_to_pb, fill_placement, fill_pod_group

__all__ = ["FILL_UID", "MAX_TEMPLATE_NAME", "result_to_pb", "steps_from_pb"]

# a fill template without a uid gets this one (copies are "<uid>~<sim>-<i>")
FILL_UID = "fill"
# room for the "-<k>" a generated node name adds (k < 10^6) within a 253-character subdomain
MAX_TEMPLATE_NAME = 253 - 7


def _positive(value: int, path: str) -> int:
    if value < 1:
        raise InvalidArgument(path, "must be at least 1")
    return value


def _template_node(conv: Converter, msg: pb.Node, path: str) -> Node:
    node = conv.node_from_pb(msg, path)
    if len(node.name) > MAX_TEMPLATE_NAME:
        raise InvalidArgument(f"{path}.name", f"at most {MAX_TEMPLATE_NAME} characters "
                              "(generated nodes add '-<k>')")
    return node


def _pods(conv: Converter, msgs: Iterable[pb.Pod], path: str) -> tuple[Pod, ...]:
    out: list[Pod] = []
    seen: set[str] = set()
    for j, msg in enumerate(msgs):
        pod = conv.pod_from_pb(msg, f"{path}[{j}]")
        if pod.uid in seen:
            raise InvalidArgument(f"{path}[{j}].uid", f"duplicate uid {pod.uid!r} in the step")
        seen.add(pod.uid)
        out.append(pod)
    return tuple(out)


def _required(step: Message, name: str, path: str) -> None:
    if not step.HasField(name):
        raise InvalidArgument(f"{path}.{name}", "required")


def _add_nodes(conv: Converter, s: pb.AddNodesStep, path: str) -> st.AddNodes:
    _required(s, "template", path)
    template = _template_node(conv, s.template, f"{path}.template")
    return st.AddNodes(template, _positive(s.count, f"{path}.count"))


def _remove_nodes(_conv: Converter, s: pb.RemoveNodesStep, path: str) -> st.RemoveNodes:
    return st.RemoveNodes(tuple(s.names))


def _schedule(conv: Converter, s: pb.ScheduleStep, path: str) -> st.ScheduleStep:
    return st.ScheduleStep(_pods(conv, s.pods, f"{path}.pods"), s.all_or_nothing)


def _fill(conv: Converter, s: pb.FillStep, path: str) -> st.Fill:
    _required(s, "template", path)
    msg = s.template
    if not msg.uid:
        msg = pb.Pod()
        msg.CopyFrom(s.template)
        msg.uid = FILL_UID
    if msg.node_name:
        raise InvalidArgument(f"{path}.template.node_name", "a template is not bound")
    template = conv.pod_from_pb(msg, f"{path}.template")
    return st.Fill(template, _positive(s.max_pods, f"{path}.max_pods"))


def _drain(_conv: Converter, s: pb.DrainStep, path: str) -> st.Drain:
    return st.Drain(tuple(s.node_names))


def _scale_up(conv: Converter, s: pb.ScaleUpStep, path: str) -> st.ScaleUp:
    for j, pending in enumerate(s.pods):  # the estimator's pods are pending: none is bound
        if pending.node_name:
            raise InvalidArgument(f"{path}.pods[{j}].node_name", "a pending pod is not bound")
    pods = _pods(conv, s.pods, f"{path}.pods")
    if not s.node_templates:
        raise InvalidArgument(f"{path}.node_templates", "at least one template")
    templates: list[Node] = []
    names: set[str] = set()
    for j, msg in enumerate(s.node_templates):
        t = _template_node(conv, msg, f"{path}.node_templates[{j}]")
        if t.name in names:
            raise InvalidArgument(f"{path}.node_templates[{j}].name", f"duplicate {t.name!r}")
        names.add(t.name)
        templates.append(t)
    return st.ScaleUp(pods, tuple(templates), _positive(s.max_new_nodes, f"{path}.max_new_nodes"))


def _explain(conv: Converter, s: pb.ExplainStep, path: str) -> st.ExplainStep:
    _required(s, "pod", path)
    return st.ExplainStep(conv.pod_from_pb(s.pod, f"{path}.pod"))


# by the SimulationStep oneof's field name (each takes that field's message)
_FROM_PB: dict[str, Callable[[Converter, Any, str], st.Step]] = {
    "add_nodes": _add_nodes,
    "remove_nodes": _remove_nodes,
    "schedule": _schedule,
    "fill": _fill,
    "drain": _drain,
    "scale_up": _scale_up,
    "explain": _explain,
}


def steps_from_pb(conv: Converter, request: pb.SimulateRequest) -> list[st.Step]:
    """The request's steps, each validated; InvalidArgument names the field."""
    out: list[st.Step] = []
    for i, step in enumerate(request.steps):
        kind = step.WhichOneof("step")
        if kind is None:
            raise InvalidArgument(f"steps[{i}]", f"one of {', '.join(_FROM_PB)} is required")
        out.append(_FROM_PB[kind](conv, getattr(step, kind), f"steps[{i}].{kind}"))
    return out


# ---- results ---------------------------------------------------------------------------------


def _placements(
    out: RepeatedCompositeFieldContainer[pb.Placement], placements: Sequence[Placement]
) -> None:
    add = out.add
    for p in placements:
        fill_placement(add(), p)


def _drain_to_pb(r: st.DrainResult, out: pb.DrainResult) -> None:
    for v in r.nodes:
        n = out.nodes.add(node_name=v.node_name, drainable=v.drainable, message=v.message)
        if v.reason is not None:
            n.reason = v.reason.value
        if v.blocking_reason is not None:
            n.blocking_reason = v.blocking_reason.value
        b = v.blocking_pod
        if b is not None:
            n.blocking_pod.CopyFrom(
                pb.Victim(uid=b.uid, namespace=b.namespace, name=b.name, priority=b.priority))
        n.reasons.update(v.reasons)
        _placements(n.moved, v.moved)
        n.daemonset_pod_uids.extend(v.daemonset_pod_uids)


def _scale_up_to_pb(r: st.ScaleUpResult, out: pb.ScaleUpResult) -> None:
    _placements(out.scheduled_now, r.scheduled_now)
    for t in r.templates:
        e = out.templates.add(
            template=t.template, new_nodes=t.new_nodes, fits=t.fits,
            unhelpable_pod_uids=t.unhelpable_pod_uids, pending_pod_uids=t.pending_pod_uids,
            new_node_names=t.new_node_names,
        )
        _placements(e.placements, t.placements)


def result_to_pb(r: st.StepResult, out: pb.SimulationStepResult) -> None:
    """One step's result into `out` (its oneof set even when the result is empty)."""
    if isinstance(r, st.AddNodesResult):
        out.add_nodes.SetInParent()
        out.add_nodes.node_names.extend(r.node_names)
    elif isinstance(r, st.RemoveNodesResult):
        out.remove_nodes.SetInParent()
        out.remove_nodes.removed_pod_uids.extend(r.removed_pod_uids)
    elif isinstance(r, st.ScheduleStepResult):
        out.schedule.committed = r.committed
        _placements(out.schedule.placements, r.placements)
        seen: set[int] = set()
        for p in r.placements:
            if p.group is not None and id(p.group) not in seen:
                seen.add(id(p.group))
                fill_pod_group(out.schedule.pod_groups.add(), p.group)
    elif isinstance(r, st.FillResult):
        out.fill.placed = r.placed
        out.fill.per_node.update(r.per_node)
        if r.stopped_by is not None:
            fill_placement(out.fill.stopped_by, r.stopped_by)
    elif isinstance(r, st.DrainResult):
        out.drain.SetInParent()
        _drain_to_pb(r, out.drain)
    elif isinstance(r, st.ScaleUpResult):
        out.scale_up.SetInParent()
        _scale_up_to_pb(r, out.scale_up)
    elif isinstance(r, Explanation):
        out.explain.CopyFrom(explanation_to_pb(r))
    else:  # pragma: no cover - a result type this module does not know
        raise TypeError(f"unknown step result {type(r).__name__}")
