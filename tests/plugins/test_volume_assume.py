"""A pod placed by a request counts for the next pod of the same request (kube's AssumePod adds
it to the snapshot): its ReadWriteOncePod claims are in use, its volumes take attach slots, its
disks are on its node. Volume pods are not batched, so each runs a full cycle."""

from __future__ import annotations

from schedsvc.engine.scheduler import Cluster
from schedsvc.model import Outcome, Pod
from schedsvc.model_storage import READ_WRITE_ONCE_POD
from schedsvc.model_volume import AWSElasticBlockStore
from schedsvc.plugins.node_volume_limits import ERR_REASON_MAX_VOLUME_COUNT
from schedsvc.plugins.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
)
from tests.builders import cluster_of, node
from tests.builders.volume_plugins import (
    claim_volume,
    csi_pv,
    disk_volume,
    make_csi_node,
    make_pvc,
    pod_with_volumes,
)


def _cluster(batching: bool, limit: int | None = None) -> Cluster:
    c = cluster_of([node("a"), node("b")], batching=batching)
    st = c.snapshot.storage
    for i in range(4):
        modes = (READ_WRITE_ONCE_POD,) if i == 0 else ()
        st.pvcs[f"default/c{i}"] = make_pvc(f"c{i}", volume_name=f"pv{i}", access_modes=modes)
        st.pvs[f"pv{i}"] = csi_pv(f"pv{i}", "d")
    if limit is not None:
        st.csi_nodes.update({n: make_csi_node(n, {"d": limit}) for n in ("a", "b")})
    st.generation += 1
    return c


def _schedule(c: Cluster, pods: list[Pod]) -> list[tuple[Outcome, str, str]]:
    out, _ = c.schedule(pods)
    return [(p.outcome, p.node_name, p.message) for p in out]


def test_a_read_write_once_pod_claim_taken_by_the_request_is_in_use() -> None:
    for batching in (False, True):
        got = _schedule(_cluster(batching), [
            pod_with_volumes("p1", claim_volume("c0")), pod_with_volumes("p2", claim_volume("c0")),
        ])
        assert got[0][0] is Outcome.SCHEDULED
        assert got[1][0] is Outcome.UNSCHEDULABLE
        assert got[1][2].startswith(f"0/2 nodes are available: 2 {ERR_REASON_RWOP_CONFLICT}.")


def test_attach_slots_taken_by_the_request_count() -> None:
    for batching in (False, True):
        pods = [pod_with_volumes(f"p{i}", claim_volume(f"c{i}")) for i in (1, 2, 3)]
        got = _schedule(_cluster(batching, limit=1), pods)
        assert sorted(n for _, n, _ in got[:2]) == ["a", "b"]
        assert got[2][0] is Outcome.UNSCHEDULABLE
        assert got[2][2].startswith(f"0/2 nodes are available: 2 {ERR_REASON_MAX_VOLUME_COUNT}.")


def test_an_inline_disk_taken_by_the_request_conflicts() -> None:
    ebs = disk_volume(aws_elastic_block_store=AWSElasticBlockStore("vol-1"))
    pods = [pod_with_volumes(f"p{i}", ebs) for i in range(3)]
    got = _schedule(_cluster(True), pods)
    assert sorted(n for _, n, _ in got[:2]) == ["a", "b"]
    assert got[2][2].startswith(f"0/2 nodes are available: 2 {ERR_REASON_DISK_CONFLICT}.")


def test_pods_without_volumes_still_batch_beside_volume_pods() -> None:
    """A volume pod is unsignable (a full cycle); plain pods around it keep batching."""
    c = _cluster(True)
    plain = [pod_with_volumes(f"q{i}") for i in range(4)]
    out, _ = c.schedule([*plain[:2], pod_with_volumes("v", claim_volume("c1")), *plain[2:]])
    assert out[1].batched is True
    assert out[2].batched is False and out[2].outcome is Outcome.SCHEDULED
    assert out[4].batched is True
