"""Everything a cluster's next answer can depend on, as plain comparable values: to check that
a fork (a simulation) left its cluster exactly as it was, and that a fork holds what a
snapshot given the same changes holds.

`snapshot_state` reads a snapshot only through what any reader sees (iteration order of every
map, every row's pod order, every column, every index's tables, the storage objects and what
plugins derived from them), so a fork's overlays and a plain snapshot compare equal when they
read the same. `fingerprint` adds what the cluster keeps beside its snapshot: the cursor (the
rng's state included), the identity and contents of its batch states, the damage mark.
"""

from __future__ import annotations

from typing import Any

from schedsvc.engine.cluster import Cluster
from schedsvc.engine.preemption.victim_table import VictimTable
from schedsvc.framework.affinity_index import AffinityIndex, TermGroups
from schedsvc.framework.pod_volumes import PodVolumeIndex
from schedsvc.framework.selector_counts import SelectorCounts
from schedsvc.framework.snapshot import Snapshot

__all__ = ["fingerprint", "snapshot_state", "listener_state"]


def _arr(a: Any) -> tuple[Any, ...]:
    return (a.dtype.str, a.shape, a.tobytes())


def _groups(g: TermGroups[Any]) -> dict[Any, Any]:
    counts = {k: _arr(a) for k, a in g.counts.items()}
    return counts | {("total", k): n for k, n in g._totals.items()}


def listener_state(li: object) -> tuple[Any, ...]:
    """An index's tables, in their iteration orders (LRU orders included)."""
    if isinstance(li, SelectorCounts):
        return (
            "SelectorCounts", li._capacity,
            [(ns, [(s, _arr(a)) for s, a in e.items()]) for ns, e in li._by_ns.items()],
            list(li._lru),
            {ns: {p: frozenset(s) for p, s in d.items() if s} for ns, d in li._keyed.items()},
            {ns: frozenset(s) for ns, s in li._unkeyed.items() if s},
        )
    if isinstance(li, AffinityIndex):
        return (
            "AffinityIndex", li._capacity, list(li._pods.items()), list(li._terms.items()),
            _groups(li.required_anti), _groups(li.required_affinity), _groups(li.preferred),
            [(k, _arr(a)) for k, a in li._selectors.items()],
        )
    if isinstance(li, PodVolumeIndex):
        return (
            "PodVolumeIndex", li.capacity, list(li.claim_refs.items()),
            {k: _arr(a) for k, a in li.disks.items()}, {k: _arr(a) for k, a in li.writable.items()},
            [(r, list(d.items())) for r, d in li.volume_pods.items()],
            [(r, list(d.items())) for r, d in li.temporaries.items()],
            list(li.derived.items()),
        )
    if isinstance(li, VictimTable):
        n = li.used
        return (
            "VictimTable", _arr(li.row[:n]), _arr(li.priority[:n]), _arr(li.seq[:n]),
            _arr(li.requests[:n]), list(li._slot.items()), list(li._free), li._next_seq,
            [(u, id(v[0])) for u, v in li.nominated_vectors.items()],
        )
    return (type(li).__name__,)


def _storage(snap: Snapshot) -> tuple[Any, ...]:
    st = snap.storage
    maps = (st.pvs, st.pvcs, st.classes, st.csi_nodes, st.csi_drivers, st.capacities,
            st.attachments, st.assumed)
    return (
        st.generation, st.objects_generation, [list(m.items()) for m in maps],
        [(k, repr(v)) for k, v in st.derived.items()],
    )


def snapshot_state(snap: Snapshot, derived: bool = True) -> dict[str, Any]:
    """What a reader of `snap` can see. `derived`: include what plugins derived and kept
    (a fork starts without the base's; leave it out to compare a fork with a rebuilt twin)."""
    rows = snap.n_rows
    out: dict[str, Any] = {
        "scalars": (snap.capacity, snap.generation, snap.static_generation, rows),
        "free_rows": list(snap.free_rows),
        "index": list(snap.index.items()),
        "nodes": list(snap.nodes),
        "order": snap.order.tolist(),
        "position": snap.position.tolist(),
        "resources": (dict(snap.resource_index), list(snap.resource_names),
                      list(snap.resource_refs)),
        "taints": (dict(snap.taint_ids), list(snap.taint_list), list(snap.taint_refs)),
        "labels": [(k, _arr(c.ids), list(c.vocab), dict(c.index), list(c.counts), c.total)
                   for k, c in snap.labels.items()],
        "images": ({k: _arr(a) for k, a in snap.image_rows.items()},
                   dict(snap.image_num_nodes), dict(snap.image_size)),
        "host_ports": {k: {ip: _arr(a) for ip, a in v.items()} for k, v in snap.host_ports.items()},
        "host_port_uses": dict(snap._host_port_uses),
        "pods": list(snap.pods.items()),
        "pods_on_row": [list(snap.pods_on_row[r].items()) for r in range(len(snap.pods_on_row))],
        "nominated": list(snap.nominated.items()),
        "temporaries": list(snap.temporaries.items()),
        "namespaces": list(snap.namespaces.items()),
        "pdbs": list(snap.pdbs.items()),
        "listeners": [listener_state(li) for li in snap.listeners],
        "storage": _storage(snap) if derived else _storage(snap)[:3],
    }
    for name in ("alive", "allocatable", "requested", "nonzero_requested", "unschedulable",
                 "taint_matrix"):
        out[name] = _arr(getattr(snap, name))
    if not derived:
        out["listeners"] = [s[:-1] if s[0] == "PodVolumeIndex" else s for s in out["listeners"]]
    return out


def fingerprint(cluster: Cluster) -> dict[str, Any]:
    """The cluster's state: its snapshot (same object, same contents), cursor, batch states
    (same objects, their cached state's identity), and marks."""
    c = cluster.cursor
    batches = [
        (name, id(b), id(b.state), id(b._run), id(b.parked), b._signature, b._hinted,
         b.batched_pods, b.resumed_runs, id(b.last))
        for name, b in cluster.batches.by_profile().items()
    ]
    return {
        "snapshot_id": id(cluster.snapshot),
        "snapshot": snapshot_state(cluster.snapshot),
        "cursor": (repr(c.rng.bit_generator.state), c.cycle, c.next_start_index,
                   id(c.last_info)),
        "batches": batches,
        "env": id(cluster._cycle_env),
        "marks": (cluster.damaged, cluster.staged.open is None),
        "parked_bytes": cluster.engine.parked_budget.total,
    }
