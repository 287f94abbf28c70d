"""One placement, followed call by call (tools/placement_path.py): the modules it enters, and
the calls back into an engine module after it had fully returned from it.

The ceilings are today's counts, so that a change which lengthens a path or adds a return
fails here; lower them when a path gets shorter. The first hint of a run (the default path,
plain or spreading) comes back to no engine module: the batch state wraps the cycle (hint or
schedule_pod, what is kept, the assume) in one call. The calls back left are listed by name:
a later hint rechecks the last chosen node and then reads its window (two calls into the
WindowCache, the runtime's one-row filter then its score), the PreFilter and the filter stage
of a failing cycle are two calls into the runtime and the FitError reads the filter stage's
Diagnosis, and a ScoreCache's recheck and pick are two calls with the churn read between.
"""

from __future__ import annotations

import numpy as np
import pytest

from schedsvc.engine.select_host import best_positions, select_host
from tools.placement_path import ENGINE, Path, follow, placement_path

# the default path before it was shortened (issue 25): 41 modules, 19 calls back
MODULES_BEFORE = 41

# (nodes, hint, pod kind) -> (modules entered at most, the calls back into engine modules);
# issue 26 added one module to each: VolumeBinding's plugin, in kube's default profile
PATHS: dict[tuple[int, bool, str], tuple[int, list[str]]] = {
    (200, False, "plain"): (37, []),
    (200, False, "spread"): (42, []),
    (200, True, "plain"): (31, [
        "schedsvc.engine.runtime.run_score",
        "schedsvc.engine.batching.window_cache.hint",
    ]),
    (200, True, "spread"): (36, [
        "schedsvc.engine.runtime.run_score",
        "schedsvc.engine.batching.window_cache.hint",
    ]),
    # issue 26: the PreFilters of VolumeRestrictions, NodeVolumeLimits and VolumeZone (Skip
    # for a pod without volumes) are three more modules of kube's default profile
    (200, False, "unfit"): (38, [
        "schedsvc.engine.runtime.run_filter",
        "schedsvc.engine.filtering.fit_error",
    ]),
    (50, True, "plain"): (30, [
        "schedsvc.engine.batching.churn.any_rows",
        "schedsvc.engine.runtime.score_one",
        "schedsvc.engine.batching.score_cache.set_one",
        "schedsvc.engine.batching.churn.nodes_changed",
        "schedsvc.engine.batching.score_cache.pick",
    ]),
}


def _returns(path: Path) -> list[str]:
    return [f"{mod}.{fn}" for mod, fn in path.returns]


@pytest.mark.parametrize(
    ("nodes", "hint", "kind"), list(PATHS),
    ids=["a plain pod's first hint on a sampled cluster",
         "a spreading pod's first hint on a sampled cluster",
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
    assert len(path.entered) <= ceiling
    assert _returns(path) == returns


def test_the_default_path_enters_fewer_modules_than_before_and_comes_back_to_none() -> None:
    path = placement_path()
    assert len(path.entered) < MODULES_BEFORE
    assert path.returns == []


def test_the_default_path_runs_through_the_cycle_split_as_kube_splits_it() -> None:
    """The request handler, then the cluster, then schedule_one and the batch state that wraps
    the cycle (its hint here: the window, the host draw), then the assume, in that order. With
    metrics and tracing off (the engine's null observer) no record is made and the observer
    is never called."""
    path = placement_path()
    engine = [m for m in path.entered if m.startswith(ENGINE)]
    assert engine[:3] == [
        "schedsvc.engine.scheduler", "schedsvc.engine.cluster", "schedsvc.engine.schedule_one",
    ]
    order = [engine.index(m) for m in (
        "schedsvc.engine.schedule_one",
        "schedsvc.engine.batching.batch", "schedsvc.engine.batching.window_cache",
        "schedsvc.engine.select_host", "schedsvc.engine.batching.cluster_batches",
    )]
    assert order == sorted(order)
    assert "schedsvc.engine.observer" not in engine
    assert "schedsvc.engine.cycle_context" not in engine  # no CycleRecord
    assert path.returns == []


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
