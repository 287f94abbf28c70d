"""Random simulations and their twins (issue 27's acceptance): a list of steps drawn over a
fork_world World, and the same steps as the real calls a client would make on a twin cluster
(UpdateSnapshot for add/remove_nodes, Schedule for schedule steps and for fill's copies one
by one; an all_or_nothing step tried on a rebuilt twin and kept only if every pod placed).
The twin's answers are written here from the steps' definitions (names, labels, uids), not
from the engine's simulate code, so a test comparing the two can fail."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from schedsvc.engine.cluster import Cluster
from schedsvc.engine.schedule_one import Placement
from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.engine.simulate import steps as sst
from schedsvc.model import Node, Outcome, Pod, PreemptionPolicy, Taint, frozen_map
from tests.builders.fork_world import (
    HOST,
    World,
    cluster_of_world,
    node_of,
    pending,
    pod_of,
    storage_for,
)

__all__ = ["Twin", "key", "results_key", "simulations", "twin_of"]

_NEVER_SUFFIX = " preemption: not eligible due to preemptionPolicy=Never."


def key(p: Placement) -> tuple[object, ...]:
    """What the acceptance compares of a placement."""
    return (
        p.pod_uid, p.node_name, p.outcome, p.nominated_node_name, p.message, p.reasons,
        tuple(v.uid for v in p.victims), p.volume_bindings,
    )


def results_key(r: sst.StepResult) -> Any:
    """A step result as comparable values (placements by `key`)."""
    if isinstance(r, sst.ScheduleStepResult):
        return ("schedule", [key(p) for p in r.placements], r.committed)
    if isinstance(r, sst.FillResult):
        stop = None if r.stopped_by is None else key(r.stopped_by)
        return ("fill", r.placed, dict(r.per_node), stop)
    return r


@st.composite
def _steps(draw: st.DrawFn, world: World) -> tuple[list[sst.Step], list[Pod]]:
    """Steps over the world's node names as they evolve; the pods they schedule."""
    names = [n.name for n in world.nodes]
    steps: list[sst.Step] = []
    pods: list[Pod] = []
    for i in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(("add", "remove", "schedule", "fill", "explain")))
        if kind == "add":
            cpu, count = draw(st.sampled_from((1000, 2000))), draw(st.integers(1, 3))
            tmpl = dataclasses.replace(
                node_of(0, 3, cpu, tainted=draw(st.booleans())), name="g",
                taints=(Taint("ToBeDeletedByClusterAutoscaler", "1"), Taint("dedicated", "t")),
            )
            steps.append(sst.AddNodes(tmpl, count))
            names += _fresh(names, "g", count)
        elif kind == "remove" and len(names) > 1:
            gone = draw(st.sampled_from(names))
            steps.append(sst.RemoveNodes((gone,)))
            names.remove(gone)
        elif kind == "schedule":
            batch = draw(pending(f"s{i}-", 6))
            pods += batch
            steps.append(sst.ScheduleStep(tuple(batch), draw(st.booleans())))
        elif kind == "fill":
            kind_, app = draw(st.sampled_from(("plain", "spread", "anti", "ports"))), "a"
            tmpl = pod_of(kind_, "f", app, draw(st.sampled_from((300, 500))))
            steps.append(sst.Fill(tmpl, draw(st.sampled_from((1, 3, 8, 40)))))
        else:
            steps.append(sst.ExplainStep(pod_of("plain", f"e{i}", "b", 300)))
    return steps, pods


def _fresh(held: list[str], template: str, count: int) -> list[str]:
    out: list[str] = []
    k = 0
    while len(out) < count:
        if f"{template}-{k}" not in held:
            out.append(f"{template}-{k}")
        k += 1
    return out


@dataclass(frozen=True)
class Simulation:
    world: World
    history: list[Pod]
    steps: list[sst.Step]
    pods: list[Pod]  # every pod a schedule step carries (their claims made up front)


@st.composite
def simulations(draw: st.DrawFn, worlds: st.SearchStrategy[World]) -> Simulation:
    world = draw(worlds)
    history = draw(pending("h", 5))
    steps, pods = draw(_steps(world))
    return Simulation(world, history, steps, pods)


@dataclass
class Twin:
    """A cluster built as the simulated one was, and the real calls replayed on it."""

    sim: Simulation
    batching: bool
    ops: list[Callable[[Cluster], Any]] = field(default_factory=list)

    def build(self) -> Cluster:
        c = cluster_of_world(
            self.sim.world, self.batching,
            storage_for(self.sim.history + self.sim.pods, self.sim.world.nodes),
        )
        c.schedule(self.sim.history)
        for op in self.ops:
            op(c)
        return c

    def run(self, c: Cluster, steps: list[sst.Step]) -> list[Any]:
        """The steps as real calls on `c` (built by `build`); their answers as results_key."""
        out = []
        for s in steps:
            out.append(self._step(c, s))
        return out

    def _do(self, c: Cluster, op: Callable[[Cluster], Any]) -> Any:
        self.ops.append(op)
        return op(c)

    def _step(self, c: Cluster, s: sst.Step) -> Any:
        if isinstance(s, sst.AddNodes):
            nodes = [_made(s.template, n) for n in _fresh(list(c.snapshot.index), "g", s.count)]
            self._do(c, lambda x: x.update(SnapshotUpdate(upsert_nodes=nodes)))
            return sst.AddNodesResult(tuple(n.name for n in nodes))
        if isinstance(s, sst.RemoveNodes):
            snap = c.snapshot
            gone = tuple(u for n in s.names for u in snap.pods_on_row[snap.index[n]])
            self._do(c, lambda x: x.update(SnapshotUpdate(remove_nodes=list(s.names))))
            return sst.RemoveNodesResult(gone)
        if isinstance(s, sst.ScheduleStep):
            return self._schedule(c, s)
        if isinstance(s, sst.Fill):
            return self._fill(c, s)
        assert isinstance(s, sst.ExplainStep)
        return c.explain(s.pod)

    def _schedule(self, c: Cluster, s: sst.ScheduleStep) -> Any:
        pods = list(s.pods)
        if not s.all_or_nothing:
            placed = self._do(c, lambda x: x.schedule(pods)[0])
            return ("schedule", [key(p) for p in placed], True)
        trial = self.build()  # the twin as it is, rebuilt: the trial may be thrown away
        tried = trial.schedule(pods)[0]
        ok = all(p.outcome is Outcome.SCHEDULED for p in tried)
        if ok:
            self._do(c, lambda x: x.schedule(pods))
        return ("schedule", [key(p) for p in tried], ok)

    def _fill(self, c: Cluster, s: sst.Fill) -> Any:
        """Copies scheduled one by one; preemption off is the copies' preemptionPolicy=Never
        (no PostFilter runs but its 'not eligible' line, which the fill's FitError lacks)."""
        nodes: list[str] = []
        i = 0
        while len(nodes) < s.max_pods:
            uid = f"f~{i}"
            i += 1
            if uid in c.snapshot.pods or uid in c.snapshot.nominated:
                continue
            copy = dataclasses.replace(
                s.template, uid=uid, name=f"f-{i - 1}",
                preemption_policy=PreemptionPolicy.NEVER,
            )
            [p] = self._do(c, lambda x, copy=copy: x.schedule([copy])[0])
            if p.outcome is not Outcome.SCHEDULED:
                assert p.message.endswith(_NEVER_SUFFIX), p.message
                p = dataclasses.replace(p, message=p.message.removesuffix(_NEVER_SUFFIX))
                return ("fill", len(nodes), dict(Counter(nodes)), key(p))
            nodes.append(p.node_name)
        return ("fill", len(nodes), dict(Counter(nodes)), None)


def _made(template: Node, name: str) -> Node:
    """A node group's node from `template`: hostname its name, the autoscaler's taint gone."""
    return dataclasses.replace(
        template, name=name, labels=frozen_map({**template.labels, HOST: name}),
        taints=tuple(t for t in template.taints if t.key != "ToBeDeletedByClusterAutoscaler"),
    )


def twin_of(sim: Simulation, batching: bool) -> tuple[Twin, Cluster]:
    t = Twin(sim, batching)
    return t, t.build()
