"""Per-cluster scheduler: the cycle counter, profiles, the lock, assume and forget.

One `Cluster` per named cluster. Every operation on it runs under its lock, so the snapshot is
immutable for the duration of a cycle; different clusters run in parallel.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..config import SchedulerConfig
from ..errors import FailedPrecondition, ResourceExhausted
from ..framework import Rows
from ..framework.affinity_index import pod_has_pod_affinity
from ..framework.podinfo import PodInfo, pod_info
from ..framework.snapshot import PodRecord, Snapshot
from ..model import Namespace, Node, Outcome, Pod, PodDisruptionBudget, with_node
from ..plugins.registry import Registry, in_tree_registry
from .batch import HintResult, OpportunisticBatch
from .filtering import (
    Diagnosis,
    NominatedPods,
    filter_block,
    find_nodes_that_fit,
    fit_error_message,
    num_feasible_nodes_to_find,
    prefilter_rejection,
)
from .observer import NULL_OBSERVER, Observer
from .preemption import Candidate, PreemptionResult, Victim, preempt
from .preemption.nominated import resource_only_two_pass
from .runtime import CycleState, Framework, Rejection
from .select_host import best_positions, select_host
from .update_check import validate_update

NO_NODES_AVAILABLE = "no nodes available to schedule pods"  # kube's ErrNoNodesAvailable

# kube records per-plugin durations in 10% of cycles (pluginMetricsSamplePercent); we take
# every 10th cycle, deterministic and as cheap
PLUGIN_METRICS_SAMPLE_EVERY = 10

__all__ = [
    "Placement",
    "SnapshotUpdate",
    "UpdateResult",
    "NodeExplanation",
    "Explanation",
    "Cluster",
    "Engine",
]


@dataclass(frozen=True, slots=True)
class Placement:
    pod_uid: str
    node_name: str
    outcome: Outcome
    message: str = ""
    reasons: dict[str, int] = field(default_factory=dict)
    batched: bool = False
    cycle: int = 0
    score: int = 0
    nodes_evaluated: int = 0
    nodes_feasible: int = 0
    # DefaultPreemption found room: the node the pod is nominated to, the pods to evict there
    nominated_node_name: str = ""
    victims: tuple[Victim, ...] = ()


@dataclass(frozen=True, slots=True)
class SnapshotUpdate:
    replace: bool = False
    upsert_nodes: Sequence[Node] = ()
    remove_nodes: Sequence[str] = ()
    upsert_pods: Sequence[Pod] = ()
    remove_pods: Sequence[str] = ()
    upsert_namespaces: Sequence[Namespace] = ()
    expected_generation: int = 0
    expected_epoch: str = ""
    upsert_pod_disruption_budgets: Sequence[PodDisruptionBudget] = ()
    remove_pod_disruption_budgets: Sequence[str] = ()  # "namespace/name"


@dataclass(frozen=True, slots=True)
class UpdateResult:
    generation: int
    nodes: int
    pods: int
    epoch: str


@dataclass(frozen=True, slots=True)
class NodeExplanation:
    name: str
    feasible: bool
    plugin: str = ""
    reasons: tuple[str, ...] = ()
    scores: dict[str, tuple[int, int]] = field(default_factory=dict)  # plugin -> (score, weight)
    total: int = 0


@dataclass(frozen=True, slots=True)
class Explanation:
    profile: str
    nodes: tuple[NodeExplanation, ...]
    chosen_node: str
    message: str
    # when nothing fits and the profile preempts: every candidate node, and kube's pick
    candidates: tuple[Candidate, ...] = ()
    nominated_node: str = ""


def _holds_pod_terms(snap: Snapshot, node_name: str) -> bool:
    """Whether a pod on the node has inter-pod (anti-)affinity. Such a pod's terms change other
    pods' filters and scores on every node of a topology domain, not only on its own node."""
    row = snap.index.get(node_name)
    return row is not None and any(
        pod_has_pod_affinity(rec.pod) for rec in snap.pods_on_row[row].values()
    )


class Cluster:
    """A named cluster's snapshot and the scheduling state kube keeps beside its cache."""

    def __init__(self, name: str, engine: Engine) -> None:
        self.name = name
        self.engine = engine
        self.snapshot = Snapshot()
        self.lock = threading.Lock()
        self.cycle = 0
        self.next_start_index = 0
        self.rng = np.random.default_rng(engine.seed)
        self._last_info: PodInfo | None = None  # a run of equal pods shares its PodInfo facts
        self.batches: dict[str, OpportunisticBatch] = {
            n: OpportunisticBatch(fw, engine.observer, engine.batching_enabled)
            for n, fw in engine.frameworks.items()
        }

    # ---- snapshot updates -------------------------------------------------------------------
    def update(self, upd: SnapshotUpdate) -> UpdateResult:
        with self.lock:
            snap = self.snapshot
            if upd.expected_epoch and upd.expected_epoch != self.engine.epoch:
                raise FailedPrecondition(
                    f"epoch is {self.engine.epoch}, not {upd.expected_epoch}: resync"
                )
            if upd.expected_generation and upd.expected_generation != snap.generation:
                raise FailedPrecondition(
                    f"generation is {snap.generation}, not {upd.expected_generation}: resync"
                )
            infos = validate_update(snap, upd)
            # rows whose node or pods change: batch state re-evaluates just those (None: all)
            dirty: set[int] | None = set()
            node_rows: set[int] = set()
            if upd.replace or upd.upsert_namespaces:
                dirty = None
            if upd.replace:
                snap = Snapshot()
            for name in upd.remove_nodes:
                if dirty is not None and _holds_pod_terms(snap, name):
                    dirty = None  # the pods it drops had terms reaching their whole domains
                snap.remove_node(name)
            for ns in upd.upsert_namespaces:
                snap.upsert_namespace(ns)
            # budgets only steer preemption: no filter or score reads them, batch state stays
            for key in upd.remove_pod_disruption_budgets:
                if snap.pdbs.pop(key, None) is not None:
                    snap.generation += 1
            for pdb in upd.upsert_pod_disruption_budgets:
                snap.pdbs[pdb.key] = pdb
                snap.generation += 1
            for node in upd.upsert_nodes:
                if dirty is not None and _holds_pod_terms(snap, node.name):
                    dirty = None  # its labels place those terms' domains
                snap.upsert_node(node)
                if dirty is not None:
                    dirty.add(snap.index[node.name])
                    node_rows.add(snap.index[node.name])
            for uid in upd.remove_pods:
                rec = snap.remove_pod(uid)
                if rec is not None and dirty is not None:
                    if pod_has_pod_affinity(rec.pod):
                        dirty = None  # its terms reach every node of their topology domains
                    elif rec.node_name and rec.node_name in snap.index:
                        dirty.add(snap.index[rec.node_name])
                    elif not rec.node_name:
                        dirty = None  # a nominated pod: other pods' filters may change
            for pod in upd.upsert_pods:
                if pod.uid in snap.nominated:
                    dirty = None  # a nomination goes away: other pods' filters may change
                old = snap.pods.get(pod.uid)
                if pod_has_pod_affinity(pod) or (old is not None and pod_has_pod_affinity(old.pod)):
                    dirty = None  # its terms reach every node of their topology domains
                if old is not None and dirty is not None:
                    dirty.add(snap.index[old.node_name])  # a pod that moves frees its old node
                if pod.node_name:
                    snap.add_pod(pod, pod.node_name, assumed=False, info=infos[pod.uid])
                    if dirty is not None:
                        dirty.add(snap.index[pod.node_name])
                else:
                    snap.add_nominated(pod, infos[pod.uid])
                    dirty = None
            if snap.compact():
                dirty = None  # column numbers and value ids moved: cached states name old ones
            if upd.replace:
                snap.generation = self.snapshot.generation + 1
                self.snapshot = snap
                self.next_start_index = 0
            nodes_changed = bool(upd.upsert_nodes or upd.remove_nodes)
            for b in self.batches.values():
                b.on_snapshot_change(dirty, node_rows, nodes_changed)
            return UpdateResult(snap.generation, snap.num_nodes, len(snap.pods), self.engine.epoch)

    # ---- scheduling ---------------------------------------------------------------------------
    def schedule(
        self, pods: Sequence[Pod], dry_run: bool = False,
        should_continue: Callable[[], bool] | None = None,
    ) -> tuple[list[Placement], int]:
        """Schedule `pods` in order. `should_continue` is asked before each pod (a caller's
        deadline or cancellation); once it says no, the rest are not attempted and the result
        is the placements of the pods attempted so far, a prefix of `pods`. Pods already
        placed stay assumed: a retry with the same uids returns them as "already placed"."""
        with self.lock:
            out: list[Placement] = []
            for p in pods:
                if should_continue is not None and not should_continue():
                    break
                out.append(self._schedule_one(p, dry_run))
            return out, self.snapshot.generation

    def _schedule_one(self, pod: Pod, dry_run: bool) -> Placement:
        """One attempt, framed by the observer's cycle hooks (metrics, a trace span)."""
        obs = self.engine.observer
        obs.cycle_started(pod.scheduler_name, pod.uid)
        try:
            p = self._attempt(pod, dry_run)
        except BaseException:
            obs.cycle_finished(pod.scheduler_name, "ERROR", self.cycle, 0, 0, False)
            raise
        obs.cycle_finished(
            pod.scheduler_name, p.outcome.name, p.cycle, p.nodes_evaluated, p.nodes_feasible,
            p.batched,
        )
        return p

    def _attempt(self, pod: Pod, dry_run: bool) -> Placement:
        snap = self.snapshot
        existing = snap.pods.get(pod.uid)
        if existing is not None:
            # a retried request: the pod is already bound or assumed here; never assume twice
            return Placement(
                pod.uid, existing.node_name, Outcome.SCHEDULED, message="already placed"
            )
        nominated_rec = snap.nominated.get(pod.uid)
        if nominated_rec is not None and not pod.nominated_node_name:
            # a pod we nominated (preemption) sent again: as kube's pod, it carries its
            # nomination, so it tries that node first (and is never batched)
            pod = dataclasses.replace(
                pod, nominated_node_name=nominated_rec.nominated_node_name, shape=None
            )
        self.cycle += 1
        cycle = self.cycle
        fw = self.engine.frameworks.get(pod.scheduler_name)
        if fw is None:
            return Placement(
                pod.uid, "", Outcome.REJECTED, cycle=cycle,
                message=f"no profile serves schedulerName {pod.scheduler_name!r}",
            )
        obs = self.engine.observer
        started = time.perf_counter()
        info = self._last_info = pod_info(pod, self._last_info)
        batch = self.batches[fw.name]
        if pod.uid in snap.nominated and not dry_run:
            # placing it ends its nomination, which other pods' two-pass filters counted
            for b in self.batches.values():
                b.on_snapshot_change(None)
        order = snap.order
        if len(order):
            # a full cycle leaves the index wrapped to the node count (at pct 100 it advances by
            # every node); a hint, standing in for one, must too
            self.next_start_index %= len(order)
        start_row = int(order[self.next_start_index]) if len(order) else 0
        nominated = self._nominated_pods(info)
        # nominated pods change feasibility through a second pass the cache does not model
        hint = (
            batch.get_node_hint(info, snap, cycle, self.rng, start_row)
            if nominated is None
            else HintResult(None)
        )
        if hint.row is not None:
            node = snap.node(hint.row).name
            if not dry_run:
                before = snap.generation
                snap.add_pod(with_node(pod, node), node, assumed=True, info=info)
                batch.assumed(before, snap.generation)
            batch.hint_used(cycle, hint.row, node)
            obs.scheduled(fw.name, "scheduled", time.perf_counter() - started)
            return Placement(
                pod.uid, node, Outcome.SCHEDULED, batched=True, cycle=cycle, score=hint.score,
                nodes_evaluated=1, nodes_feasible=1,
            )

        record = cycle % PLUGIN_METRICS_SAMPLE_EVERY == 0
        num_all = snap.num_nodes
        if num_all == 0:
            batch.store_failure(cycle)
            obs.scheduled(fw.name, "unschedulable", time.perf_counter() - started)
            return Placement(
                pod.uid, "", Outcome.UNSCHEDULABLE, cycle=cycle,
                message=NO_NODES_AVAILABLE,
            )
        cs = fw.run_pre_filter(info, snap, record)
        if cs.rejected is not None:
            diag = prefilter_rejection(cs, snap)
            batch.store_failure(cycle)
            post = self._post_filter(fw, cs, info, diag, nominated, dry_run)
            obs.scheduled(fw.name, "unschedulable", time.perf_counter() - started)
            return self._unschedulable(pod, cycle, num_all, diag, 0, post)

        if pod.nominated_node_name:
            row = snap.row_of(pod.nominated_node_name)
            if row is not None and (cs.allowed is None or pod.nominated_node_name in cs.allowed):
                rows = np.array([row], dtype=np.intp)
                ok = rows[filter_block(fw, cs, info, snap, rows, nominated).feasible]
                if len(ok):
                    row = int(ok[0])
                    batch.store_unscored(cycle, row, snap.node(row).name)
                    return self._place(pod, fw, cycle, row, 0, 1, 1, dry_run, started, info)

        pct = fw.profile.percentage_of_nodes_to_score
        if pct is None:
            pct = self.engine.config.percentage_of_nodes_to_score
        # kube counts the nodes a PreFilterResult left, and wants one node when none scores
        candidates = num_all
        if cs.allowed is not None:
            candidates = sum(1 for name in cs.allowed if name in snap.index)
        to_find = num_feasible_nodes_to_find(candidates, pct) if fw.score else 1
        filter_started = time.perf_counter()
        fo = find_nodes_that_fit(
            fw, cs, info, snap, self.next_start_index, to_find,
            self.engine.executor, self.engine.config.parallelism, nominated,
        )
        obs.extension_point(
            fw.name, "Filter", "Success" if len(fo.feasible) else "Unschedulable",
            time.perf_counter() - filter_started,
        )
        if num_all:
            self.next_start_index = (self.next_start_index + fo.processed) % num_all
        feasible = fo.feasible
        if len(feasible) == 0:
            # a preempting pod is a failed cycle for the batch state too (kube's pod_failed)
            batch.store_failure(cycle)
            post = self._post_filter(fw, cs, info, fo.diagnosis, nominated, dry_run)
            obs.scheduled(fw.name, "unschedulable", time.perf_counter() - started)
            return self._unschedulable(
                pod, cycle, num_all, fo.diagnosis, fo.processed, post
            )
        if len(feasible) == 1:
            row = int(feasible[0])
            batch.store_unscored(cycle, row, snap.node(row).name)
            return self._place(pod, fw, cycle, row, 0, fo.processed, 1, dry_run, started, info)
        sr = fw.run_score(info, snap, feasible, record)
        best, ties = best_positions(sr.totals)
        chosen = int(feasible[select_host(ties, self.rng)])
        if cs.allowed is None and nominated is None:
            batch.store(
                info, cycle, chosen, snap.node(chosen).name, feasible, sr, start_row, cs,
                snap.generation, complete=fo.processed >= num_all,
            )
        else:
            # narrowed pods visit a rotation of their own; nominated pods counted for this pod
            # (by its priority) may not count for the next one: neither cycle serves a hint
            batch.store_unbatchable(cycle, chosen, snap.node(chosen).name)
        return self._place(
            pod, fw, cycle, chosen, best, fo.processed, len(feasible), dry_run, started, info
        )

    def _place(
        self, pod: Pod, fw: Framework, cycle: int, row: int, score: int, evaluated: int,
        feasible: int, dry_run: bool, started: float, info: PodInfo | None = None,
    ) -> Placement:
        snap = self.snapshot
        node = snap.node(row).name
        if not dry_run:
            before = snap.generation
            snap.add_pod(with_node(pod, node), node, assumed=True, info=info)
            self.batches[fw.name].assumed(before, snap.generation)
        self.engine.observer.scheduled(fw.name, "scheduled", time.perf_counter() - started)
        return Placement(
            pod.uid, node, Outcome.SCHEDULED, cycle=cycle, score=score,
            nodes_evaluated=evaluated, nodes_feasible=feasible,
        )

    def _unschedulable(
        self, pod: Pod, cycle: int, num_all: int, diag: Diagnosis, evaluated: int,
        post: PreemptionResult | None = None,
    ) -> Placement:
        msg = fit_error_message(num_all, diag)
        if post is not None and post.message:
            msg += " " + post.message  # FitError.Error() appends the PostFilter message
        return Placement(
            pod.uid, "", Outcome.UNSCHEDULABLE, message=msg,
            reasons=diag.reason_counts(), cycle=cycle, nodes_evaluated=evaluated,
            nominated_node_name=post.nominated_node if post is not None else "",
            victims=post.victims if post is not None else (),
        )

    def _post_filter(
        self, fw: Framework, cs: CycleState, info: PodInfo, diag: Diagnosis,
        nominated: NominatedPods | None, dry_run: bool,
    ) -> PreemptionResult | None:
        """DefaultPreemption, when the profile runs it. Not dry_run: the pod is nominated to
        the chosen node, which the pods after it see through the two-pass filter (kube's
        nominator); the victims stay until the client removes them. An eligible pod with no
        candidate loses an earlier nomination, as kube overrides it with none."""
        args = fw.profile.preemption
        if args is None:
            return None
        snap = self.snapshot
        res = preempt(snap, fw, cs, info, diag, args, nominated, self.rng)
        if dry_run or not res.eligible:
            return res
        if res.nominated_node:
            pod = dataclasses.replace(
                info.pod, node_name="", nominated_node_name=res.nominated_node, shape=None
            )
            snap.add_nominated(pod)
        elif info.uid in snap.nominated:
            snap.remove_pod(info.uid)
        else:
            return res
        for b in self.batches.values():
            b.on_snapshot_change(None)  # a nomination changes other pods' filters
        return res

    def _nominated_pods(self, info: PodInfo) -> NominatedPods | None:
        """Rows holding nominated pods of priority >= the pod's (kube's addGENominatedPods)
        and the two-pass check for them; None when there are none, the common case."""
        snap = self.snapshot
        if not snap.nominated:
            return None
        by_row: dict[int, list[PodRecord]] = {}
        for rec in snap.nominated.values():
            p = rec.pod
            if p.uid == info.uid or p.priority < info.pod.priority:
                continue
            row = snap.row_of(rec.nominated_node_name)
            if row is not None:
                by_row.setdefault(row, []).append(rec)
        if not by_row:
            return None
        fast = resource_only_two_pass(self.engine.frameworks[info.pod.scheduler_name], info, snap)
        return NominatedPods(
            np.fromiter(by_row, dtype=np.intp),
            fast if fast is not None else lambda rows: self._two_pass(info, rows, by_row),
        )

    def _two_pass(
        self, info: PodInfo, rows: Rows, by_row: dict[int, list[PodRecord]]
    ) -> tuple[Rows, list[Rejection]]:
        """kube's RunFilterPluginsWithNominatedPods per row: first with the nominated pods
        added (a failure reports that pass's reasons), then, if they made a difference
        possible, without them. The snapshot is restored exactly, generation included."""
        snap = self.snapshot
        fw = self.engine.frameworks[info.pod.scheduler_name]
        ok: list[int] = []
        rejected: list[Rejection] = []
        for row in rows.tolist():
            node = snap.node(row).name
            one = np.array([row], dtype=np.intp)
            gen = snap.generation
            added: list[PodRecord] = []
            try:
                # temporaries are keyed apart from every uid (NominatedKey), so they cannot
                # replace or remove a pod the client sent
                for rec in by_row[row]:
                    added.append(snap.add_temporary(rec, node))
                cs1 = fw.run_pre_filter(info, snap)
                first = fw.run_filter(cs1, info, snap, one)
            finally:
                for t in added:
                    snap.remove_temporary(t)
                snap.generation = gen
            if not first.feasible[0]:
                rejected.extend(first.rejections)
                continue
            cs2 = fw.run_pre_filter(info, snap)
            second = fw.run_filter(cs2, info, snap, one)
            if not second.feasible[0]:
                rejected.extend(second.rejections)
                continue
            ok.append(row)
        return np.array(ok, dtype=np.intp), rejected

    # ---- explain --------------------------------------------------------------------------------
    def explain(self, pod: Pod) -> Explanation:
        """Every node's verdict; consumes no cycle, assumes nothing, leaves batch state alone."""
        with self.lock:
            snap = self.snapshot
            fw = self.engine.frameworks.get(pod.scheduler_name)
            if fw is None:
                return Explanation(
                    pod.scheduler_name, (), "",
                    f"no profile serves schedulerName {pod.scheduler_name!r}",
                )
            info = pod_info(pod)
            cs = fw.run_pre_filter(info, snap)
            order = snap.order
            nominated = self._nominated_pods(info)
            if cs.rejected is not None:
                diag = prefilter_rejection(cs, snap)
                feasible = np.zeros(0, dtype=np.intp)
            else:
                fo = find_nodes_that_fit(
                    fw, cs, info, snap, 0, len(order), None, 1, nominated
                )
                diag, feasible = fo.diagnosis, fo.feasible
            per_row = diag.per_row()
            scores: dict[int, dict[str, tuple[int, int]]] = {}
            totals: dict[int, int] = {}
            chosen = ""
            if len(feasible) > 1:
                sr = fw.run_score(info, snap, feasible)
                for i, row in enumerate(feasible.tolist()):
                    scores[row] = {
                        name: (int(arr[i]), fw.weights[name]) for name, arr in sr.per_plugin.items()
                    }
                    totals[row] = int(sr.totals[i])
                best = int(sr.totals.max())
                chosen = snap.node(int(feasible[int(np.argmax(sr.totals == best))])).name
            elif len(feasible) == 1:
                chosen = snap.node(int(feasible[0])).name
            nodes = []
            feasible_set = set(feasible.tolist())
            for row in order.tolist():
                name = snap.node(row).name
                if row in feasible_set:
                    nodes.append(
                        NodeExplanation(
                            name, True, scores=scores.get(row, {}), total=totals.get(row, 0)
                        )
                    )
                else:
                    plugin, reasons = per_row.get(row, ("", []))
                    nodes.append(NodeExplanation(name, False, plugin, tuple(reasons)))
            if snap.num_nodes == 0:
                msg = NO_NODES_AVAILABLE
            else:
                msg = "" if len(feasible) else fit_error_message(snap.num_nodes, diag)
            post = None
            if len(feasible) == 0 and snap.num_nodes and fw.profile.preemption is not None:
                post = preempt(
                    snap, fw, cs, info, diag, fw.profile.preemption,
                    None if cs.rejected is not None else nominated, None, all_candidates=True,
                )
                if post.message:
                    msg += " " + post.message
            return Explanation(
                fw.name, tuple(nodes), chosen, msg,
                post.candidates if post is not None else (),
                post.nominated_node if post is not None else "",
            )


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
    ) -> None:
        self.config = config
        self.seed = seed
        self.batching_enabled = batching_enabled
        self.observer = observer
        self.epoch = uuid.uuid4().hex
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
