"""The nominations of a pod group's members while their group is in flight.

kube's nominator keeps a member's nomination while its group is scheduled, but hands it to
the two-pass filter (NominatedPodsForNode -> nominatedPodToInfo) as the bare pod of its podRef
when the pod is in no queue, as a popped group's members are not: a name, a uid, a scheduling
group, no priority (0) and no containers. So one member's nomination counts in another's
filter only as an empty pod of priority 0: not at all for a group of positive priority. The
member's own nominated node is read from the pod (its status), which stays.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..framework.pod_record import PodRecord
from ..model import Pod
from .cycle_env import CycleEnv

__all__ = ["InFlight"]


class InFlight:
    """While a group cycle runs: each nominated member's record swapped for its bare podRef
    (nominated to the same node, which the member's own cycle reads); `land` puts the real
    records back for the members not placed."""

    def __init__(self, env: CycleEnv, queued: Sequence[Pod]) -> None:
        self._env = env
        snap = env.snapshot
        self._saved: dict[str, PodRecord] = {}
        for pod in queued:
            rec = snap.nominated.get(pod.uid)
            if rec is None:
                continue
            self._saved[pod.uid] = rec
            p = rec.pod
            snap.add_nominated(Pod(
                uid=p.uid, name=p.name, namespace=p.namespace, pod_group=p.pod_group,
                nominated_node_name=rec.nominated_node_name,
            ))
        if self._saved:
            env.batches.invalidate()  # the two-pass filters see other pods now

    def land(self) -> None:
        """The real nominations back, for every member not on a node."""
        if not self._saved:
            return
        snap = self._env.snapshot
        for uid, rec in self._saved.items():
            if uid not in snap.pods:
                snap.add_nominated(rec.pod, rec.info)
        self._saved.clear()
        self._env.batches.invalidate()
