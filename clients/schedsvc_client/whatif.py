"""The common what-if questions as one call each (issue 27), over SchedClient.simulate.

Each helper sends a one-step Simulate and reads its answer into a frozen dataclass with its
lists sorted, so answers compare and print the same way every time. Nothing here changes the
cluster: a simulation runs on a fork the server drops.

- `fill`: how many more copies of a pod fit, and where.
- `drain`: can these nodes go; for each, what blocks it or where its pods would move.
- `scale_up`: how many new nodes of each template the pending pods need, best option first
  (fewest nodes, then least waste: the cluster-autoscaler's least-waste expander's measure,
  which the server does not apply: choosing a node group is the caller's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from schedsvc.quantity import to_canonical
from schedsvc.v1 import schedule_pb2 as pb

__all__ = [
    "DrainVerdict", "FillAnswer", "IncompleteSimulation", "ScaleUpAnswer", "Simulator",
    "TemplateAnswer", "drain", "fill", "scale_up",
]

# (pod uid, node name), sorted by uid
Placed = tuple[tuple[str, str], ...]


class Simulator(Protocol):
    """What the helpers use of a client (SchedClient.simulate)."""

    def simulate(
        self, steps: Iterable[pb.SimulationStep], timeout: float | None = None
    ) -> pb.SimulateResponse: ...


class IncompleteSimulation(RuntimeError):
    """The deadline cut the simulation short before its one step ended."""


def _one(
    client: Simulator, step: pb.SimulationStep, timeout: float | None
) -> pb.SimulationStepResult:
    resp = client.simulate([step], timeout=timeout)
    if not resp.complete or len(resp.results) != 1:
        raise IncompleteSimulation("the simulation stopped before its step ended")
    return resp.results[0]


def _placed(placements: Iterable[pb.Placement]) -> Placed:
    return tuple(sorted((p.pod_uid, p.node_name) for p in placements
                        if p.outcome == pb.Placement.SCHEDULED))


@dataclass(frozen=True, slots=True)
class FillAnswer:
    placed: int
    per_node: tuple[tuple[str, int], ...]  # (node, copies), most copies first, then by name
    stopped_by: str = ""  # why the next copy fit nowhere (kube's FitError); "" = max_pods placed
    reasons: tuple[tuple[str, int], ...] = ()  # its FitError reasons, by name


def fill(
    client: Simulator, template: pb.Pod, max_pods: int, timeout: float | None = None
) -> FillAnswer:
    """How many copies of `template` fit (at most `max_pods`), and on which nodes."""
    step = pb.SimulationStep(fill=pb.FillStep(template=template, max_pods=max_pods))
    r = _one(client, step, timeout).fill
    stop = r.stopped_by if r.HasField("stopped_by") else None
    return FillAnswer(
        r.placed, tuple(sorted(r.per_node.items(), key=lambda kv: (-kv[1], kv[0]))),
        stop.message if stop is not None else "",
        tuple(sorted(stop.reasons.items())) if stop is not None else (),
    )


@dataclass(frozen=True, slots=True)
class DrainVerdict:
    node_name: str
    drainable: bool
    reason: str = ""  # BlockedByPod, NoPlaceToMovePods, NoNodeInfo
    blocking_pod: str = ""  # "namespace/name" of the first pod that blocks
    blocking_reason: str = ""  # NotReplicated, NotEnoughPdb, ... (BlockedByPod)
    message: str = ""
    moved: Placed = ()  # drainable: where its pods would go


def drain(
    client: Simulator, node_names: Sequence[str], timeout: float | None = None
) -> list[DrainVerdict]:
    """One verdict per node, in the order given (each drained node is gone for the next)."""
    step = pb.SimulationStep(drain=pb.DrainStep(node_names=node_names))
    out = []
    for v in _one(client, step, timeout).drain.nodes:
        b = v.blocking_pod
        out.append(DrainVerdict(
            v.node_name, v.drainable, v.reason, f"{b.namespace}/{b.name}" if b.uid else "",
            v.blocking_reason, v.message, _placed(v.moved),
        ))
    return out


@dataclass(frozen=True, slots=True)
class TemplateAnswer:
    template: str
    new_nodes: int
    fits: bool
    waste: float  # unused share of the new nodes' cpu plus that of their memory (0 = none)
    placements: Placed = ()
    pending: tuple[str, ...] = ()
    unhelpable: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScaleUpAnswer:
    scheduled_now: Placed  # pods that fit without new nodes
    options: tuple[TemplateAnswer, ...]  # those that fit first, then fewest nodes, least waste

    @property
    def best(self) -> TemplateAnswer | None:
        return self.options[0] if self.options and self.options[0].fits else None


def _requests(pod: pb.Pod) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in pod.containers:
        for res in ("cpu", "memory"):
            if res in c.requests:
                out[res] = out.get(res, 0) + to_canonical(res, c.requests[res], res)
    return out


def _waste(template: pb.Node, k: int, pods: Mapping[str, pb.Pod], placed: Placed) -> float:
    """The least-waste expander's score: per resource, (allocatable - requested) /
    allocatable over the k new nodes, summed over cpu and memory."""
    total = 0.0
    used = [_requests(pods[uid]) for uid, _ in placed if uid in pods]
    for res in ("cpu", "memory"):
        if k and res in template.allocatable:
            alloc = k * to_canonical(res, template.allocatable[res], res)
            if alloc:
                total += (alloc - sum(u.get(res, 0) for u in used)) / alloc
    return total


def scale_up(
    client: Simulator, pods: Sequence[pb.Pod], templates: Sequence[pb.Node],
    max_new_nodes: int, timeout: float | None = None,
) -> ScaleUpAnswer:
    """How many new nodes of each template the pending `pods` need, best option first."""
    step = pb.SimulationStep(scale_up=pb.ScaleUpStep(
        pods=pods, node_templates=templates, max_new_nodes=max_new_nodes))
    r = _one(client, step, timeout).scale_up
    by_uid = {p.uid: p for p in pods}
    by_name = {t.name: t for t in templates}
    options = []
    for t in r.templates:
        new = set(t.new_node_names)
        placed = _placed(p for p in t.placements if p.node_name in new)
        options.append(TemplateAnswer(
            t.template, t.new_nodes, t.fits,
            _waste(by_name[t.template], t.new_nodes, by_uid, placed) if t.template in by_name
            else 0.0,
            _placed(t.placements), tuple(sorted(t.pending_pod_uids)),
            tuple(sorted(t.unhelpable_pod_uids)),
        ))
    options.sort(key=lambda o: (not o.fits, o.new_nodes, o.waste, o.template))
    return ScaleUpAnswer(_placed(r.scheduled_now), tuple(options))
