"""One failed cycle answers for the equal pods after it on an unchanged fork (as the
cluster-autoscaler tries one pod of an equivalence group): scale_up's pending pods, which it
schedules without preemption (a schedule step runs with preemption on: each of its pods runs
its own cycle).

Exact by construction. Pods sharing a shape token are equal in every field but uid and name
(model.Pod.shape), which no filter reads; the uid is read only to find the pod placed or
nominated already, and such pods (or one carrying a nomination) are never answered here.
With preemption off and no cycle record kept (a fork's env: the null observer), a cycle that
finds no node writes nothing but the cycle counter, the cursor's last PodInfo and its batch
state's record of a failed cycle (StoreScheduleResults); its hint attempt wrote nothing (after
a failure the batch state is empty or has no node left, and the pod's parked run, if any, was
taken by the failing pod). So an equal pod, on a snapshot of the same generation, from the
same start index, runs the same cycle on the same state: the same FitError. Those writes are
made here as the cycle makes them; the placement is the first's with the pod's uid and cycle.
A first cycle that moved the start index (a PreFilter narrowing to fewer nodes, a plugin
Error) or the snapshot answers for nobody."""

from __future__ import annotations

import dataclasses

from ...framework.podinfo import pod_info
from ...model import Outcome, Pod
from ..cycle_context import CycleCursor
from ..cycle_env import CycleEnv
from ..schedule_one import Placement, schedule_one
from ..schedule_result import Path, ScheduleResult

__all__ = ["EquivalentFailures"]

_FAILED = ScheduleResult(Path.FAILED)  # store_result reads only the path of a failed cycle


class EquivalentFailures:
    """schedule_one on a fork's env and cursor, a failed cycle's answer reused for the equal
    pods after it while the snapshot's generation and the start index stay."""

    __slots__ = ("env", "cursor", "answered", "_known")

    def __init__(self, env: CycleEnv, cursor: CycleCursor) -> None:
        self.env = env
        self.cursor = cursor
        self.answered = 0  # pods answered without a cycle
        # shape -> (generation, start index, the placement of a pod that failed there)
        self._known: dict[object, tuple[int, int, Placement]] = {}

    def schedule_one(self, pod: Pod) -> Placement:
        env, cursor = self.env, self.cursor
        snap = env.snapshot
        shape = pod.shape
        if (
            shape is None or env.preemption or env.records or pod.nominated_node_name
            or pod.uid in snap.pods or pod.uid in snap.nominated
        ):
            return schedule_one(env, cursor, pod, False)
        gen, start = snap.generation, cursor.next_start_index
        known = self._known.get(shape)
        if known is not None and known[0] == gen and known[1] == start:
            return self._again(pod, known[2])
        placed = schedule_one(env, cursor, pod, False)
        if (
            placed.outcome is Outcome.UNSCHEDULABLE and snap.generation == gen
            and cursor.next_start_index == start
        ):
            self._known[shape] = (gen, start, placed)
        return placed

    def _again(self, pod: Pod, first: Placement) -> Placement:
        """The writes of the failed cycle `pod` would run, and its placement."""
        env, cursor = self.env, self.cursor
        cursor.cycle += 1
        info = cursor.last_info = pod_info(pod, cursor.last_info)
        env.batch[pod.scheduler_name].store_result(info, env.snapshot, cursor.cycle, _FAILED)
        self.answered += 1
        return dataclasses.replace(
            first, pod_uid=pod.uid, cycle=cursor.cycle, reasons=dict(first.reasons)
        )
