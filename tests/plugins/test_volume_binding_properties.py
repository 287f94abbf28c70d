"""A property of VolumeBinding's assume across requests (hypothesis): over random PVs, claims
and pods scheduled in sequence, with dry runs, retries and removals between them, no PV is ever
bound (assumed) to two claims, and every live binding is the PV's claimRef in the snapshot."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsvc.engine.scheduler import SnapshotUpdate
from schedsvc.model import Outcome
from tests.builders import cluster_of
from tests.builders.pv_claims import (
    Gi,
    affinity,
    make_class,
    make_pv,
    make_pvc,
    make_storage_node,
    pod_with_claims,
)

NODES = ("n0", "n1", "n2")
CLAIMS = tuple(f"c{i}" for i in range(6))

pv_specs = st.lists(
    st.tuples(st.integers(1, 4), st.sampled_from((*NODES, ""))),
    min_size=0, max_size=8,
)
claim_sizes = st.lists(st.integers(1, 4), min_size=len(CLAIMS), max_size=len(CLAIMS))
steps = st.lists(
    st.tuples(
        st.sampled_from(("schedule", "dry_run", "retry", "remove")),
        st.lists(st.lists(st.sampled_from(CLAIMS), min_size=1, max_size=2, unique=True),
                 min_size=1, max_size=3),
    ),
    min_size=1, max_size=6,
)


def _cluster(pvs: list[tuple[int, str]], sizes: list[int]) -> Any:
    c = cluster_of([make_storage_node(n) for n in NODES])
    st_ = c.snapshot.storage
    st_.classes["local"] = make_class("local")
    st_.classes["dyn"] = make_class("dyn", provisioner="csi.example.com")
    for i, (size, host) in enumerate(pvs):
        aff = affinity({"kubernetes.io/hostname": [host]}) if host else None
        pv = make_pv(f"pv{i}", "local", size * Gi, node_affinity=aff)
        st_.pvs[pv.name] = pv
    for name, size in zip(CLAIMS, sizes, strict=True):
        cls = "dyn" if name == CLAIMS[-1] else "local"
        pvc = make_pvc(name, cls, size * Gi)
        st_.pvcs[pvc.key] = pvc
    return c


def _check(c: Any, live: dict[str, Any]) -> None:
    owner: dict[str, str] = {}
    for p in live.values():
        for b in p.volume_bindings:
            if b.provisioned:
                continue
            assert owner.setdefault(b.volume_name, b.claim) == b.claim, "a PV bound twice"
            ref = c.snapshot.storage.pvs[b.volume_name].claim_ref
            assert ref is not None and f"{ref.namespace}/{ref.name}" == b.claim


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pvs=pv_specs, sizes=claim_sizes, plan=steps)
def test_no_pv_is_ever_bound_to_two_claims(
    pvs: list[tuple[int, str]], sizes: list[int], plan: list[tuple[str, list[list[str]]]]
) -> None:
    c = _cluster(pvs, sizes)
    live: dict[str, Any] = {}
    n = 0
    for action, pods in plan:
        if action == "remove" and live:
            uid = sorted(live)[0]
            c.update(SnapshotUpdate(remove_pods=[uid]))
            del live[uid]
        elif action == "retry" and live:
            uid = sorted(live)[-1]
            p = live[uid]
            claims = [b.claim.split("/")[1] for b in p.volume_bindings] or [CLAIMS[0]]
            (again,), _ = c.schedule([pod_with_claims(uid, *claims)])
            assert again.node_name == p.node_name  # a retry never places twice
        else:
            batch = []
            for claims in pods:
                batch.append(pod_with_claims(f"p{n}", *claims))
                n += 1
            out, _ = c.schedule(batch, dry_run=action == "dry_run")
            for p in out:
                if action == "dry_run":
                    assert p.volume_bindings == ()
                elif p.outcome is Outcome.SCHEDULED:
                    live[p.pod_uid] = p
        _check(c, live)
