"""One placement, followed call by call (tools/placement_path.py): the modules it enters, and
the calls back into an engine module after it had fully returned from it.

The ceilings are today's counts, so that a change which lengthens a path or adds a return
fails here; lower them when a path gets shorter. The calls back left are listed by name: the
batch state is asked for a hint and then told the result (kube's GetNodeHint and
StoreScheduleResults, two calls into batch.py with the cycle between them), the PreFilter
and the filter stage of a full cycle are two calls into the framework's runtime, and so on.
"""

from __future__ import annotations

import numpy as np
import pytest

from schedsvc.engine.select_host import best_positions, select_host
from tools.placement_path import ENGINE, Path, follow, placement_path

# today's counts before this path was shortened: 41 modules, 19 calls back on the default path
MODULES_BEFORE = 41

# (nodes, hint, pod kind) -> (modules entered at most, the calls back into engine modules)
PATHS: dict[tuple[int, bool, str], tuple[int, list[str]]] = {
    (200, False, "plain"): (40, [
        "schedsvc.engine.batching.batch.hint_used",
        "schedsvc.engine.batching.batch.pod_assumed",
        "schedsvc.engine.batching.run_memo.assumed",
    ]),
    (200, True, "plain"): (33, [
        "schedsvc.engine.runtime.run_score",
        "schedsvc.engine.batching.window_cache.hint",
        "schedsvc.engine.batching.batch.hint_used",
        "schedsvc.engine.batching.batch.pod_assumed",
        "schedsvc.engine.batching.run_memo.assumed",
    ]),
    (200, True, "spread"): (38, [
        "schedsvc.engine.runtime.run_score",
        "schedsvc.engine.batching.window_cache.hint",
        "schedsvc.engine.batching.batch.hint_used",
        "schedsvc.engine.batching.batch.pod_assumed",
        "schedsvc.engine.batching.run_memo.assumed",
    ]),
    (200, False, "unfit"): (36, [
        "schedsvc.engine.runtime.run_filter",
        "schedsvc.engine.batching.batch.store_failure",
        "schedsvc.engine.filtering.fit_error",
    ]),
    (50, True, "plain"): (33, [
        "schedsvc.engine.batching.churn.any_rows",
        "schedsvc.engine.runtime.score_one",
        "schedsvc.engine.batching.score_cache.set_one",
        "schedsvc.engine.batching.churn.nodes_changed",
        "schedsvc.engine.batching.score_cache.pick",
        "schedsvc.engine.batching.batch.hint_used",
        "schedsvc.engine.batching.batch.pod_assumed",
        "schedsvc.engine.batching.run_memo.assumed",
    ]),
}


def _returns(path: Path) -> list[str]:
    return [f"{mod}.{fn}" for mod, fn in path.returns]


@pytest.mark.parametrize(
    ("nodes", "hint", "kind"), list(PATHS),
    ids=["a plain pod's first hint on a sampled cluster",
         "a plain pod hinted after one of its run",
         "a spreading pod hinted after one of its run",
         "a pod no node holds: the FitError path",
         "a plain pod hinted from a ScoreCache (every node scored)"],
)
def test_a_placement_enters_no_more_modules_and_comes_back_to_no_more_than_today(
    nodes: int, hint: bool, kind: str
) -> None:
    ceiling, returns = PATHS[nodes, hint, kind]
    path = placement_path(nodes, hint, kind)
    assert len(path.entered) <= ceiling < MODULES_BEFORE
    assert _returns(path) == returns


def test_the_default_path_runs_through_the_cycle_split_as_kube_splits_it() -> None:
    """The request handler, then the cluster, then schedule_one, schedule_pod and batching's
    hint, in that order; the observer is the last engine module, told once."""
    path = placement_path()
    engine = [m for m in path.entered if m.startswith(ENGINE)]
    assert engine[:4] == [
        "schedsvc.engine.scheduler", "schedsvc.engine.cluster", "schedsvc.engine.staged",
        "schedsvc.engine.schedule_one",
    ]
    order = [engine.index(m) for m in (
        "schedsvc.engine.schedule_one", "schedsvc.engine.schedule_pod",
        "schedsvc.engine.batching.batch", "schedsvc.engine.batching.window_cache",
        "schedsvc.engine.select_host", "schedsvc.engine.batching.cluster_batches",
    )]
    assert order == sorted(order)
    assert engine[-1] == "schedsvc.engine.observer"
    # none of the modules a call back named is the scheduler, the observer or the host draw
    left = {m for m, _ in path.returns}
    assert left.isdisjoint({
        "schedsvc.engine.scheduler", "schedsvc.engine.cluster", "schedsvc.engine.observer",
        "schedsvc.engine.select_host", "schedsvc.engine.runtime",
    })


def test_follow_sees_a_call_back_into_a_module_it_had_left() -> None:
    """The tool itself: two calls in a row into one engine module are one call back."""
    totals = np.array([3, 1, 3], dtype=np.int64)
    rng = np.random.default_rng(0)

    def twice() -> None:
        _, ties = best_positions(totals)
        select_host(ties, rng)

    path = follow(twice)
    assert path.entered == ["schedsvc.engine.select_host"]
    assert path.returns == [("schedsvc.engine.select_host", "select_host")]
