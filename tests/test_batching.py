"""Every branch of GetNodeHint / StoreScheduleResults, each outcome read back from the
Prometheus metrics (kube's batch attempt results and cache flush reasons)."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from schedsvc.config import parse_config
from schedsvc.engine.schedule_result import Path, ScheduleResult
from schedsvc.engine.scheduler import Engine, SnapshotUpdate
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Outcome, TopologySpreadConstraint
from schedsvc.observability.metrics import PrometheusObserver
from tests.batching_play import setup
from tests.builders import GiB, make_pod, node


def metric(reg: CollectorRegistry, kind: str, label: str, value: str) -> float:
    """Sum of a batch counter's samples with `label=value` (robust to _total suffixes)."""
    total = 0.0
    for fam in reg.collect():
        if kind not in fam.name:
            continue
        for s in fam.samples:
            if s.name.endswith("_total") and s.labels.get(label) == value:
                if s.labels.get("profile") == "default-scheduler":
                    total += s.value
    return total


def flushes(reg: CollectorRegistry, reason: str) -> float:
    return metric(reg, "batch_cache_flushed", "reason", reason)


def attempts(reg: CollectorRegistry, result: str) -> float:
    return metric(reg, "batch_attempts", "result", result)


def small(uid: str, cpu: int = 500, **kw: Any) -> Any:
    return make_pod(uid, {"cpu": cpu, "memory": GiB, **kw})


def test_a_run_of_equal_pods_is_hinted_after_the_first_full_cycle() -> None:
    c, reg, _ = setup()
    out, _ = c.schedule([small(f"p{i}") for i in range(5)])
    assert [p.batched for p in out] == [False, True, True, True, True]
    assert attempts(reg, "no_hint") == 1  # the first pod: no state yet, nothing flushed
    assert attempts(reg, "hint") == 4
    assert attempts(reg, "hint_used") == 4
    assert sum(flushes(reg, r) for r in ("pod_skipped", "expired", "empty_list")) == 0


def test_a_pod_of_another_profile_in_between_flushes_pod_skipped() -> None:
    c, reg, _ = setup()
    c.schedule([small("a1"), small("a2")])
    c.schedule([make_pod("b1", {"cpu": 500, "memory": GiB}, "other")])
    out, _ = c.schedule([small("a3")])
    assert not out[0].batched
    assert flushes(reg, "pod_skipped") == 1


def test_a_pod_no_profile_serves_in_between_also_skips_a_cycle() -> None:
    c, reg, _ = setup()
    c.schedule([small("a1"), small("a2")])
    rejected, _ = c.schedule([make_pod("x", {"cpu": 1}, "nobody")])
    assert rejected[0].outcome is Outcome.REJECTED
    c.schedule([small("a3")])
    assert flushes(reg, "pod_skipped") == 1


def test_a_pod_with_another_signature_flushes_pod_incompatible() -> None:
    c, reg, _ = setup()
    c.schedule([small("a1"), small("a2")])
    out, _ = c.schedule([small("b1", cpu=700)])
    assert not out[0].batched
    assert flushes(reg, "pod_incompatible") == 1


def test_an_unsignable_pod_flushes_pod_incompatible_then_stores_nothing() -> None:
    c, reg, _ = setup()
    c.schedule([small("a1"), small("a2")])
    spread = TopologySpreadConstraint(1, "kubernetes.io/hostname", "DoNotSchedule")  # hard
    c.schedule([small("s1", topology_spread_constraints=(spread,))])
    assert flushes(reg, "pod_incompatible") == 1
    assert flushes(reg, "pod_not_batchable") == 1  # kube counts it at store, state or not
    out, _ = c.schedule([small("a3")])
    assert not out[0].batched


def test_a_nominated_pod_is_never_batched() -> None:
    c, reg, _ = setup()
    c.schedule([small("a1"), small("a2")])
    out, _ = c.schedule([small("n1", nominated_node_name="n3")])
    assert out[0].node_name == "n3" and not out[0].batched
    assert flushes(reg, "pod_incompatible") == 1


def test_state_older_than_max_batch_age_flushes_expired() -> None:
    c, reg, clock = setup()
    c.schedule([small("a1")])
    clock.now += 0.499
    assert c.schedule([small("a2")])[0][0].batched
    clock.now += 0.002  # 501 ms after the state was stored
    out, _ = c.schedule([small("a3")])
    assert not out[0].batched
    assert flushes(reg, "expired") == 1


def test_max_batch_age_is_configurable_per_profile() -> None:
    c, reg, clock = setup(batching={"maxBatchAge": "2s"})
    c.schedule([small("a1")])
    clock.now += 1.5
    assert c.schedule([small("a2")])[0][0].batched
    assert flushes(reg, "expired") == 0


def test_removing_the_last_chosen_node_flushes_node_missing() -> None:
    c, reg, _ = setup()
    out, _ = c.schedule([small("a1")])
    c.update(SnapshotUpdate(remove_nodes=[out[0].node_name]))
    out2, _ = c.schedule([small("a2")])
    assert not out2[0].batched and out2[0].node_name
    assert flushes(reg, "node_missing") == 1


def test_without_rescore_a_node_with_room_left_flushes_node_not_full() -> None:
    c, reg, _ = setup(batching={"rescore": False})
    out, _ = c.schedule([small("a1"), small("a2")])
    assert not out[1].batched
    assert flushes(reg, "node_not_full") == 1


def test_with_rescore_a_node_with_room_left_is_rescored_and_batching_goes_on() -> None:
    c, reg, _ = setup(n_nodes=2)
    out, _ = c.schedule([small(f"p{i}") for i in range(6)])
    assert all(p.batched for p in out[1:])
    # LeastAllocated spreads: the two nodes alternate as each fills up
    assert {p.node_name for p in out} == {"n0", "n1"}
    assert flushes(reg, "node_not_full") == 0


def test_under_sampling_a_hint_stands_for_the_sampled_cycle_without_standing_down() -> None:
    """A cycle cut short by percentageOfNodesToScore scores a window of the nodes; the cache
    keeps every node, so each hint reads the window the sampled cycle would score (the start
    index moving as it would): hinted, and placed as the sampled cycles place."""
    cfg = parse_config({"percentageOfNodesToScore": 10,
                        "profiles": [{"schedulerName": "default-scheduler"}]})
    placed = {}
    for batching in (False, True):
        reg = CollectorRegistry()
        engine = Engine(cfg, seed=3, batching_enabled=batching, observer=PrometheusObserver(reg))
        c = engine.cluster("t")
        # 250 nodes: kube's floor of 100 nodes to find is 40% of them, so cycles are cut short
        c.update(SnapshotUpdate(upsert_nodes=[node(f"n{i}") for i in range(250)]))
        out, _ = c.schedule([small(f"p{i}") for i in range(30)])
        assert [p.batched for p in out] == [False] + [batching] * 29
        placed[batching] = [(p.node_name, p.score) for p in out]
        assert flushes(reg, "node_not_full") == 0
        engine.close()
    assert placed[True] == placed[False]
    assert len(set(placed[True])) == 30  # spread over the cluster, one pod per node


def test_under_sampling_pods_that_fill_their_node_are_still_hinted_from_the_sample() -> None:
    cfg = parse_config({"percentageOfNodesToScore": 10,
                        "profiles": [{"schedulerName": "default-scheduler"}]})
    engine = Engine(cfg, seed=3)
    c = engine.cluster("t")
    c.update(SnapshotUpdate(upsert_nodes=[node(f"n{i}", cpu=1000) for i in range(250)]))
    out, _ = c.schedule([small(f"p{i}", cpu=800) for i in range(30)])
    assert [p.batched for p in out] == [False] + [True] * 29
    assert len({p.node_name for p in out}) == 30
    engine.close()


def test_one_per_node_pods_exhaust_the_list_and_flush_empty_list() -> None:
    c, reg, _ = setup(n_nodes=3, cpu=1000)
    out, _ = c.schedule([small(f"p{i}", cpu=800) for i in range(4)])
    assert [p.batched for p in out[:3]] == [False, True, True]
    assert out[3].outcome is Outcome.UNSCHEDULABLE
    assert flushes(reg, "empty_list") == 1


def test_a_single_feasible_node_is_placed_unscored_and_stores_empty_list() -> None:
    c, reg, _ = setup(n_nodes=1)
    c.schedule([small("a1")])
    assert flushes(reg, "empty_list") == 1


def test_pod_failed_flushes_when_the_last_cycle_did_not_succeed() -> None:
    """A compatible hint is always feasible here, so a failure with state kept cannot come out
    of the engine; the branch is kube's and is checked on the batch state directly."""
    c, reg, _ = setup()
    c.schedule([small("a1")])
    b = c.batches["default-scheduler"]
    last = b.last.cycle
    b.store_result(pod_info(small("a2")), c.snapshot, last + 1, ScheduleResult(Path.FAILED))
    hint = b.get_node_hint(pod_info(small("a2")), c.snapshot, last + 2, c.cursor.rng, 0, 4)
    assert hint is None
    assert flushes(reg, "pod_failed") == 1


def test_snapshot_replace_flushes_snapshot_changed_but_pod_churn_does_not() -> None:
    c, reg, _ = setup()
    c.schedule([small("a1"), small("a2")])
    c.update(SnapshotUpdate(remove_pods=["a1"]))
    assert c.schedule([small("a3")])[0][0].batched
    c.update(SnapshotUpdate(replace=True, upsert_nodes=[node(f"n{i}") for i in range(4)]))
    assert flushes(reg, "snapshot_changed") == 1
    assert not c.schedule([small("a4")])[0][0].batched


def test_feature_gate_off_disables_every_profile() -> None:
    reg = CollectorRegistry()
    engine = Engine(
        parse_config({}), seed=1, batching_enabled=False, observer=PrometheusObserver(reg)
    )
    c = engine.cluster("t")
    c.update(SnapshotUpdate(upsert_nodes=[node(f"n{i}") for i in range(3)]))
    out, _ = c.schedule([small(f"p{i}") for i in range(4)])
    assert not any(p.batched for p in out)
    assert attempts(reg, "no_hint") == 0 and attempts(reg, "hint") == 0


def test_dry_run_hints_but_assumes_nothing() -> None:
    c, _, _ = setup()
    gen = c.snapshot.generation
    out, _ = c.schedule([small(f"p{i}") for i in range(3)], dry_run=True)
    assert [p.batched for p in out] == [False, True, True]
    assert c.snapshot.generation == gen and not c.snapshot.pods


@pytest.mark.parametrize("bad", [{"maxBatchAge": "soon"}, {"rescore": "yes"}, {"turbo": True}])
def test_bad_batching_config_is_an_error_naming_the_field(bad: dict[str, Any]) -> None:
    from schedsvc.errors import ConfigError

    with pytest.raises(ConfigError) as e:
        parse_config({"profiles": [{"batching": bad}]})
    assert "profiles[0].batching" in str(e.value)


@pytest.mark.parametrize(("text", "seconds"), [
    ("500ms", 0.5), ("2s", 2.0), ("1m30s", 90.0), ("1h", 3600.0), ("1.5s", 1.5), (".5s", 0.5),
    ("300ns", 3e-7), ("2µs", 2e-6), ("2us", 2e-6), ("1h2m3s4ms", 3723.004), (3, 3.0),
])
def test_max_batch_age_reads_go_durations(text: str | int, seconds: float) -> None:
    """time.ParseDuration's units and compound forms, as a Go configuration would write them."""
    cfg = parse_config({"profiles": [{"batching": {"maxBatchAge": text}}]})
    assert cfg.profiles[0].batching.max_batch_age_seconds == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["", "5", "s", "-1s", "0s", "1d", "1 s", "1s ", "ms", 0, True])
def test_max_batch_age_refuses_what_go_refuses_or_a_non_positive_age(bad: object) -> None:
    from schedsvc.errors import ConfigError

    with pytest.raises(ConfigError, match="maxBatchAge"):
        parse_config({"profiles": [{"batching": {"maxBatchAge": bad}}]})
