"""A simulation's steps and their results, as the engine takes and returns them (no gRPC).

The server (server/convert_simulation.py) converts SimulateRequest's steps into these and the
results back; the engine runs them with one call, whose contract this module fixes:

    Cluster.simulate(
        steps: Sequence[Step], should_continue: Callable[[], bool]
    ) -> SimulationResult

Under the cluster's lock (staged/damaged refusals as Explain), on a fork of the cluster that
is dropped at the end, so the cluster's generation, snapshot, cursor and batch state are
unchanged whatever happens, a stop or an error midway included. `should_continue` is asked
before each pod of every step and between steps; when it says no, the run ends there with
the results of the steps completed before, `complete=False` and `stopped_at_step` the index of
the step cut short (the server answers DEADLINE_EXCEEDED / CANCELLED when that is step 0).
Errors are domain errors only: InvalidArgument naming the step's field (e.g.
`steps[2].remove_nodes.names[0]` for a node the fork does not hold), FailedPrecondition as
Schedule's. The static limits (counts, sizes) are the server's, checked before the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import TypeAlias

from ...model import Node, Pod
from ..explain import Explanation
from ..preemption.evaluator import Victim
from ..schedule_one import Placement

__all__ = [
    "AddNodes", "RemoveNodes", "ScheduleStep", "Fill", "Drain", "ScaleUp", "ExplainStep", "Step",
    "AddNodesResult", "RemoveNodesResult", "ScheduleStepResult", "FillResult",
    "UnremovableReason", "BlockingPodReason", "NodeDrainVerdict", "DrainResult",
    "TemplateEstimate", "ScaleUpResult", "StepResult", "SimulationResult",
]


def _no_counts() -> Mapping[str, int]:
    return MappingProxyType({})


# ---- steps ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AddNodes:
    """`count` nodes from `template` as a node group would make them: named
    "<template.name>-<k>" (k counted per simulation, skipping names the fork holds),
    kubernetes.io/hostname set to that name, other labels, taints and unschedulable copied
    (less the cluster-autoscaler's own taints)."""

    template: Node
    count: int


@dataclass(frozen=True, slots=True)
class RemoveNodes:
    """The nodes removed as UpdateSnapshot's remove_nodes: their pods go with them."""

    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ScheduleStep:
    """The pods scheduled in order with kube's full cycle on the fork; with `all_or_nothing`,
    undone unless every pod is SCHEDULED."""

    pods: tuple[Pod, ...]
    all_or_nothing: bool = False


@dataclass(frozen=True, slots=True)
class Fill:
    """Copies of `template` (same shape token, names "<name or fill>-<i>") scheduled without
    preemption until `max_pods` placed or one fits nowhere."""

    template: Pod
    max_pods: int


@dataclass(frozen=True, slots=True)
class Drain:
    """The cluster-autoscaler's scale-down simulation of each node in order, with kube's
    full cycle for the re-placement."""

    node_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ScaleUp:
    """The fewest new nodes per template that let `pods` schedule (at most `max_new_nodes`
    each); leaves the fork unchanged."""

    pods: tuple[Pod, ...]
    node_templates: tuple[Node, ...]
    max_new_nodes: int


@dataclass(frozen=True, slots=True)
class ExplainStep:
    """Explain on the fork's state at this point of the steps."""

    pod: Pod


Step: TypeAlias = AddNodes | RemoveNodes | ScheduleStep | Fill | Drain | ScaleUp | ExplainStep


# ---- results -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AddNodesResult:
    node_names: tuple[str, ...]  # in order


@dataclass(frozen=True, slots=True)
class RemoveNodesResult:
    removed_pod_uids: tuple[str, ...]  # the removed nodes' pods, gone with them


@dataclass(frozen=True, slots=True)
class ScheduleStepResult:
    placements: tuple[Placement, ...]  # one per pod, in order
    committed: bool  # False: all_or_nothing undid the step


@dataclass(frozen=True, slots=True)
class FillResult:
    placed: int
    per_node: Mapping[str, int] = field(default_factory=_no_counts)  # node -> copies
    stopped_by: Placement | None = None  # the copy that fit nowhere; None: max_pods placed


class UnremovableReason(Enum):
    """Why a node is not drainable: the cluster-autoscaler's simulator.UnremovableReason
    values a drain can produce."""

    BLOCKED_BY_POD = "BlockedByPod"
    NO_PLACE_TO_MOVE_PODS = "NoPlaceToMovePods"
    NO_NODE_INFO = "NoNodeInfo"


class BlockingPodReason(Enum):
    """Which drainability rule blocked: the autoscaler's drain.BlockingPodReason values we
    produce (ControllerNotFound and MinReplicasReached need controller objects we lack)."""

    NOT_REPLICATED = "NotReplicated"
    UNMOVABLE_KUBE_SYSTEM_POD = "UnmovableKubeSystemPod"
    NOT_SAFE_TO_EVICT_ANNOTATION = "NotSafeToEvictAnnotation"
    LOCAL_STORAGE_REQUESTED = "LocalStorageRequested"
    NOT_ENOUGH_PDB = "NotEnoughPdb"


@dataclass(frozen=True, slots=True)
class NodeDrainVerdict:
    node_name: str
    drainable: bool
    reason: UnremovableReason | None = None  # None when drainable
    blocking_pod: Victim | None = None
    blocking_reason: BlockingPodReason | None = None  # BLOCKED_BY_POD only
    message: str = ""  # the autoscaler's text, or kube's FitError
    reasons: Mapping[str, int] = field(default_factory=_no_counts)  # FitError reasons
    moved: tuple[Placement, ...] = ()  # drainable: where each pod went
    daemonset_pod_uids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DrainResult:
    nodes: tuple[NodeDrainVerdict, ...]  # one per node name, in order


@dataclass(frozen=True, slots=True)
class TemplateEstimate:
    template: str  # the template node's name
    new_nodes: int
    fits: bool
    placements: tuple[Placement, ...] = ()
    unhelpable_pod_uids: tuple[str, ...] = ()
    pending_pod_uids: tuple[str, ...] = ()
    new_node_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScaleUpResult:
    scheduled_now: tuple[Placement, ...]  # pods that fit the cluster as it is
    templates: tuple[TemplateEstimate, ...]  # one per node template, in order


StepResult: TypeAlias = (
    AddNodesResult | RemoveNodesResult | ScheduleStepResult | FillResult | DrainResult
    | ScaleUpResult | Explanation
)


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """One result per completed step, in order. `generation`: the cluster's, which the fork
    started from (unchanged by the run)."""

    results: tuple[StepResult, ...]
    generation: int
    complete: bool = True
    stopped_at_step: int = 0  # when not complete: the index of the step cut short
