"""Per-cluster state (kube's scheduler.go and its cache): the snapshot, the cycle cursor, the
batch state per profile, the lock; snapshot updates; the engine holding every cluster.

One `Cluster` per named cluster. Every operation on it runs under its lock, so the snapshot is
immutable for the duration of a cycle; different clusters run in parallel. The cycle itself is
`schedule_one.py` (handed the cursor and a CycleEnv, never the cluster), Explain is
`explain.py`; what an update invalidates in the batch state is `batching/cluster_batches.py`.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..config import SchedulerConfig
from ..errors import FailedPrecondition, ResourceExhausted
from ..framework.podinfo import PodInfo
from ..framework.snapshot import Snapshot
from ..model import Pod
from ..plugins.registry import Registry, in_tree_registry
from .batching import DEFAULT_SERVER_PARKED_BYTES, ClusterBatches, ParkedBudget
from .cycle_context import CycleCursor, CycleEnv
from .explain import Explanation, explain
from .nomination_bound import DEFAULT_MAX_NOMINATED_PODS, check_update
from .observer import NULL_OBSERVER, Observer
from .runtime import Framework
from .schedule_one import Placement, schedule_one
from .staged import STAGED_IDLE_SECONDS, StagedReplace
from .update_apply import apply_update
from .update_check import validate_update
from .update_types import SnapshotUpdate, UpdateResult

__all__ = [
    "SnapshotUpdate",
    "UpdateResult",
    "Cluster",
    "Engine",
]


class Cluster:
    """A named cluster's snapshot and the scheduling state kube keeps beside its cache."""

    def __init__(self, name: str, engine: Engine) -> None:
        self.name = name
        self.engine = engine
        self.snapshot = Snapshot()
        self.lock = threading.Lock()
        self.cursor = CycleCursor(np.random.default_rng(engine.seed))
        self.batches = ClusterBatches(
            engine.frameworks, engine.observer, engine.batching_enabled, engine.parked_budget
        )
        self.staged = StagedReplace(engine.staged_idle_seconds)
        # why the state is no longer whole ("" while it is): an operation ran out of memory
        # halfway through changing it. Nothing but a replace or DeleteCluster is served then,
        # so no answer is ever computed from half an update
        self.damaged = ""

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
        self.batches.updated(upd, dirty, node_rows)
        return UpdateResult(snap.generation, snap.num_nodes, len(snap.pods), self.engine.epoch)

    def _swap_in(self, snap: Snapshot) -> None:
        """A replaced snapshot takes the live one's place (the caller tells the batches)."""
        snap.generation = self.snapshot.generation + 1
        self.snapshot = snap
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
        """What the cycles of one request read (the lock held: the snapshot stays)."""
        e = self.engine
        return CycleEnv(
            self.snapshot, self.batches, e.frameworks, e.observer,
            e.config.percentage_of_nodes_to_score, e.executor, e.config.parallelism,
            e.max_nominated_pods,
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
        self.staged.refuse_if_open(self.name)
        if self.damaged:
            self._refuse_damaged()
        out: list[Placement] = []
        env, cursor = self._env(), self.cursor
        try:
            for p in pods:
                if should_continue is not None and not should_continue():
                    break
                out.append(schedule_one(env, cursor, p, dry_run))
        except MemoryError:
            # a pod's cycle may have stopped inside assume or a nomination; a dry run changes
            # only batch state, which dropping every cached evaluation makes whole again
            if dry_run:
                self.batches.invalidate()
            else:
                self._damage("a Schedule request")
            raise
        return out, self.snapshot.generation

    # ---- explain --------------------------------------------------------------------------------
    def explain(self, pod: Pod) -> Explanation:
        """Every node's verdict; consumes no cycle, assumes nothing, leaves batch state alone."""
        with self.lock:
            self.staged.refuse_if_open(self.name)
            if self.damaged:
                self._refuse_damaged()
            return explain(self._env(), pod)

    # ---- for the server: a batch in slices, and a size hint ----------------------------------
    def run_slice(
        self, pods: Sequence[Pod], dry_run: bool, should_continue: Callable[[], bool],
        *, held: bool, blocking: bool = True,
    ) -> tuple[list[Placement], int] | None:
        """One slice of a batch that may run in several, on different threads: the lock is
        taken unless the batch `held` it since an earlier slice (None, nothing done, when
        `blocking` is false and another request holds it), and stays held after the slice,
        until `end_batch`, so that no other request's work lands inside the batch. An error
        ends the batch: the lock is given back before it propagates. Else as schedule_held."""
        if not held and not self.lock.acquire(blocking):
            return None
        try:
            return self.schedule_held(pods, dry_run, should_continue)
        except BaseException:
            self.lock.release()
            raise

    def end_batch(self) -> None:
        """Give back the lock of a batch run in slices, once, after its last slice."""
        self.lock.release()

    def num_nodes(self) -> int:
        """The live snapshot's nodes, read without the lock: a hint that may be stale."""
        return self.snapshot.num_nodes


class Engine:
    """All clusters of one server: the configuration, the profiles, the worker pool."""

    def __init__(
        self,
        config: SchedulerConfig,
        *,
        seed: int | None = None,
        batching_enabled: bool = True,
        registry: Registry | None = None,
        observer: Observer = NULL_OBSERVER,
        max_clusters: int = 0,
        max_parked_bytes: int = DEFAULT_SERVER_PARKED_BYTES,
        staged_idle_seconds: float = STAGED_IDLE_SECONDS,
        max_nominated_pods: int = DEFAULT_MAX_NOMINATED_PODS,
    ) -> None:
        self.config = config
        self.seed = seed
        self.batching_enabled = batching_enabled
        self.observer = observer
        self.epoch = uuid.uuid4().hex
        self.parked_budget = ParkedBudget(max_parked_bytes)  # shared by every cluster
        registry = registry or in_tree_registry()
        self.frameworks = {p.scheduler_name: Framework(p, registry) for p in config.profiles}
        for fw in self.frameworks.values():
            fw.observer = observer
        self.executor: ThreadPoolExecutor | None = (
            ThreadPoolExecutor(max_workers=config.parallelism, thread_name_prefix="filter")
            if config.parallelism > 1
            else None
        )
        self._clusters: dict[str, Cluster] = {}
        self._lock = threading.Lock()
        self.max_clusters = max_clusters
        self.staged_idle_seconds = staged_idle_seconds
        # per cluster (engine/nomination_bound.py; 0: no bound)
        self.max_nominated_pods = max_nominated_pods

    def cluster(self, name: str) -> Cluster:
        """The named cluster, created empty the first time a request that writes names it.
        Beyond `max_clusters` (0: no bound) a new name is ResourceExhausted."""
        name = name or "default"
        c = self._clusters.get(name)
        if c is None:
            with self._lock:
                c = self._clusters.get(name)
                if c is None:
                    if 0 < self.max_clusters <= len(self._clusters):
                        raise ResourceExhausted(
                            f"the server holds {len(self._clusters)} clusters, its limit "
                            f"(--max-clusters {self.max_clusters}): delete one "
                            "(DeleteCluster) or use an existing one",
                            retry_after_seconds=5.0,
                        )
                    c = Cluster(name, self)
                    self._clusters[name] = c
        return c

    def find(self, name: str) -> Cluster | None:
        """The named cluster if it exists; never creates one."""
        return self._clusters.get(name or "default")

    def reader(self, name: str) -> Cluster:
        """The cluster a read-only request (Explain, dry run) works on: the named one, or, for
        a name the server does not hold, a fresh empty cluster that is not kept, so the answer
        is an empty cluster's and nothing is created."""
        return self.find(name) or Cluster(name or "default", self)

    def delete_cluster(self, name: str) -> bool:
        """Forget a cluster and everything in it; False when there was none. Requests already
        running on it finish on the old state; the next write creates it afresh."""
        with self._lock:
            return self._clusters.pop(name or "default", None) is not None

    def clusters(self) -> dict[str, Cluster]:
        return dict(self._clusters)

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
