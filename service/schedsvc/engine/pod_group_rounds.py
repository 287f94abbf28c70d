"""A pod group's members placed in rounds (engine/run_rounds.py): what their own cycles would
decide, without a cycle each.

Members sent as equal messages but for uid and name share a shape token (the server's
conversion cache). Once a member was placed from a complete WindowCache, the members after it
of the same shape are the next pods of its run: each one's cycle would be a hint, standing for
the sampled cycle over its window. The rounds make those choices at once, and each member gets
the placement its hinted cycle would report (batched, its cycle number, its score, one node
evaluated and feasible), is assumed into the group's AssumeLog (so a group that fails is taken
back whole, as after member by member), and its attempt is told to the observer with the
events a hinted cycle records (the round's time shared among its members).

The rounds stop at the first member that is not such a pod (another shape, a uid held or seen
before, a nominated node, being deleted) or when no node is left for the next one: that member
goes through its own cycle, which says why."""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..model import Outcome, Pod
from .assume_log import AssumeLog
from .batching.batch_types import BatchAttempt
from .batching.window_cache import WindowCache
from .cycle_context import CycleCursor, CycleRecord
from .cycle_env import CycleEnv
from .observer import NULL_OBSERVER
from .run_rounds import Round, start_rounds
from .runtime import Framework
from .schedule_one import Placement

__all__ = ["members_in_rounds"]

# the events of a hinted cycle, in order: GetNodeHint's attempt, StoreScheduleResults' use
_HINTED = (BatchAttempt.HINT, BatchAttempt.HINT_USED)


def members_in_rounds(
    env: CycleEnv, cursor: CycleCursor, members: Sequence[Pod], start: int, log: AssumeLog
) -> list[Placement]:
    """The placements of the members from `start` on, as many as the rounds place after the
    member last placed (cursor.last_info), each assumed into `log`; [] when its run cannot
    continue or members[start] cannot join it (module docstring)."""
    info = cursor.last_info
    if info is None or info.pod.shape is None or not _joins(env, info.pod, members[start]):
        return []
    fw = env.frameworks[info.pod.scheduler_name]
    _, to_find = env.sampling[fw.name]
    if not _worth_a_round(env.batch[fw.name].state, to_find):
        return []
    run = start_rounds(env, cursor, fw)
    if run is None:
        return []
    snap = env.snapshot
    out: list[Placement] = []
    seen: set[str] = set()
    try:
        while _worth_a_round(run.st, to_find):
            began = time.perf_counter()
            # a round takes at most one pod per window of a lap
            most = _joining(
                env, info.pod, members, start + len(out), run.st.nlive // to_find + 1, seen
            )
            if most == 0:
                break
            rnd = run.picks(most)
            if len(rnd.rows) == 0:
                break
            at = start + len(out)
            pods = members[at:at + len(rnd.rows)]
            first_cycle = cursor.cycle + 1

            def record(rows: list[int], pods: Sequence[Pod] = pods) -> None:
                snap.add_records(pods, [snap.node(r).name for r in rows], rows, info)
                for pod in pods:
                    log.assumed(pod.uid)

            rescored = run.take(rnd, record)
            seen.update(pod.uid for pod in pods)
            cursor.last_info = snap.pods[pods[-1].uid].info
            _observe(env, fw, pods, first_cycle, began, rescored)
            out += _placements(env, rnd, pods, first_cycle)
    except BaseException:
        run.abandon()
        raise
    run.end()
    return out


def _worth_a_round(st: object, to_find: int) -> bool:
    """Whether the run's cache holds two windows of feasible nodes: a round then places at
    least two members; with fewer, each round would place one, at more than a hint's cost."""
    return isinstance(st, WindowCache) and not st.pending and st.nlive >= 2 * to_find


def _joins(env: CycleEnv, last: Pod, pod: Pod) -> bool:
    """Whether `pod` is a pod of the run of `last` (module docstring)."""
    return not (
        pod.shape is not last.shape or pod.nominated_node_name or pod.terminating
        or pod.uid in env.snapshot.pods
    )


def _joining(
    env: CycleEnv, last: Pod, members: Sequence[Pod], start: int, most: int, seen: set[str]
) -> int:
    """How many members from `start` on (at most `most`) are pods of the run of `last`,
    none sent twice (`seen`: the uids the rounds placed so far)."""
    here: set[str] = set()
    for pod in members[start:start + most]:
        if not _joins(env, last, pod) or pod.uid in seen or pod.uid in here:
            break
        here.add(pod.uid)
    return len(here)


def _placements(
    env: CycleEnv, rnd: Round, pods: Sequence[Pod], first_cycle: int
) -> list[Placement]:
    """What each member's hinted cycle reports (schedule_one: a hint evaluates one node)."""
    node = env.snapshot.node
    return [
        Placement(pod.uid, node(row).name, Outcome.SCHEDULED, batched=True, cycle=first_cycle + j,
                  score=score, nodes_evaluated=1, nodes_feasible=1)
        for j, (pod, row, score) in enumerate(
            zip(pods, rnd.rows.tolist(), rnd.scores, strict=True)
        )
    ]


def _observe(
    env: CycleEnv, fw: Framework, pods: Sequence[Pod], first_cycle: int, began: float,
    rescored: list[bool],
) -> None:
    """Each member's attempt, as its hinted cycle records it, the round's time shared.
    `rescored`: per member, whether its hint's recheck of the pick before it runs PreScore
    and Score (Rounds.take), which its record reports, or the profile's observer directly
    where cycles keep no record (a fork's)."""
    if not env.records:
        if fw.observer is not NULL_OBSERVER and any(rescored):
            share = (time.perf_counter() - began) / len(pods)
            for j in range(len(pods)):
                if rescored[j]:
                    fw.observer.extension_point(fw.name, "PreScore", "Success", share / 2)
                    fw.observer.extension_point(fw.name, "Score", "Success", share / 2)
        return
    profile = fw.name
    ended = time.perf_counter()
    share = (ended - began) / len(pods)
    for j, pod in enumerate(pods):
        at = began + j * share
        rec = CycleRecord(profile, pod.uid, at)
        if rescored[j]:
            rec.points = [("PreScore", "Success", share / 2, at + share / 2),
                          ("Score", "Success", share / 2, at + share)]
        rec.events = [("batch_attempt", profile, e) for e in _HINTED]
        rec.hint = (True, share, at + share)
        rec.result, rec.seconds = "scheduled", share
        rec.outcome, rec.cycle, rec.batched = Outcome.SCHEDULED.name, first_cycle + j, True
        rec.nodes_evaluated = rec.nodes_feasible = 1
        env.observer.cycle(rec)
