"""Per-cluster state (kube's scheduler.go and its cache): the snapshot, the cycle cursor, the
batch state per profile, the lock; snapshot updates; the entry of a Schedule request.

One `Cluster` per named cluster (the engine holding them all is scheduler.py). Every operation
on it runs under its lock, so the snapshot is immutable for the duration of a cycle; different
clusters run in parallel. The cycle itself is `schedule_one.py` (handed the cursor and a
CycleEnv, never the cluster), Explain is `explain.py`; what an update invalidates in the batch
state is `batching/cluster_batches.py`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Protocol

import numpy as np

from ..config import SchedulerConfig
from ..errors import FailedPrecondition
from ..framework.podinfo import PodInfo
from ..framework.snapshot import Snapshot
from ..model import Pod
from .batching import ClusterBatches, ParkedBudget
from .cycle_context import CycleCursor
from .cycle_env import CycleEnv, sampling_by_profile
from .explain import Explanation, explain
from .explain_group import GroupExplanation, explain_group
from .nomination_bound import check_update
from .observer import NULL_OBSERVER, Observer
from .pod_group_cycle import schedule_pod_group
from .pod_group_order import group_run_end
from .runtime import Framework
from .schedule_one import Placement, schedule_one
from .simulate.fork import ClusterFork
from .simulate.run import run
from .simulate.steps import SimulationResult
from .simulate.steps import Step as SimulationStep
from .staged import StagedReplace
from .update_apply import apply_update
from .update_check import validate_update
from .update_types import SnapshotUpdate, UpdateResult

__all__ = ["Cluster", "EngineSettings"]


class EngineSettings(Protocol):
    """What a cluster reads of the engine holding it (scheduler.Engine)."""

    @property
    def config(self) -> SchedulerConfig: ...
    @property
    def seed(self) -> int | None: ...
    @property
    def epoch(self) -> str: ...
    @property
    def frameworks(self) -> Mapping[str, Framework]: ...
    @property
    def observer(self) -> Observer: ...
    @property
    def batching_enabled(self) -> bool: ...
    @property
    def parked_budget(self) -> ParkedBudget: ...
    @property
    def staged_idle_seconds(self) -> float: ...
    @property
    def executor(self) -> ThreadPoolExecutor | None: ...
    @property
    def max_nominated_pods(self) -> int: ...


class Cluster:
    """A named cluster's snapshot and the scheduling state kube keeps beside its cache."""

    def __init__(self, name: str, engine: EngineSettings) -> None:
        self.name = name
        self.engine = engine
        self.snapshot = Snapshot()
        self.lock = threading.Lock()
        self.cursor = CycleCursor(np.random.default_rng(engine.seed))
        self.batches = ClusterBatches(
            engine.frameworks, engine.observer, engine.batching_enabled, engine.parked_budget
        )
        self.staged = StagedReplace(engine.staged_idle_seconds)
        self._cycle_env = self._env()
        # why the state is no longer whole ("" while it is): an operation ran out of memory
        # halfway through changing it. Nothing but a replace or DeleteCluster is served then,
        # so no answer is ever computed from half an update
        self.damaged = ""
        # GenericWorkload: pods of a PodGroup are scheduled in pod group cycles
        self.generic_workload = any(
            p.features.generic_workload for p in engine.config.profiles
        )

    def _damage(self, what: str) -> None:
        self.damaged = f"{what} ran out of memory halfway through changing it"
        self.batches.invalidate()  # cached evaluations may name the half-changed rows

    def _refuse_damaged(self) -> None:
        raise FailedPrecondition(
            f"cluster {self.name!r} is incomplete: {self.damaged}; resend it whole "
            "(UpdateSnapshot with replace=true) or delete it"
        )

    # ---- snapshot updates -------------------------------------------------------------------
    def update(self, upd: SnapshotUpdate) -> UpdateResult:
        with self.lock:
            self.staged.current()  # drops an idle staged replace (its snapshot's memory)
            snap = self.snapshot
            if self.damaged and not (upd.replace or upd.stage):
                self._refuse_damaged()
            if upd.expected_epoch and upd.expected_epoch != self.engine.epoch:
                raise FailedPrecondition(
                    f"epoch is {self.engine.epoch}, not {upd.expected_epoch}: resync"
                )
            if upd.expected_generation and upd.expected_generation != snap.generation:
                raise FailedPrecondition(
                    f"generation is {snap.generation}, not {upd.expected_generation}: resync"
                )
            if upd.stage:
                return self._stage(upd)
            infos = validate_update(snap, upd)
            check_update(snap, upd, self.engine.max_nominated_pods)
            try:
                res = self._apply(upd, infos)
            except MemoryError:
                # a replace builds its snapshot aside and swaps it in last: until the swap
                # the old one is whole; a patch changes the live one in place
                if not upd.replace or self.snapshot is not snap:
                    self._damage("an update")
                raise
            self.damaged = ""  # a replace that went through: whole again
            return res

    def _apply(self, upd: SnapshotUpdate, infos: dict[str, PodInfo]) -> UpdateResult:
        """The validated update's changes (the lock held): nothing here may fail on input."""
        snap = Snapshot() if upd.replace else self.snapshot
        dirty, node_rows = apply_update(snap, upd, infos)
        if upd.replace:
            # the cluster's whole next state, newer than any staged one still open: that one
            # could only commit an older state over it, and meanwhile keeps the cluster refused
            self.staged.clear()
            self._swap_in(snap)
        elif upd.nodes_changed:
            self._cycle_env = self._env()  # the node count the sampling is worked out from
        self.batches.updated(upd, dirty, node_rows)
        return UpdateResult(snap.generation, snap.num_nodes, len(snap.pods), self.engine.epoch)

    def _swap_in(self, snap: Snapshot) -> None:
        """A replaced snapshot takes the live one's place (the caller tells the batches)."""
        snap.generation = self.snapshot.generation + 1
        self.snapshot = snap
        self._cycle_env = self._env()
        self.cursor.next_start_index = 0

    def _stage(self, upd: SnapshotUpdate) -> UpdateResult:
        """A chunk of a staged replace: built aside, swapped in whole at its commit."""
        staged = self.staged.begin(upd) if upd.replace else self.staged.resume(upd)
        infos = validate_update(staged.snapshot, upd)
        check_update(staged.snapshot, upd, self.engine.max_nominated_pods)
        try:
            apply_update(staged.snapshot, upd, infos)
        except MemoryError:
            self.staged.clear()  # half a chunk: its client starts the staged replace again
            raise
        self.staged.keep(staged)
        snap = staged.snapshot
        if not upd.commit:
            return UpdateResult(
                self.snapshot.generation, snap.num_nodes, len(snap.pods), self.engine.epoch,
                staged.id,
            )
        self.staged.clear()
        self._swap_in(snap)
        self.damaged = ""  # a whole new state
        self.batches.invalidate()
        return UpdateResult(snap.generation, snap.num_nodes, len(snap.pods), self.engine.epoch)

    # ---- scheduling ---------------------------------------------------------------------------
    def _env(self) -> CycleEnv:
        """What the cycles read: built when the snapshot is swapped in (the rest never
        changes), so a request takes it as it is."""
        e, snap = self.engine, self.snapshot
        pct = e.config.percentage_of_nodes_to_score
        return CycleEnv(
            snap, self.batches, e.frameworks, e.observer, pct, e.executor,
            e.config.parallelism, e.max_nominated_pods, self.batches.by_profile(),
            sampling_by_profile(e.frameworks, pct, snap.num_nodes),
            e.observer is not NULL_OBSERVER,
        )

    def schedule(
        self, pods: Sequence[Pod], dry_run: bool = False,
        should_continue: Callable[[], bool] | None = None,
    ) -> tuple[list[Placement], int]:
        """Schedule `pods` in order. `should_continue` is asked before each pod (a caller's
        deadline or cancellation); once it says no, the rest are not attempted and the result
        is the placements of the pods attempted so far, a prefix of `pods`. Pods already
        placed stay assumed: a retry with the same uids returns them as "already placed"."""
        with self.lock:
            return self.schedule_held(pods, dry_run, should_continue)

    def schedule_held(
        self, pods: Sequence[Pod], dry_run: bool = False,
        should_continue: Callable[[], bool] | None = None,
    ) -> tuple[list[Placement], int]:
        """schedule() for a caller that already holds `lock`: a batch scheduled in slices,
        maybe on different threads, keeps the lock from its first pod to its last, so that no
        other request's work lands inside it."""
        if self.staged.open is not None:  # read first: most requests find none open
            self.staged.refuse_if_open(self.name)
        if self.damaged:
            self._refuse_damaged()
        out: list[Placement] = []
        env, cursor = self._cycle_env, self.cursor
        groups = self.generic_workload
        try:
            i, n = 0, len(pods)
            while i < n:
                if should_continue is not None and not should_continue():
                    break
                p = pods[i]
                if groups and p.pod_group:
                    # a pod group cycle takes the group's members that follow one another
                    # (Engine.order_pods gathers a request's): they are placed together or
                    # not at all, so a deadline never splits them
                    j = group_run_end(pods, i)
                    run = pods[i:j]
                    out += (
                        self._dry_run_group(run) if dry_run
                        else schedule_pod_group(env, cursor, run, False)
                    )
                    i = j
                    continue
                out.append(schedule_one(env, cursor, p, dry_run))
                i += 1
        except MemoryError:
            # a pod's cycle may have stopped inside assume or a nomination; a dry run changes
            # only batch state, which dropping every cached evaluation makes whole again
            if dry_run:
                self.batches.invalidate()
            else:
                self._damage("a Schedule request")
            raise
        return out, self.snapshot.generation

    def _dry_run_group(self, members: Sequence[Pod]) -> list[Placement]:
        """A pod group's dry run: its members must be assumed for one another, so the cycle
        runs on a fork (the snapshot, its generation and its columns untouched, as a dry run
        leaves them); the cursor moves as the members' cycles moved it (a dry run's cycles
        count, as a single pod's), and the live batch state, which saw none of them, finds
        the cycle count moved on and starts afresh."""
        f = ClusterFork.of(self.snapshot, self.cursor, self.engine)
        try:
            out = schedule_pod_group(f.env, f.cursor, members, True)
        finally:
            f.discard()
        c = self.cursor
        c.rng, c.cycle, c.next_start_index = f.cursor.rng, f.cursor.cycle, f.cursor.next_start_index
        c.last_info = f.cursor.last_info
        return out

    # ---- explain --------------------------------------------------------------------------------
    def explain(self, pod: Pod) -> Explanation:
        """Every node's verdict; consumes no cycle, assumes nothing, leaves batch state alone."""
        with self.lock:
            self.staged.refuse_if_open(self.name)
            if self.damaged:
                self._refuse_damaged()
            return explain(self._cycle_env, pod)

    def explain_group(self, members: Sequence[Pod]) -> GroupExplanation:
        """A pod group's cycle explained member by member (explain_group.py), on a fork: the
        cluster is as before, its cursor and batch state included. Without GenericWorkload
        there is no group cycle: FailedPrecondition."""
        if not self.generic_workload:
            raise FailedPrecondition(
                "pod_group_members: pod group cycles need --feature-gates GenericWorkload=true"
            )
        with self.fork() as f:
            return explain_group(f, members)

    # ---- simulations ---------------------------------------------------------------------------
    @contextmanager
    def fork(self) -> Iterator[ClusterFork]:
        """A copy-on-write fork of this cluster (engine/simulate/fork.py), for a simulation:
        the lock is held until the block ends, so the cluster cannot move under the fork and
        its requests wait, as behind a Schedule batch. Refused like Schedule while a staged
        replace is open or the state is damaged. Whatever happens in the block (an error, a
        MemoryError, a deadline), the cluster is as before: the fork never wrote it."""
        with self.lock:
            self.staged.refuse_if_open(self.name)
            if self.damaged:
                self._refuse_damaged()
            f = ClusterFork.of(self.snapshot, self.cursor, self.engine)
            try:
                yield f
            finally:
                f.discard()

    def simulate(
        self, steps: Sequence[SimulationStep], should_continue: Callable[[], bool]
    ) -> SimulationResult:
        """The steps on a fork of this cluster (engine/simulate/run.py), the contract in
        engine/simulate/steps.py: a stop, an error or a MemoryError midway drops the fork and
        leaves the cluster as it was, not damaged (nothing of it was written)."""
        with self.fork() as f:
            return run(f, steps, should_continue, self.snapshot.generation)

    # ---- for the server: a batch in slices, and a size hint ----------------------------------
    def run_slice(
        self, pods: Sequence[Pod], dry_run: bool, should_continue: Callable[[], bool],
        *, held: bool, blocking: bool = True, stopped: Callable[[], bool] | None = None,
    ) -> tuple[list[Placement], int] | None:
        """One slice of a batch that may run in several, on different threads: the lock is
        taken unless the batch `held` it since an earlier slice (None, nothing done, when
        `blocking` is false and another request holds it). The batch ends here, the lock given
        back, when the slice attempted every pod it was given, when `stopped` says the no of
        `should_continue` was the caller's (not a slice's budget), or on an error; otherwise
        the lock stays held for the next slice, so that no other request's work lands inside
        the batch. Else as schedule_held."""
        if not held and not self.lock.acquire(blocking):
            return None
        try:
            res = self.schedule_held(pods, dry_run, should_continue)
        except BaseException:
            self.lock.release()
            raise
        if len(res[0]) == len(pods) or (stopped is not None and stopped()):
            self.lock.release()
        return res

    def end_batch(self) -> None:
        """Give back the lock of a batch left between slices (its caller gone)."""
        self.lock.release()

    def num_nodes(self) -> int:
        """The live snapshot's nodes, read without the lock: a hint that may be stale."""
        return self.snapshot.num_nodes
