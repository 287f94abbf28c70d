"""kube's pod group cycle (schedule_one_podgroup.go, v1.37.2, GenericWorkload on): the members
of one PodGroup in a Schedule request are scheduled as one queue entity, on one snapshot.

- GangScheduling's PreEnqueue first: an unknown PodGroup, or a gang whose known members
  (bound, assumed, and those of this request) are fewer than minCount, is GATED: no cycle.
- validatePodGroup: schedulerName, priority and preemption policy (SchedulerError).
- Members already bound or assumed are not scheduled again (skipPodGroupPodSchedule) and count
  toward minCount, as kube's PodGroupState.ScheduledPodsCount.
- The default algorithm: PlacementFeasible, then each member through the full cycle
  (schedule_one, the earlier members assumed), PlacementFeasible after each; a group that
  cannot reach minCount stops there. A member that fits nowhere runs no PostFilter.
- A group that fails is taken back whole (AssumeLog), then PodGroupPostFilter
  (pod_group_post_filter.py: DynamicResources, then workload-aware preemption).
- A group that succeeds keeps each member that fit; the others fail on their own.

Messages and the PodGroupInitiallyScheduled condition are kube's (pod_group_status.py).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from ..framework.pod_group_members import PodGroupMembers
from ..model import Outcome, Pod
from ..model_pod_group import PodGroup
from ..plugins.gang_scheduling import Feasibility, placement_feasible, pre_enqueue
from .assume_log import AssumeLog
from .cycle_context import CycleCursor
from .cycle_env import CycleEnv
from .in_flight import InFlight
from .pod_group_order import group_key
from .pod_group_post_filter import PostFilterOutcome, run_pod_group_post_filter
from .pod_group_result import GroupOutcome, PodGroupResult
from .pod_group_rounds import members_in_rounds
from .pod_group_status import (
    ERR_POD_GROUP_UNSCHEDULABLE,
    GroupCode,
    GroupStatus,
    condition_to_write,
)
from .pod_group_validate import validate_pod_group
from .schedule_one import Placement, deleting_pod_message, schedule_one

__all__ = [
    "BeforeMember", "GroupRun", "schedule_pod_group", "rerun_group_algorithm",
    "run_group_algorithm",
]

BeforeMember = Callable[[Pod], None]

# kube's metrics result label of a group cycle (a GATED group or one refused before its
# cycle, handlePodGroupFailureBeforeScheduling, records none)
_RESULTS = {
    GroupOutcome.SCHEDULED: "scheduled",
    GroupOutcome.UNSCHEDULABLE: "unschedulable",
    GroupOutcome.WAITING_ON_PREEMPTION: "waiting_on_preemption",
    GroupOutcome.ERROR: "error",
}


@dataclass(slots=True)
class GroupRun:
    """What podGroupSchedulingDefaultAlgorithm leaves: the group's status, the placements of
    the members it tried (in order), and whether any member reached DynamicResources'
    PreFilter (so that plugin keeps state for PodGroupPostFilter)."""

    status: GroupStatus
    tried: list[Placement] = field(default_factory=list)
    any_scheduled: bool = False
    dra_state: bool = False


def run_group_algorithm(
    env: CycleEnv, cursor: CycleCursor, pg: PodGroup, queued: Sequence[Pod], already: int,
    dry_run: bool, log: AssumeLog, before_each: BeforeMember | None = None,
) -> GroupRun:
    """kube's podGroupSchedulingDefaultAlgorithm: the members that fit stay assumed in `log`
    (the caller keeps or reverts them); `already`: members bound or assumed before.
    `before_each` sees each member before its cycle, the earlier ones assumed (Explain)."""
    min_count, scheduled, remaining = pg.placement_min_count, already, len(queued)
    code, msg = placement_feasible(min_count, scheduled, remaining)
    if code is Feasibility.UNSCHEDULABLE:
        return GroupRun(GroupStatus.unschedulable(msg))
    run = GroupRun(GroupStatus(GroupCode.UNSCHEDULABLE, [msg]))
    for p in _member_cycles(env, cursor, queued, dry_run, log, before_each):
        run.tried.append(p)
        run.dra_state = run.dra_state or not p.pre_filter_ended
        if p.error:
            run.status = GroupStatus.error(
                f"failed to schedule other pod from a pod group: {p.message}"
            )
            return run
        remaining -= 1
        if p.outcome is Outcome.SCHEDULED:
            scheduled += 1
        code, msg = placement_feasible(min_count, scheduled, remaining)
        if code is Feasibility.UNSCHEDULABLE:
            run.status = GroupStatus(GroupCode.UNSCHEDULABLE, [msg])
            return run
        run.status = GroupStatus(
            GroupCode.SUCCESS if code is Feasibility.SUCCESS else GroupCode.UNSCHEDULABLE,
            [msg] if msg else [],
        )
        run.any_scheduled = run.any_scheduled or p.outcome is Outcome.SCHEDULED
    if code is Feasibility.WAIT:
        run.status = GroupStatus.unschedulable(msg)
    elif not run.any_scheduled:
        # "the framework requires at least 1 pod to be scheduled"
        run.status = GroupStatus.unschedulable()
    return run


def _member_cycles(
    env: CycleEnv, cursor: CycleCursor, queued: Sequence[Pod], dry_run: bool, log: AssumeLog,
    before_each: BeforeMember | None,
) -> Iterator[Placement]:
    """Each member's placement, in order, as its cycle makes it: after a member placed from
    its run's cache, the members that continue the run are placed in rounds (what their
    hinted cycles would decide, pod_group_rounds.py), except under `before_each` (Explain
    sees each member before its own cycle). The caller stops reading when the group fails."""
    i, n = 0, len(queued)
    scheduled_last = False
    while i < n:
        pod = queued[i]
        if before_each is not None:
            before_each(pod)
        elif scheduled_last:
            placed = members_in_rounds(env, cursor, queued, i, log)
            if placed:
                yield from placed
                i += len(placed)
                scheduled_last = False  # the rounds stopped at a member that needs its cycle
                continue
        p = schedule_one(env, cursor, pod, dry_run, log)
        scheduled_last = p.outcome is Outcome.SCHEDULED
        yield p
        i += 1


def rerun_group_algorithm(
    env: CycleEnv, cursor: CycleCursor, pg: PodGroup, queued: Sequence[Pod], already: int,
    dry_run: bool,
) -> tuple[GroupStatus, list[tuple[Pod, str]]]:
    """kube's pgSchedulingFunc for workload-aware preemption: runRootSchedulingAlgorithm on
    the snapshot as preemption left it, a real run (each member's cycle moves the cursor),
    its assumes taken back before it returns; the status and the members placed, in order."""
    log = AssumeLog()
    run = run_group_algorithm(env, cursor, pg, queued, already, dry_run, log)
    placed = [
        (pod, p.node_name)
        for pod, p in zip(queued, run.tried, strict=False)
        if p.outcome is Outcome.SCHEDULED
    ]
    if log.revert(env.snapshot):
        env.batches.invalidate()  # cached verdicts counted the members taken back
    return run.status, placed


def schedule_pod_group(
    env: CycleEnv, cursor: CycleCursor, members: Sequence[Pod], dry_run: bool,
    before_each: BeforeMember | None = None,
) -> list[Placement]:
    """One pod group cycle for `members` (one group, request order): their placements, in
    that order, each naming the group and sharing its PodGroupResult."""
    snap = env.snapshot
    key = group_key(members[0])
    index = PodGroupMembers.for_snapshot(snap)
    already = index.count(key)
    pg = snap.pod_groups.get(key)
    result = PodGroupResult(key, GroupOutcome.SCHEDULED, already_scheduled=already)
    if pg is not None:
        result.min_count = pg.placement_min_count
    out = {p.uid: _already_placed(env, p, key, result) for p in members if p.uid in snap.pods}
    for p in members:
        if p.uid not in out and p.scheduler_name not in env.frameworks:
            # kube's informer hands the scheduler only the pods of its profiles: such a member
            # is no part of the group it schedules (counted, validated or answered for)
            out[p.uid] = Placement(
                p.uid, "", Outcome.REJECTED,
                message=f"no profile serves schedulerName {p.scheduler_name!r}",
            )
    pending = [p for p in members if p.uid not in out]
    if not pending:
        return [out[p.uid] for p in members]  # a retry of a group placed whole: no cycle
    gate = pre_enqueue(members[0].pod_group, pg, len(pending) + already)
    if gate or pg is None:
        result.outcome, result.message = GroupOutcome.GATED, gate
        for p in pending:
            out[p.uid] = _failed(p, key, result, gate)
        return [out[p.uid] for p in members]
    err = validate_pod_group(pg, pending, [r.pod for r in index.scheduled(key)], env.frameworks)
    if err:
        _finish_error(env, pg, pending, result, GroupStatus.error(err), dry_run, out)
        return [out[p.uid] for p in members]
    # skipPodGroupPodSchedule: members being deleted leave the group after its validation
    for p in pending:
        if p.terminating:
            out[p.uid] = _failed(p, key, result, deleting_pod_message(p))
    queued = [p for p in pending if p.uid not in out]
    if not queued:
        return [out[p.uid] for p in members]
    started = time.perf_counter()
    _cycle(env, cursor, pg, queued, already, dry_run, result, out, before_each)
    env.observer.pod_group(
        queued[0].scheduler_name, _RESULTS[result.outcome], time.perf_counter() - started
    )
    return [out[p.uid] for p in members]


def _already_placed(env: CycleEnv, pod: Pod, key: str, result: PodGroupResult) -> Placement:
    rec = env.snapshot.pods[pod.uid]
    return Placement(
        pod.uid, rec.node_name, Outcome.SCHEDULED, message="already placed",
        volume_bindings=env.snapshot.storage.bindings(pod.uid) if pod.volumes else (),
        pod_group=key, group=result,
    )


def _failed(
    pod: Pod, key: str, result: PodGroupResult, message: str, cycle: int = 0,
    nominated: str = "",
) -> Placement:
    return Placement(
        pod.uid, "", Outcome.UNSCHEDULABLE, message=message, cycle=cycle, pod_group=key,
        group=result, nominated_node_name=nominated,
    )


def _cycle(
    env: CycleEnv, cursor: CycleCursor, pg: PodGroup, queued: Sequence[Pod], already: int,
    dry_run: bool, result: PodGroupResult, out: dict[str, Placement],
    before_each: BeforeMember | None,
) -> None:
    """The algorithm, PodGroupPostFilter on a rejection (the members in flight: in_flight.py),
    and each member's answer."""
    flight = InFlight(env, queued)
    try:
        run, status, post = _algorithm(env, cursor, pg, queued, already, dry_run, before_each)
    finally:
        flight.land()
    result.evaluated = len(run.tried)
    if status.code is GroupCode.ERROR:
        _finish_error(env, pg, queued, result, status, dry_run, out, run.tried)
        return
    _record_condition(env, pg, result, status, dry_run)
    key = result.pod_group
    if status.code is GroupCode.SUCCESS:
        result.outcome = GroupOutcome.SCHEDULED
        result.scheduled = sum(p.outcome is Outcome.SCHEDULED for p in run.tried)
        for p in run.tried:  # made for this cycle and not yet handed out: set in place
            p.pod_group, p.group = key, result
            out[p.pod_uid] = p
        return
    _submit_rejected(
        env, queued, result, status, post, run.tried, dry_run, out, run.status.message()
    )


def _algorithm(
    env: CycleEnv, cursor: CycleCursor, pg: PodGroup, queued: Sequence[Pod], already: int,
    dry_run: bool, before_each: BeforeMember | None,
) -> tuple[GroupRun, GroupStatus, PostFilterOutcome | None]:
    """runRootSchedulingAlgorithm (a rejected group taken back), then PodGroupPostFilter."""
    log = AssumeLog()
    try:
        run = run_group_algorithm(env, cursor, pg, queued, already, dry_run, log, before_each)
    except BaseException:
        # a MemoryError (or a bug) midway: the members assumed so far are taken back, so a
        # dry run leaves the snapshot as it was and a group is never left half placed
        log.revert(env.snapshot)
        env.batches.invalidate()
        raise
    status = run.status
    if status.code is not GroupCode.SUCCESS or dry_run:
        if log.revert(env.snapshot):
            env.batches.invalidate()  # cached verdicts counted the members taken back
    post: PostFilterOutcome | None = None
    if status.code is GroupCode.UNSCHEDULABLE:
        post = run_pod_group_post_filter(
            env, pg, queued, run.dra_state,
            lambda: rerun_group_algorithm(env, cursor, pg, queued, already, dry_run),
        )
        status = post.apply(status)
    return run, status, post


def _submit_rejected(
    env: CycleEnv, queued: Sequence[Pod], result: PodGroupResult, status: GroupStatus,
    post: PostFilterOutcome | None, tried: Sequence[Placement], dry_run: bool,
    out: dict[str, Placement], untried_msg: str,
) -> None:
    """submitPodGroupAlgorithmResult for a rejected group: a member that fit is told the
    group's status (behind errPodGroupUnschedulable unless the group waits on preemption),
    one that did not keeps its own FitError, one never tried gets the algorithm's status
    (`untried_msg`: completePodGroupAlgorithmResult clones it before PodGroupPostFilter
    appends its message to the group's)."""
    key = result.pod_group
    waiting = post is not None and post.waiting
    nominations = post.nominations if post is not None and waiting else {}
    result.outcome = GroupOutcome.WAITING_ON_PREEMPTION if waiting else GroupOutcome.UNSCHEDULABLE
    if post is not None:
        result.victims = post.victims
    group_msg = status.message()
    by_uid = {t.pod_uid: t for t in tried}
    for pod in queued:
        t = by_uid.get(pod.uid)
        node = nominations.get(pod.uid, "")
        if t is None:
            out[pod.uid] = _failed(pod, key, result, untried_msg, nominated=node)
        elif t.outcome is Outcome.SCHEDULED:
            msg = group_msg if waiting else f"{ERR_POD_GROUP_UNSCHEDULABLE}, {group_msg}"
            out[pod.uid] = _failed(pod, key, result, msg, t.cycle, node)
        else:
            out[pod.uid] = dataclasses.replace(
                t, pod_group=key, group=result, nominated_node_name=node
            )
    if not dry_run:
        # FailureHandler's nominating info: a fitting member of a group not waiting is
        # failed with clearNominatedNode; one that did not fit, or was never tried, with none
        # (its nomination stays); waiting, each member the preemption nominated
        fitted = {t.pod_uid for t in tried if t.outcome is Outcome.SCHEDULED}
        _nominate(env, queued, nominations, set() if waiting else fitted)


def _finish_error(
    env: CycleEnv, pg: PodGroup, queued: Sequence[Pod], result: PodGroupResult,
    status: GroupStatus, dry_run: bool, out: dict[str, Placement],
    tried: Sequence[Placement] = (),
) -> None:
    """A SchedulerError: every member fails with the group's error, or its own."""
    result.outcome, result.evaluated = GroupOutcome.ERROR, len(tried)
    _record_condition(env, pg, result, status, dry_run)
    own = {p.pod_uid: p for p in tried if p.error}
    for pod in queued:
        mine = own.get(pod.uid)
        out[pod.uid] = (
            dataclasses.replace(mine, pod_group=result.pod_group, group=result)
            if mine is not None else _failed(pod, result.pod_group, result, status.message())
        )
    if not dry_run:
        _nominate(env, queued, {}, {p.uid for p in queued})  # clearNominatedNode for all


def _record_condition(
    env: CycleEnv, pg: PodGroup, result: PodGroupResult, status: GroupStatus, dry_run: bool
) -> None:
    """The condition kube would patch; kept on the snapshot's PodGroup (as kube's informer
    brings the patch back) unless dry_run."""
    result.message = status.message()
    cond = condition_to_write(pg, status)
    result.condition = cond
    if cond is None or dry_run:
        return
    kept = tuple(c for c in pg.conditions if c.type != cond.type) + (cond,)
    env.snapshot.pod_groups[pg.key] = dataclasses.replace(pg, conditions=kept)


def _nominate(
    env: CycleEnv, queued: Sequence[Pod], nominations: dict[str, str], cleared: set[str]
) -> None:
    """kube's FailureHandler nominating info for each member: `nominations` (member uid ->
    node, ModeOverride) set, the nominations of `cleared` dropped (clearNominatedNode), the
    others left as they are (no nominating info)."""
    snap = env.snapshot
    changed = False
    for pod in queued:
        node = nominations.get(pod.uid, "")
        if node:
            snap.add_nominated(
                dataclasses.replace(pod, node_name="", nominated_node_name=node, shape=None)
            )
            changed = True
        elif pod.uid in cleared and pod.uid in snap.nominated:
            snap.remove_pod(pod.uid)
            changed = True
    if changed:
        env.batches.invalidate()  # nominations change other pods' filters
