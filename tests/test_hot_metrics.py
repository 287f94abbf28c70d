"""Hot-path metrics (observability/hot_metrics.py): no increment lost between threads, buckets
inclusive at their bound, and the exposition prometheus-client's Counter and Histogram give."""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from schedsvc.observability.hot_metrics import HotMetrics


def samples(registry: CollectorRegistry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in registry.collect() for s in fam.samples if not s.name.endswith("_created")
    }


def test_threads_lose_no_increment() -> None:
    reg = CollectorRegistry()
    hot = HotMetrics(reg)
    c = hot.counter("things", "doc", ["kind"])
    h = hot.histogram("waits", "doc", ["kind"], (0.1, 1.0))

    def work() -> None:
        for i in range(20_000):
            c.inc(("a",))
            h.observe(("a",), 0.5 if i % 2 else 2.0)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = samples(reg)
    assert got[("things_total", (("kind", "a"),))] == 80_000
    assert got[("waits_count", (("kind", "a"),))] == 80_000
    assert got[("waits_bucket", (("kind", "a"), ("le", "1.0")))] == 40_000
    assert got[("waits_sum", (("kind", "a"),))] == 40_000 * 0.5 + 40_000 * 2.0


def test_the_exposition_is_prometheus_clients() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    hot = HotMetrics(ours)
    c1 = hot.counter("attempts", "How many.", ["result"])
    h1 = hot.histogram("latency_seconds", "How long.", ["result"], (0.001, 0.002, 0.004))
    c2 = Counter("attempts", "How many.", ["result"], registry=theirs)
    h2 = Histogram("latency_seconds", "How long.", ["result"], buckets=(0.001, 0.002, 0.004),
                   registry=theirs)
    for result, v in (("ok", 0.001), ("ok", 0.003), ("bad", 9.0), ("ok", 0.0005)):
        c1.inc((result,))
        c2.labels(result).inc()
        h1.observe((result,), v)  # 0.001 lands in le="0.001": the bound is inclusive
        h2.labels(result).observe(v)
    assert samples(ours) == samples(theirs)

    def lines(reg: CollectorRegistry) -> set[str]:
        return {
            line for line in generate_latest(reg).decode().splitlines()
            if "_created" not in line
        }

    assert lines(ours) == lines(theirs)
