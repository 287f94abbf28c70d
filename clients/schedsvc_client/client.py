"""A typed client for schedsvc.v1 that survives server restarts.

The server keeps each cluster's snapshot in memory only; the client is the source of truth. So
this client remembers the desired state it pushed (nodes, namespaces, bound and nominated pods)
and the placements it was given, and when the server comes back with a new `epoch` (a restart)
or refuses a patch with FAILED_PRECONDITION, it replays that state with `replace=true` and sends
the request again. That is safe because Schedule is idempotent per pod uid: a pod already placed
comes back "already placed" and is never assumed twice.

A replay that needs more than one message is a staged replace (UpdateSnapshotRequest.stage):
the server builds it aside and swaps it in at its commit, refusing Schedule on the cluster
meanwhile, so no thread of this client is ever placed against nodes without their pods. A
placement answered from a state that a replace has since superseded (made before the replay
committed, or by the server incarnation before a restart) is not trusted: its pods are sent
again.

One client instance owns one cluster's state: two instances replaying the same cluster would
overwrite each other's snapshot.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from types import TracebackType
from typing import Any

import grpc

from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc

from .desired_state import OBJECT_FIELDS, DesiredState, replay_chunks
from .retry import RETRYABLE, ResyncError, RetryPolicy, call_with_retry
from .stream_source import BatchSource
from .tls import tls_credentials

__all__ = ["SchedClient", "RetryPolicy", "ResyncError", "tls_credentials", "NOT_ATTEMPTED"]

NOT_ATTEMPTED = "not attempted: deadline exceeded"


class SchedClient:
    """Typed, retrying, resyncing access to one cluster of a schedsvc server. Thread-safe."""

    def __init__(
        self,
        target: str,
        *,
        credentials: grpc.ChannelCredentials | None = None,
        token: str | None = None,
        cluster: str = "default",
        retry: RetryPolicy | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        self.target = target
        self.cluster = cluster
        self.retry = retry or RetryPolicy()
        self._channel = (
            grpc.secure_channel(target, credentials, options=list(options))
            if credentials is not None
            else grpc.insecure_channel(target, options=list(options))
        )
        self._stub = pb_grpc.ScheduleServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token else ()
        )
        self._state = DesiredState()
        self._lock = threading.RLock()  # guards _state and _epoch; held across a replay
        self._epoch = ""  # the server incarnation our state lives in ("" = not known yet)
        # (epoch, generation) of the last replace we made: an answer of that epoch with a lower
        # generation came from the state it replaced, whose placements are gone
        self._floor: tuple[str, int] = ("", 0)
        self.resyncs = 0  # how many times the state was replayed (for callers and tests)

    def __enter__(self) -> SchedClient:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._channel.close()

    @property
    def epoch(self) -> str:
        return self._epoch

    def desired_pods(self) -> dict[str, pb.Pod]:
        """The pods this client believes are on the cluster: pushed, or placed for it."""
        with self._lock:
            return dict(self._state.pods)

    # ---- retries --------------------------------------------------------------------------
    def _call(self, fn: Any, request: Any, deadline: float, timeout: float | None) -> Any:
        """One RPC with backoff on UNAVAILABLE / RESOURCE_EXHAUSTED until `deadline`."""
        return call_with_retry(
            fn, request, policy=self.retry, deadline=deadline, timeout=timeout,
            metadata=self._metadata,
        )

    def _deadline(self) -> float:
        return time.monotonic() + self.retry.budget_seconds

    # ---- snapshot ---------------------------------------------------------------------------
    def update_snapshot(
        self,
        *,
        replace: bool = False,
        upsert_nodes: Iterable[pb.Node] = (),
        remove_nodes: Iterable[str] = (),
        upsert_pods: Iterable[pb.Pod] = (),
        remove_pods: Iterable[str] = (),
        upsert_namespaces: Iterable[pb.Namespace] = (),
        expected_generation: int = 0,
        timeout: float | None = None,
        upsert_pod_disruption_budgets: Iterable[pb.PodDisruptionBudget] = (),
        remove_pod_disruption_budgets: Iterable[str] = (),
        **storage: Iterable[Any],
    ) -> pb.UpdateSnapshotResponse:
        """Push a change and remember it. A patch carries the epoch it was meant for; if the
        server restarted since, the whole desired state (this change included) is replayed.
        `storage`: the request's storage lists by name (upsert_persistent_volumes=...,
        remove_persistent_volume_claims=..., as KubeCluster.storage_lists() gives them), and
        its PodGroup and Workload lists (upsert_pod_groups=..., remove_workloads=...)."""
        unknown = set(storage) - set(OBJECT_FIELDS)
        if unknown:
            raise TypeError(f"update_snapshot() got unknown object lists {sorted(unknown)}")
        req = pb.UpdateSnapshotRequest(
            cluster=self.cluster, replace=replace, upsert_nodes=upsert_nodes,
            remove_nodes=remove_nodes, upsert_pods=upsert_pods, remove_pods=remove_pods,
            upsert_namespaces=upsert_namespaces, expected_generation=expected_generation,
            upsert_pod_disruption_budgets=upsert_pod_disruption_budgets,
            remove_pod_disruption_budgets=remove_pod_disruption_budgets,
        )
        for name, items in storage.items():
            getattr(req, name).extend(items)
        deadline = self._deadline()
        with self._lock:
            desired = self._state.copy()
            desired.apply(req)
            if not replace:
                req.expected_epoch = self._epoch
            try:
                resp: pb.UpdateSnapshotResponse = self._call(
                    self._stub.UpdateSnapshot, req, deadline, timeout
                )
            except grpc.RpcError as err:
                code = err.code()
                # our own epoch guard tripped (the user set no generation): the server restarted
                if code != grpc.StatusCode.FAILED_PRECONDITION or expected_generation:
                    raise
                resp = self._replay(desired, deadline, timeout)
            self._state = desired
            self._epoch = resp.epoch
            if replace:
                self._floor = (resp.epoch, resp.generation)
            return resp

    def resync(self, timeout: float | None = None) -> pb.UpdateSnapshotResponse:
        """Replay the whole desired state with replace=true (after a restart, or on demand)."""
        with self._lock:
            return self._replay(self._state, self._deadline(), timeout)

    def _replay(
        self, state: DesiredState, deadline: float, timeout: float | None
    ) -> pb.UpdateSnapshotResponse:
        """Send `state` in chunks: the first replaces, the rest patch within the same epoch. A
        restart between chunks (FAILED_PRECONDITION on a later chunk's epoch) starts the replay
        over from scratch, up to `max_resyncs` times within the call's budget; beyond it,
        ResyncError."""
        restarts = 0
        while True:
            try:
                resp = self._replay_once(state, deadline, timeout)
            except grpc.RpcError as err:
                if err.code() != grpc.StatusCode.FAILED_PRECONDITION:
                    raise
                if restarts >= self.retry.max_resyncs or time.monotonic() >= deadline:
                    raise ResyncError(
                        f"the server restarted during each of {restarts + 1} replays; "
                        "giving up"
                    ) from err
                restarts += 1
                continue
            self._epoch = resp.epoch
            self._floor = (resp.epoch, resp.generation)
            self.resyncs += 1
            return resp

    def _replay_once(
        self, state: DesiredState, deadline: float, timeout: float | None
    ) -> pb.UpdateSnapshotResponse:
        """One replay: a plain replace when it fits one message, else a staged replace whose
        chunks (namespaces and budgets, then nodes, then their pods) the server swaps in at
        once. A restart or a lost staged state mid-way fails a chunk (FAILED_PRECONDITION),
        never silently."""
        chunks = replay_chunks(state, self.retry.replay_chunk)
        staged = len(chunks) > 1
        resp: pb.UpdateSnapshotResponse | None = None
        for k, req in enumerate(chunks):
            req.cluster = self.cluster
            if resp is None:
                req.replace = True
            else:
                req.expected_epoch = resp.epoch
                req.staged_replace = resp.staged_replace
            if staged:
                req.stage = True
                req.commit = k == len(chunks) - 1
            resp = self._call(self._stub.UpdateSnapshot, req, deadline, timeout)
        assert resp is not None  # there is always a first chunk
        return resp

    def _resync_if(
        self, seen_epoch: str, seen_resyncs: int, deadline: float, timeout: float | None,
        seen_floor: tuple[str, int] | None = None,
    ) -> None:
        """Replay unless another thread already did (or, given `seen_floor`, unless any
        replace of ours was made) since the failed call was sent."""
        with self._lock:
            if self._epoch == seen_epoch and self.resyncs == seen_resyncs and (
                seen_floor is None or self._floor == seen_floor
            ):
                self._replay(self._state, deadline, timeout)

    def _superseded(self, resp: pb.ScheduleResponse) -> bool:
        """Whether `resp` came from a state that is gone: another server incarnation than the
        one our state lives in, or the state before our last replace (call under the lock)."""
        if self._epoch and resp.epoch != self._epoch:
            return True
        return resp.epoch == self._floor[0] and resp.generation < self._floor[1]

    def _record(
        self, pods: Sequence[pb.Pod], placements: Sequence[pb.Placement],
        resp: pb.ScheduleResponse,
    ) -> bool:
        """Remember placed pods as bound, so a replay after a restart puts them back; False
        (nothing remembered) when the answer came from a superseded state: send them again."""
        with self._lock:
            if self._superseded(resp):
                return False
            for pod, pl in zip(pods, placements, strict=True):
                if pl.outcome == pb.Placement.SCHEDULED and pl.node_name:
                    self._state.bind(pod, pl.node_name)
            return True

    # ---- scheduling ---------------------------------------------------------------------------
    def schedule(
        self, pods: Sequence[pb.Pod], dry_run: bool = False, timeout: float | None = None,
        pod_groups: list[pb.PodGroupResult] | None = None,
    ) -> list[pb.Placement]:
        """One placement per pod, in order. Retries UNAVAILABLE and RESOURCE_EXHAUSTED with
        backoff, re-sends pods the server did not reach before a deadline, and replays the
        snapshot when the server restarted (new epoch) or refused with FAILED_PRECONDITION.
        `pod_groups` gets one result per pod group (GenericWorkload), the last answer's."""
        groups: dict[str, pb.PodGroupResult] = {}
        pods = list(pods)
        out: list[pb.Placement | None] = [None] * len(pods)
        todo = list(range(len(pods)))
        deadline = self._deadline()
        resyncs = 0
        while todo:
            batch = [pods[i] for i in todo]
            req = pb.ScheduleRequest(cluster=self.cluster, pods=batch, dry_run=dry_run)
            seen, seen_resyncs, seen_floor = self._epoch, self.resyncs, self._floor
            try:
                resp: pb.ScheduleResponse = self._call(self._stub.Schedule, req, deadline, timeout)
            except grpc.RpcError as err:
                code = err.code()
                if code == grpc.StatusCode.FAILED_PRECONDITION:
                    # a restart noticed, or a replace (maybe our own replay) not yet committed
                    resyncs = self._count_resync(resyncs)
                    self._resync_if(seen, seen_resyncs, deadline, timeout)
                    continue
                if code == grpc.StatusCode.DEADLINE_EXCEEDED and time.monotonic() < deadline:
                    continue  # our per-attempt timeout: what was placed comes back on retry
                raise
            if seen and resp.epoch != seen:
                # a restarted server answered from an empty or stale cluster: replay, resend
                resyncs = self._count_resync(resyncs)
                self._resync_if(seen, seen_resyncs, deadline, timeout)
                continue
            if not seen:
                with self._lock:
                    self._epoch = self._epoch or resp.epoch
            attempted = [
                (i, pl) for i, pl in zip(todo, resp.placements, strict=True)
                if pl.outcome != pb.Placement.OUTCOME_UNSPECIFIED
            ]
            if not dry_run and not self._record(
                [pods[i] for i, _ in attempted], [pl for _, pl in attempted], resp
            ):
                # placed on a state since replaced; or, when no replace of ours came since,
                # below our floor all the same: the cluster was deleted and made afresh (its
                # generations start again), so our state is gone from it: replay it
                resyncs = self._count_resync(resyncs)
                self._resync_if(seen, seen_resyncs, deadline, timeout, seen_floor)
                continue
            for i, pl in attempted:
                out[i] = pl
            for g in resp.pod_groups:
                if g.outcome or g.pod_group not in groups:
                    groups[g.pod_group] = g
            todo = [i for i in todo if out[i] is None]
            if todo and time.monotonic() >= deadline:
                break
        if pod_groups is not None:
            pod_groups.extend(groups.values())
        return [pl if pl is not None else pb.Placement(pod_uid=pods[i].uid, message=NOT_ATTEMPTED)
                for i, pl in enumerate(out)]

    def _count_resync(self, n: int) -> int:
        if n >= self.retry.max_resyncs:
            raise ResyncError(f"server changed {n} times during one call; giving up")
        return n + 1

    def schedule_stream(
        self, batches: Iterable[Sequence[pb.Pod]], dry_run: bool = False
    ) -> Iterator[list[pb.Placement]]:
        """Schedule batches over one stream, yielding each batch's placements in order. If the
        stream breaks (UNAVAILABLE) or the server restarted, the unanswered batches are sent
        again (idempotent per uid) through `schedule`, and streaming resumes after them."""
        source = BatchSource(batches)

        def request(b: list[pb.Pod]) -> pb.ScheduleRequest:
            return pb.ScheduleRequest(cluster=self.cluster, pods=b, dry_run=dry_run)

        while True:
            seen = self._epoch
            pending: deque[list[pb.Pod]] = deque()
            dead = threading.Event()
            call = self._stub.ScheduleStream(
                source.requests(pending, dead, request), metadata=self._metadata
            )
            broken = False
            try:
                for resp in call:
                    if seen and resp.epoch != seen:
                        broken = True  # the batch stays pending and is re-sent below
                        break
                    b = pending.popleft()
                    if not seen:
                        with self._lock:
                            self._epoch = seen = self._epoch or resp.epoch
                    placements = list(resp.placements)
                    if any(
                        p.outcome == pb.Placement.OUTCOME_UNSPECIFIED for p in placements
                    ) or (not dry_run and not self._record(b, placements, resp)):
                        placements = self.schedule(b, dry_run=dry_run)
                    yield placements
            except grpc.RpcError as err:
                code = err.code()
                if code not in (*RETRYABLE, grpc.StatusCode.FAILED_PRECONDITION):
                    raise
                broken = True
            finally:
                dead.set()
                call.cancel()
            if not broken:
                return
            left = source.unanswered(pending)
            # answer what the broken stream left unanswered, in order, then stream the rest
            for b in left:
                yield self.schedule(b, dry_run=dry_run)
            if source.exhausted.is_set():
                return

    def explain(self, pod: pb.Pod, timeout: float | None = None) -> pb.ExplainResponse:
        """Every node's verdict for `pod`; nothing assumed. Retried like schedule."""
        req = pb.ExplainRequest(cluster=self.cluster, pod=pod)
        return self._ask(self._stub.Explain, req, timeout)  # type: ignore[no-any-return]

    def simulate(
        self, steps: Iterable[pb.SimulationStep], timeout: float | None = None
    ) -> pb.SimulateResponse:
        """The steps on a fork of the cluster (unchanged): one result per completed step.
        Retried like explain; a new epoch needs no resync (a simulation keeps no state)."""
        req = pb.SimulateRequest(cluster=self.cluster, steps=steps)
        return self._ask(self._stub.Simulate, req, timeout)  # type: ignore[no-any-return]

    def _ask(self, fn: Any, req: Any, timeout: float | None) -> Any:
        """A read, retried; refused while our replay's staged replace is open, asked again."""
        deadline = self._deadline()
        for attempt in range(self.retry.max_resyncs + 1):
            try:
                return self._call(fn, req, deadline, timeout)
            except grpc.RpcError as err:
                if err.code() != grpc.StatusCode.FAILED_PRECONDITION or (
                    attempt == self.retry.max_resyncs or time.monotonic() >= deadline
                ):
                    raise
                with self._lock:  # a replay of ours holds it until its commit
                    pass
                time.sleep(min(self.retry.max_backoff, 0.05 * 2**attempt))
        raise AssertionError("unreachable")
