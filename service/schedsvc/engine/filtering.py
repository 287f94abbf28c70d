"""The filter stage (kube's findNodesThatPassFilters), deterministic.

Nodes are visited from `start` in the snapshot's fixed order, cut into pieces; pieces run on
the thread pool a wave at a time, and the stage stops after the wave that found enough feasible
nodes. The result is the first `num_to_find` feasible nodes in visiting order (kube's is
whatever its goroutines found first; ours does not depend on timing).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..framework import Code, Rows
from ..framework.podinfo import PodInfo
from ..framework.snapshot import Snapshot
from .runtime import BlockResult, CycleState, Framework, Rejection

__all__ = [
    "Diagnosis",
    "FilterOutcome",
    "find_nodes_that_pass_filters",
    "fit_error",
    "fit_error_message",
    "NominatedPods",
    "filter_block",
]

# A thread hand-off costs more than numpy saves until pieces are very large: on 2 cores at
# 5000 nodes, 2048-row pieces on the pool ran at 1050 pods/s against 2386 inline, and at 15000
# nodes 7500-row pieces at 380 against 937 (a one-off measurement; no script kept). Pieces
# below this size run inline, in visiting order.
THREAD_PIECE_MIN_ROWS = 32768
# Inline pieces when sampling: small enough to stop early, large enough to amortize numpy.
INLINE_PIECE_MIN_ROWS = 1024


@dataclass(slots=True)
class Diagnosis:
    """Why nodes were rejected: per plugin, its rejected rows and each reason's rows."""

    rejections: list[Rejection] = field(default_factory=list)
    pre_filter_msg: str = ""
    # rows not in a PreFilterResult, and the plugins that narrowed
    absent_rows: Rows | None = None
    absent_plugins: tuple[str, ...] = ()

    def reason_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for rej in self.rejections:
            for reason, rows in rej.reasons:
                counts[reason] = counts.get(reason, 0) + len(rows)
        if self.absent_rows is not None and len(self.absent_rows):
            r = absent_reason(self.absent_plugins)
            counts[r] = counts.get(r, 0) + len(self.absent_rows)
        return counts

    def per_row(self) -> dict[int, tuple[str, list[str]]]:
        """row -> (first rejecting plugin, its reasons); for Explain, not the hot path."""
        out: dict[int, tuple[str, list[str]]] = {}
        for rej in self.rejections:
            for r in rej.rows.tolist():
                out[r] = (rej.plugin, [])
            for reason, rows in rej.reasons:
                for r in rows.tolist():
                    out[r][1].append(reason)
        if self.absent_rows is not None:
            reason = absent_reason(self.absent_plugins)
            for r in self.absent_rows.tolist():
                out[r] = (_go_list(list(self.absent_plugins)), [reason])
        return out

    def error_rows(self) -> set[int]:
        """Rows whose status is kube's Error; for Explain."""
        return {r for rej in self.rejections if rej.errors is not None
                for r in rej.errors.tolist()}


def absent_reason(plugins: tuple[str, ...]) -> str:
    return f"node(s) didn't satisfy plugin(s) {_go_list(sorted(plugins))}"


def _go_list(items: list[str]) -> str:
    return "[" + " ".join(items) + "]"


def fit_error_message(num_all_nodes: int, diagnosis: Diagnosis, post_filter_msg: str = "") -> str:
    """kube's FitError.Error(): reasons histogram sorted as strings, "count reason", then the
    PostFilter message if any."""
    return fit_error(num_all_nodes, diagnosis, post_filter_msg)[0]


def fit_error(
    num_all_nodes: int, diagnosis: Diagnosis, post_filter_msg: str = ""
) -> tuple[str, dict[str, int]]:
    """kube's FitError: its message (fit_error_message) and the reasons histogram it counts."""
    counts = diagnosis.reason_counts()
    msg = f"0/{num_all_nodes} nodes are available:"
    if diagnosis.pre_filter_msg:
        msg += f" {diagnosis.pre_filter_msg}."
    else:
        parts = sorted(f"{v} {k}" for k, v in counts.items())
        if parts:
            msg += " " + ", ".join(parts) + "."
    return (f"{msg} {post_filter_msg}" if post_filter_msg else msg), counts


@dataclass(slots=True)
class FilterOutcome:
    feasible: Rows  # in visiting order
    processed: int  # nodes visited (for the round-robin start index)
    diagnosis: Diagnosis
    # kube's error when a Filter returned Error: the first erroring node in visiting order
    error: str = ""


@dataclass(slots=True)
class NominatedPods:
    """Rows holding nominated pods of priority >= the pod's, and kube's two-pass check for
    them (RunFilterPluginsWithNominatedPods): `check(rows)` returns the rows that pass and the
    rejections of those that do not, with the reasons of the pass that failed."""

    rows: Rows
    check: Callable[[Rows], tuple[Rows, list[Rejection]]]



def find_nodes_that_pass_filters(
    fw: Framework,
    cs: CycleState,
    pod: PodInfo,
    snap: Snapshot,
    start: int,
    num_to_find: int,
    executor: ThreadPoolExecutor | None,
    parallelism: int,
    nominated: NominatedPods | None = None,
    stop_on_error: bool = True,
) -> FilterOutcome:
    """Visit nodes from `start`; stop after the wave that found `num_to_find` feasible ones.
    Rows in `nominated.rows` are judged by its two-pass check instead of the plain chain. A
    Filter Error ends the stage at the erroring node (kube cancels the others) unless not
    `stop_on_error` (Explain reports every node); `error` is the first in visiting order.
    """
    diag = Diagnosis()
    order = _narrowed_order(cs, snap, diag)
    n = len(order)
    if n == 0:
        return FilterOutcome(np.zeros(0, dtype=np.intp), 0, diag)
    start %= n
    visit = np.concatenate((order[start:], order[:start])) if start else order
    threaded, bounds, wave = _pieces(n, num_to_find, executor, parallelism, nominated)
    found: list[Rows] = []
    found_count = 0
    processed = 0
    error = ""
    for w in range(0, len(bounds), wave):
        chunk = bounds[w : w + wave]
        blocks = [visit[a:b] for a, b in chunk]
        results: list[BlockResult]
        if threaded and executor is not None and len(blocks) > 1:
            results = list(executor.map(lambda b: filter_block(fw, cs, pod, snap, b, nominated),
                                        blocks))
        else:
            results = [filter_block(fw, cs, pod, snap, b, nominated) for b in blocks]
        for block, res in zip(blocks, results, strict=True):
            feas = block[res.feasible]
            need = num_to_find - found_count
            cut = _visited(block, feas, need)
            if res.error is not None and res.error[0] < cut and not error:
                error = res.error[1]
                if stop_on_error:  # the stage ends at the erroring node
                    _record(diag, res, block[: res.error[0] + 1])
                    return FilterOutcome(
                        np.zeros(0, dtype=np.intp), processed + res.error[0] + 1, diag, error
                    )
            if len(feas) >= need:
                found.append(feas[:need])
                processed += cut
                _record(diag, res, block[:cut])
                return FilterOutcome(np.concatenate(found), processed, diag, error)
            found.append(feas)
            found_count += len(feas)
            processed += len(block)
            _record(diag, res, None)
    feasible = np.concatenate(found) if found else np.zeros(0, dtype=np.intp)
    return FilterOutcome(feasible, processed, diag, error)


def _visited(block: Rows, feas: Rows, need: int) -> int:
    """How many of the block's rows the stage visits: through the `need`-th feasible one."""
    if len(feas) < need:
        return len(block)
    last = feas[need - 1] if need > 0 else block[0]
    return int(np.flatnonzero(block == last)[0]) + 1


def _narrowed_order(cs: CycleState, snap: Snapshot, diag: Diagnosis) -> Rows:
    """The visiting order, less the nodes a PreFilterResult left out (recorded in `diag`)."""
    order = snap.order
    if cs.allowed is None:
        return order
    allowed_rows = np.fromiter(
        (r for n in cs.allowed if (r := snap.row_of(n)) is not None), dtype=np.intp
    )
    mask = np.zeros(snap.capacity, dtype=np.bool_)
    mask[allowed_rows] = True
    diag.absent_rows = order[~mask[order]]
    diag.absent_plugins = tuple(cs.narrowed_by)
    narrowed: Rows = order[mask[order]]
    return narrowed


def _pieces(
    n: int, num_to_find: int, executor: ThreadPoolExecutor | None, parallelism: int,
    nominated: NominatedPods | None,
) -> tuple[bool, list[tuple[int, int]], int]:
    """How the `n` nodes are cut: whether pieces run on the pool, their bounds, and how many
    run per wave."""
    par = max(parallelism, 1)
    # the nominated two-pass check adds pods to the snapshot for a moment: never concurrently
    threaded = (
        executor is not None and par > 1 and nominated is None
        and -(-n // par) >= THREAD_PIECE_MIN_ROWS
    )
    if threaded:
        piece = -(-n // par)
        wave = par
    else:
        # all at once when every node must be visited; else pieces sized to the target
        piece = n if num_to_find >= n else max(INLINE_PIECE_MIN_ROWS, 2 * num_to_find)
        wave = 1
    return threaded, [(i, min(i + piece, n)) for i in range(0, n, piece)], wave


def filter_block(
    fw: Framework, cs: CycleState, pod: PodInfo, snap: Snapshot, block: Rows,
    nominated: NominatedPods | None,
) -> BlockResult:
    """The filter chain over a block; rows with nominated pods go through their two passes."""
    if nominated is None:
        return fw.run_filter(cs, pod, snap, block)
    special = np.isin(block, nominated.rows)
    if not special.any():
        return fw.run_filter(cs, pod, snap, block)
    feasible = np.zeros(len(block), dtype=np.bool_)
    res = fw.run_filter(cs, pod, snap, block[~special])
    feasible[~special] = res.feasible
    ok, rejected = nominated.check(block[special])
    feasible[special] = np.isin(block[special], ok)
    error = res.error
    if error is not None:  # its position in the sub-block, to one in the block
        error = (int(np.flatnonzero(~special)[error[0]]), error[1])
    return BlockResult(feasible, res.rejections + rejected, error)


def _record(diag: Diagnosis, res: BlockResult, kept: Rows | None) -> None:
    """Add a block's rejections to the diagnosis, limited to the rows actually visited."""
    for rej in res.rejections:
        if kept is None:
            diag.rejections.append(rej)
            continue
        keep = np.isin(rej.rows, kept)
        if not keep.any():
            continue
        reasons = [(r, rows[np.isin(rows, kept)]) for r, rows in rej.reasons]
        unres, errs = rej.unresolvable, rej.errors
        diag.rejections.append(
            Rejection(
                rej.plugin, rej.rows[keep], [(r, x) for r, x in reasons if len(x)], rej.code,
                None if unres is None else unres[np.isin(unres, kept)],
                None if errs is None else errs[np.isin(errs, kept)],
            )
        )


def prefilter_rejection(cs: CycleState, snap: Snapshot) -> Diagnosis:
    """Every node rejected by PreFilter with the same status."""
    assert cs.rejected is not None
    msg, plugins, code = cs.rejected
    order = snap.order
    errors = order if code is Code.ERROR else None  # Explain shows the Error on every node
    rej = Rejection(plugins[0], order, [(msg, order)], code or Code.UNRESOLVABLE, None, errors)
    return Diagnosis(rejections=[rej], pre_filter_msg=msg)
