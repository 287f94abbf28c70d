"""The cluster-autoscaler's drainability rules (simulator/drainability/rules `Default`, with
its default flags: --skip-nodes-with-system-pods, --skip-nodes-with-local-storage and
--skip-nodes-with-custom-controller-pods all true) and its remaining-budget tracker
(core/scaledown/pdb `RemainingPdbTracker`), over what `Pod.disruption` carries.

Rules in the autoscaler's order, the first decisive one wins: mirror (skip), daemonset
(skip), safe-to-evict "true" (drainable: no later rule is asked), replicated, system,
not-safe-to-evict, local storage, pdb. Not modelled, for want of the objects they read:
long-terminating and terminal (deletion timestamps, phases) and replica count
(ControllerNotFound, MinReplicasReached: the controllers); docs/differences.md."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from ...model import Pod, PodDisruption, PodDisruptionBudget
from .steps import BlockingPodReason

__all__ = [
    "DrainOutcome", "Drainability", "RemainingPdbTracker", "drainability", "pdb_selects",
    "REPLICATED_KINDS", "LOCAL_VOLUME_SOURCES",
]

# replicated.replicatedKind: the controllers that recreate a deleted pod elsewhere
REPLICATED_KINDS = frozenset({"ReplicationController", "Job", "ReplicaSet", "StatefulSet"})
# utils/drain isLocalVolume: hostPath, emptyDir (the medium is not in our contract: a
# memory-backed emptyDir counts as local storage here)
LOCAL_VOLUME_SOURCES = frozenset({"hostPath", "emptyDir"})
KUBE_SYSTEM = "kube-system"
_NO_DISRUPTION = PodDisruption()


class DrainOutcome(Enum):
    """drainability.OutcomeType, less UndefinedOutcome's name: MOVE is "no rule objected"."""

    MOVE = "Undefined"  # no rule decided: the pod is moved
    DRAIN_OK = "DrainOk"  # safe-to-evict: moved, whatever a later rule says
    SKIP_DRAIN = "SkipDrain"  # mirror and DaemonSet pods: they go with the node
    BLOCK_DRAIN = "BlockDrain"


@dataclass(frozen=True, slots=True)
class Drainability:
    """One pod's drainability.Status."""

    outcome: DrainOutcome
    reason: BlockingPodReason | None = None  # BLOCK_DRAIN only
    message: str = ""  # the autoscaler's error text, BLOCK_DRAIN only
    daemonset: bool = False  # SKIP_DRAIN of a DaemonSet pod (listed in the verdict)


_MOVE = Drainability(DrainOutcome.MOVE)
_DRAIN_OK = Drainability(DrainOutcome.DRAIN_OK)
_MIRROR = Drainability(DrainOutcome.SKIP_DRAIN)
_DAEMONSET = Drainability(DrainOutcome.SKIP_DRAIN, daemonset=True)


def pdb_selects(budget: PodDisruptionBudget, pod: Pod) -> bool:
    """The budget covers the pod: same namespace and its selector matches the pod's labels
    (a budget without a selector covers none, as our PodDisruptionBudget reads it)."""
    return (
        budget.namespace == pod.namespace and budget.selector is not None
        and budget.selector.matches(pod.labels)
    )


class RemainingPdbTracker:
    """The budgets as they stand after the pods already removed in this simulation: a drained
    node spends them for the next node (the autoscaler's basicRemainingPdbTracker).

    A budget reads a pod's namespace and labels only, so the budgets covering a pod are
    worked out once per (namespace, labels) and only among the budgets of its namespace: a
    node's pods are mostly a few Deployments' replicas, asked about three times each."""

    __slots__ = ("pdbs", "remaining", "_by_namespace", "_covering")

    def __init__(self, pdbs: Iterable[PodDisruptionBudget]) -> None:
        self.pdbs: tuple[PodDisruptionBudget, ...] = tuple(pdbs)
        self.remaining: dict[str, int] = {b.key: b.disruptions_allowed for b in self.pdbs}
        by_namespace: dict[str, list[int]] = {}
        for i, b in enumerate(self.pdbs):
            if b.selector is not None:  # one without a selector covers none
                by_namespace.setdefault(b.namespace, []).append(i)
        self._by_namespace = by_namespace
        self._covering: dict[tuple[str, frozenset[tuple[str, str]]], tuple[int, ...]] = {}

    def _covering_pod(self, pod: Pod) -> tuple[int, ...]:
        """The positions in `pdbs` of the budgets that select the pod, ascending."""
        key = (pod.namespace, frozenset(pod.labels.items()))
        hit = self._covering.get(key)
        if hit is None:
            hit = self._covering[key] = tuple(
                i for i in self._by_namespace.get(pod.namespace, ())
                if pdb_selects(self.pdbs[i], pod)
            )
        return hit

    def _covered(self, pods: Sequence[Pod]) -> dict[int, list[Pod]]:
        """Per budget (its position in `pdbs`) the pods it selects, in the given order."""
        out: dict[int, list[Pod]] = {}
        for pod in pods:
            for i in self._covering_pod(pod):
                out.setdefault(i, []).append(pod)
        return out

    def matching(self, pod: Pod) -> list[PodDisruptionBudget]:
        """MatchingPdbs."""
        return [self.pdbs[i] for i in self._covering_pod(pod)]

    def can_remove_pods(self, pods: Sequence[Pod]) -> Pod | None:
        """CanRemovePods: the first pod, budget by budget, that takes one past what is left of
        it (None: all can go)."""
        covered = self._covered(pods)
        for i in sorted(covered):
            left, selected = self.remaining[self.pdbs[i].key], covered[i]
            if left < len(selected):  # the pod that makes the count exceed `left`
                return selected[max(left, 0)]
        return None

    def remove_pods(self, pods: Sequence[Pod]) -> None:
        """RemovePods: each budget spent by the pods it covers."""
        for i, selected in self._covered(pods).items():
            self.remaining[self.pdbs[i].key] -= len(selected)


def _blocked(reason: BlockingPodReason, message: str) -> Drainability:
    return Drainability(DrainOutcome.BLOCK_DRAIN, reason, message)


def _has_blocking_local_storage(pod: Pod, d: PodDisruption) -> bool:
    """utils/drain HasBlockingLocalStorage: a hostPath or emptyDir volume not named in the
    safe-to-evict-local-volumes annotation."""
    for v in pod.volumes:
        if v.other_source in LOCAL_VOLUME_SOURCES and v.name not in d.safe_to_evict_local_volumes:
            return True
    return False


def drainability(pod: Pod, pdbs: RemainingPdbTracker) -> Drainability:
    """Rules.Drainable with the Default rules, in their order (module docstring)."""
    d = pod.disruption or _NO_DISRUPTION
    if d.mirror:
        return _MIRROR
    if d.controller_kind == "DaemonSet":
        return _DAEMONSET
    if d.safe_to_evict == "true":
        return _DRAIN_OK
    if d.controller_kind not in REPLICATED_KINDS:
        return _blocked(
            BlockingPodReason.NOT_REPLICATED, f"{pod.namespace}/{pod.name} is not replicated"
        )
    matching = pdbs.matching(pod)
    if pod.namespace == KUBE_SYSTEM and not matching:
        return _blocked(
            BlockingPodReason.UNMOVABLE_KUBE_SYSTEM_POD,
            f"non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: {pod.name}",
        )
    if d.safe_to_evict == "false":
        return _blocked(
            BlockingPodReason.NOT_SAFE_TO_EVICT_ANNOTATION,
            f"pod annotated as not safe to evict present: {pod.name}",
        )
    if _has_blocking_local_storage(pod, d):
        return _blocked(
            BlockingPodReason.LOCAL_STORAGE_REQUESTED, f"pod with local storage present: {pod.name}"
        )
    for b in matching:
        if pdbs.remaining[b.key] < 1:
            return _blocked(
                BlockingPodReason.NOT_ENOUGH_PDB,
                f"not enough pod disruption budget to move {pod.namespace}/{pod.name}",
            )
    return _MOVE
