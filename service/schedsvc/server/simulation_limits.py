"""What one Simulate request may ask (issue 27), checked whole before the fork is made.

A simulation's cost is its pods and new nodes, not its bytes: a 30-byte fill step may ask for
100,000 copies. So besides the per-request list limits, the request's steps are summed into the
pods it may place or try and the nodes it may add, and refused with INVALID_ARGUMENT naming the
step field that crossed the bound (waiting never makes the same request fit, as for
--max-nominated-pods-per-cluster). How many pods a step may try:

- schedule: its pods; fill: max_pods;
- scale_up: its pods, once as they are and once per verification probe of each template,
  bounded by SCALE_UP_PROBES(max_new_nodes) (galloping then bisecting over 1..max_new_nodes);
- drain: the pods on its nodes, read from the live snapshot at admission (without the lock: a
  node's pods may move a little before the drain runs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..engine.scheduler import Cluster
from ..errors import InvalidArgument
from ..v1 import schedule_pb2 as pb
from .limits import Limits

__all__ = [
    "SimulationSize", "check_simulation", "fork_bytes", "live_pods_on", "scale_up_probes",
    "simulation_size",
]

# What a fork may cost (docs/guarantees.md "Simulations"): the usage columns it copies on
# their first write (8 bytes x nodes x (resources + 2), about 10 columns wide), each pod it
# places (its record, a copied row entry, index entries) and each node it adds.
FORK_BYTES_PER_NODE = 8 * 10
FORK_BYTES_PER_POD = 600
FORK_BYTES_PER_NEW_NODE = 2048


def scale_up_probes(max_new_nodes: int) -> int:
    """Verifications one template may need: the estimate, a gallop up and a bisection
    (each at most log2(max_new_nodes) + 1), and the check one below the answer."""
    return 2 + 2 * max(1, max_new_nodes).bit_length()


@dataclass(frozen=True, slots=True)
class SimulationSize:
    pods: int  # pods the request may place or try
    nodes: int  # nodes it may add


def _step_size(step: pb.SimulationStep, pods_on: Callable[[str], int]) -> SimulationSize:
    kind = step.WhichOneof("step")
    if kind == "schedule":
        return SimulationSize(len(step.schedule.pods), 0)
    if kind == "fill":
        return SimulationSize(max(0, step.fill.max_pods), 0)
    if kind == "add_nodes":
        return SimulationSize(0, max(0, step.add_nodes.count))
    if kind == "drain":
        return SimulationSize(sum(pods_on(n) for n in step.drain.node_names), 0)
    if kind == "scale_up":
        s = step.scale_up
        k = max(0, s.max_new_nodes)
        per_template = scale_up_probes(k)
        pods = len(s.pods) * (1 + len(s.node_templates) * per_template)
        return SimulationSize(pods, k * len(s.node_templates))
    return SimulationSize(0, 0)  # remove_nodes, explain: nothing placed or added


# the field a step's size is reported under when it crosses a bound
_POD_FIELD = {
    "schedule": "schedule.pods", "fill": "fill.max_pods", "drain": "drain.node_names",
    "scale_up": "scale_up.pods",
}
_NODE_FIELD = {"add_nodes": "add_nodes.count", "scale_up": "scale_up.max_new_nodes"}


def simulation_size(
    steps: Sequence[pb.SimulationStep], pods_on: Callable[[str], int] = lambda _n: 0
) -> SimulationSize:
    """The request's pods and new nodes (`pods_on`: a node's pods, for drains)."""
    sizes = [_step_size(s, pods_on) for s in steps]
    return SimulationSize(sum(s.pods for s in sizes), sum(s.nodes for s in sizes))


def fork_bytes(nodes: int, size: SimulationSize) -> int:
    """The memory estimate of a simulation on a cluster of `nodes` (memory.py's admission)."""
    return (nodes * FORK_BYTES_PER_NODE + size.pods * FORK_BYTES_PER_POD
            + size.nodes * FORK_BYTES_PER_NEW_NODE)


def live_pods_on(cluster: Cluster) -> Callable[[str], int]:
    """A node's pods in the live snapshot, read without the lock (a drain's size at
    admission); 0 for a node it does not hold (the drain reports NoNodeInfo)."""
    snap = cluster.snapshot

    def pods_on(name: str) -> int:
        row = snap.row_of(name)
        return 0 if row is None else len(snap.pods_on_row[row])

    return pods_on


def _check_lists(i: int, step: pb.SimulationStep, lim: Limits) -> None:
    kind = step.WhichOneof("step")
    lists: tuple[tuple[str, int, int], ...] = ()
    if kind == "schedule":
        lists = (("pods", len(step.schedule.pods), lim.max_pods_per_request),)
    elif kind == "scale_up":
        lists = (("pods", len(step.scale_up.pods), lim.max_pods_per_request),
                 ("node_templates", len(step.scale_up.node_templates), lim.max_nodes_per_update))
    elif kind == "remove_nodes":
        lists = (("names", len(step.remove_nodes.names), lim.max_nodes_per_update),)
    elif kind == "drain":
        lists = (("node_names", len(step.drain.node_names), lim.max_nodes_per_update),)
    for name, n, limit in lists:
        if n > limit:
            raise InvalidArgument(f"steps[{i}].{kind}.{name}", f"at most {limit} entries")


def check_simulation(
    request: pb.SimulateRequest, lim: Limits, pods_on: Callable[[str], int]
) -> SimulationSize:
    """The request's size; InvalidArgument naming the first field beyond a limit. Sizes are
    summed in step order, so the step named is the one that crossed the bound."""
    steps = request.steps
    if len(steps) > lim.max_simulation_steps:
        raise InvalidArgument("steps", f"at most {lim.max_simulation_steps} steps "
                              "(--max-simulation-steps)")
    pods = nodes = 0
    for i, step in enumerate(steps):
        _check_lists(i, step, lim)
        size = _step_size(step, pods_on)
        kind = step.WhichOneof("step") or ""
        pods += size.pods
        nodes += size.nodes
        if pods > lim.max_simulated_pods:
            raise InvalidArgument(
                f"steps[{i}].{_POD_FIELD[kind]}", f"the simulation would place or try {pods} "
                f"pods, more than {lim.max_simulated_pods} (--max-simulated-pods)")
        if nodes > lim.max_simulated_nodes:
            raise InvalidArgument(
                f"steps[{i}].{_NODE_FIELD[kind]}", f"the simulation would add {nodes} nodes, "
                f"more than {lim.max_simulated_nodes} (--max-simulated-nodes)")
    return SimulationSize(pods, nodes)
