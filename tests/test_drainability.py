"""The cluster-autoscaler's drainability rules (simulator/drainability/rules, default flags)
and its remaining-budget tracker, one case per rule and per override, in the autoscaler's
order; messages are the autoscaler's, asserted whole."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from schedsvc.engine.simulate.drainability import (
    DrainOutcome,
    RemainingPdbTracker,
    drainability,
)
from schedsvc.engine.simulate.steps import BlockingPodReason
from schedsvc.model import LabelSelector, Pod, PodDisruption, PodDisruptionBudget
from schedsvc.model_volume import Volume
from tests.builders.domain import pod

RS = "ReplicaSet"
APP_A = LabelSelector(match_labels=(("app", "a"),))


def _pod(
    kind: str = RS, ns: str = "default", mirror: bool = False, safe: str = "",
    local_ok: tuple[str, ...] = (), volumes: tuple[Volume, ...] = (), name: str = "p",
) -> Pod:
    d = PodDisruption(kind, mirror, safe, local_ok)
    return pod(name, namespace=ns, labels={"app": "a"}, disruption=d, volumes=volumes)


def _budget(
    allowed: int, ns: str = "default", sel: LabelSelector | None = APP_A
) -> PodDisruptionBudget:
    return PodDisruptionBudget("pdb", ns, sel, allowed)


EMPTY_DIR = Volume("scratch", "other", other_source="emptyDir")
HOST_PATH = Volume("logs", "other", other_source="hostPath")
CONFIG_MAP = Volume("cfg", "other", other_source="configMap")


@dataclass(frozen=True)
class Case:
    id: str
    pod: Pod
    pdbs: tuple[PodDisruptionBudget, ...]
    outcome: DrainOutcome
    reason: BlockingPodReason | None = None
    message: str = ""
    daemonset: bool = False


NOT_REPLICATED = BlockingPodReason.NOT_REPLICATED
CASES = [
    Case("a ReplicaSet pod with nothing against it is moved", _pod(), (), DrainOutcome.MOVE),
    Case("each replicated kind is moved: StatefulSet", _pod("StatefulSet"), (), DrainOutcome.MOVE),
    Case("each replicated kind is moved: Job", _pod("Job"), (), DrainOutcome.MOVE),
    Case("each replicated kind is moved: ReplicationController",
         _pod("ReplicationController"), (), DrainOutcome.MOVE),
    Case("a mirror pod is skipped, even unreplicated in kube-system",
         _pod("", ns="kube-system", mirror=True), (), DrainOutcome.SKIP_DRAIN),
    Case("a DaemonSet pod is skipped and listed as one", _pod("DaemonSet"), (),
         DrainOutcome.SKIP_DRAIN, daemonset=True),
    Case("a DaemonSet pod annotated not safe to evict is still skipped (daemonset comes first)",
         _pod("DaemonSet", safe="false"), (), DrainOutcome.SKIP_DRAIN, daemonset=True),
    Case("safe-to-evict overrides not replicated", _pod("", safe="true"), (),
         DrainOutcome.DRAIN_OK),
    Case("safe-to-evict overrides a kube-system pod without a budget",
         _pod(ns="kube-system", safe="true"), (), DrainOutcome.DRAIN_OK),
    Case("safe-to-evict overrides local storage", _pod(safe="true", volumes=(EMPTY_DIR,)), (),
         DrainOutcome.DRAIN_OK),
    Case("safe-to-evict overrides an exhausted budget", _pod(safe="true"), (_budget(0),),
         DrainOutcome.DRAIN_OK),
    Case("a pod without a controller is not replicated", _pod(""), (),
         DrainOutcome.BLOCK_DRAIN, NOT_REPLICATED, "default/p is not replicated"),
    Case("a custom controller is not replicated (skip-nodes-with-custom-controller-pods)",
         _pod("MyOperator"), (), DrainOutcome.BLOCK_DRAIN, NOT_REPLICATED,
         "default/p is not replicated"),
    Case("not replicated comes before not-safe-to-evict", _pod("", safe="false"), (),
         DrainOutcome.BLOCK_DRAIN, NOT_REPLICATED, "default/p is not replicated"),
    Case("a kube-system pod no budget covers blocks", _pod(ns="kube-system"), (),
         DrainOutcome.BLOCK_DRAIN, BlockingPodReason.UNMOVABLE_KUBE_SYSTEM_POD,
         "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: p"),
    Case("a budget of another namespace does not cover a kube-system pod",
         _pod(ns="kube-system"), (_budget(5),), DrainOutcome.BLOCK_DRAIN,
         BlockingPodReason.UNMOVABLE_KUBE_SYSTEM_POD,
         "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: p"),
    Case("a kube-system pod with a budget left is moved", _pod(ns="kube-system"),
         (_budget(1, "kube-system"),), DrainOutcome.MOVE),
    Case("a kube-system pod whose budget is spent blocks on the budget",
         _pod(ns="kube-system"), (_budget(0, "kube-system"),), DrainOutcome.BLOCK_DRAIN,
         BlockingPodReason.NOT_ENOUGH_PDB,
         "not enough pod disruption budget to move kube-system/p"),
    Case("safe-to-evict false blocks", _pod(safe="false"), (), DrainOutcome.BLOCK_DRAIN,
         BlockingPodReason.NOT_SAFE_TO_EVICT_ANNOTATION,
         "pod annotated as not safe to evict present: p"),
    Case("not-safe-to-evict comes before local storage",
         _pod(safe="false", volumes=(EMPTY_DIR,)), (), DrainOutcome.BLOCK_DRAIN,
         BlockingPodReason.NOT_SAFE_TO_EVICT_ANNOTATION,
         "pod annotated as not safe to evict present: p"),
    Case("an emptyDir volume is local storage", _pod(volumes=(EMPTY_DIR,)), (),
         DrainOutcome.BLOCK_DRAIN, BlockingPodReason.LOCAL_STORAGE_REQUESTED,
         "pod with local storage present: p"),
    Case("a hostPath volume is local storage", _pod(volumes=(HOST_PATH,)), (),
         DrainOutcome.BLOCK_DRAIN, BlockingPodReason.LOCAL_STORAGE_REQUESTED,
         "pod with local storage present: p"),
    Case("local volumes all named safe-to-evict-local-volumes do not block",
         _pod(local_ok=("scratch", "logs"), volumes=(EMPTY_DIR, HOST_PATH)), (),
         DrainOutcome.MOVE),
    Case("one local volume not named still blocks",
         _pod(local_ok=("scratch",), volumes=(EMPTY_DIR, HOST_PATH)), (),
         DrainOutcome.BLOCK_DRAIN, BlockingPodReason.LOCAL_STORAGE_REQUESTED,
         "pod with local storage present: p"),
    Case("a configMap volume is not local storage", _pod(volumes=(CONFIG_MAP,)), (),
         DrainOutcome.MOVE),
    Case("local storage comes before the budget", _pod(volumes=(EMPTY_DIR,)), (_budget(0),),
         DrainOutcome.BLOCK_DRAIN, BlockingPodReason.LOCAL_STORAGE_REQUESTED,
         "pod with local storage present: p"),
    Case("a budget with no disruption allowed blocks", _pod(), (_budget(0),),
         DrainOutcome.BLOCK_DRAIN, BlockingPodReason.NOT_ENOUGH_PDB,
         "not enough pod disruption budget to move default/p"),
    Case("a budget with one disruption allowed does not block", _pod(), (_budget(1),),
         DrainOutcome.MOVE),
    Case("a budget whose selector does not match does not count", _pod(),
         (_budget(0, sel=LabelSelector(match_labels=(("app", "b"),))),), DrainOutcome.MOVE),
    Case("a budget without a selector covers no pod", _pod(), (_budget(0, sel=None),),
         DrainOutcome.MOVE),
    Case("no disruption field reads as no controller", pod("p"), (), DrainOutcome.BLOCK_DRAIN,
         NOT_REPLICATED, "default/p is not replicated"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_drainability(case: Case) -> None:
    got = drainability(case.pod, RemainingPdbTracker(case.pdbs))
    assert (got.outcome, got.reason, got.message, got.daemonset) == (
        case.outcome, case.reason, case.message, case.daemonset,
    )


def test_can_remove_pods_names_the_first_pod_past_a_budget() -> None:
    pods = [_pod(name=f"p{i}") for i in range(3)]
    tracker = RemainingPdbTracker([_budget(2)])
    assert tracker.can_remove_pods(pods[:2]) is None
    assert tracker.can_remove_pods(pods) is pods[2]


def test_remove_pods_spends_the_budgets_that_cover_them() -> None:
    other = PodDisruptionBudget("b", "default", LabelSelector(match_labels=(("app", "b"),)), 4)
    tracker = RemainingPdbTracker([_budget(3), other])
    tracker.remove_pods([_pod(name="p0"), _pod(name="p1")])
    assert tracker.remaining == {"default/pdb": 1, "default/b": 4}
    assert tracker.can_remove_pods([_pod(name="p2"), _pod(name="p3")]) is not None
    got = drainability(_pod(name="p4"), tracker)
    assert got.outcome is DrainOutcome.MOVE  # one left
    tracker.remove_pods([_pod(name="p4")])
    assert drainability(_pod(name="p5"), tracker).reason is BlockingPodReason.NOT_ENOUGH_PDB
