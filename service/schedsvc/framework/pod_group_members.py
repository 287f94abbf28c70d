"""The members of each pod group the snapshot holds on nodes, bound or assumed: kube's
PodGroupState.ScheduledPods (backend/cache/podgroupstate.go), which count toward a gang's
minCount and are validated with the queued members.

A PodListener, so assumes, bindings and removals keep it current; built the first time a pod
group cycle asks (listener_of), so a cluster without pod groups never pays for it.
"""

from __future__ import annotations

import weakref

from ..model_pod_group import pod_group_key
from .pod_record import PodRecord
from .snapshot import Snapshot

__all__ = ["PodGroupMembers"]


class PodGroupMembers:
    """"namespace/name" -> uid -> record of each member on a node (temporaries, the nominated
    pods a two-pass filter counts for a moment, are not members)."""

    def __init__(self, snap: Snapshot) -> None:
        self._snap: Snapshot = weakref.proxy(snap)  # the snapshot holds its listeners
        self._by_group: dict[str, dict[str, PodRecord]] = {}

    @classmethod
    def for_snapshot(cls, snap: Snapshot) -> PodGroupMembers:
        return snap.listener_of(cls, lambda: cls(snap))

    def scheduled(self, key: str) -> list[PodRecord]:
        """The group's members bound or assumed, in the order they joined."""
        members = self._by_group.get(key)
        return list(members.values()) if members else []

    def any(self) -> bool:
        """Whether some pod group has a member on a node."""
        return bool(self._by_group)

    def count(self, key: str) -> int:
        members = self._by_group.get(key)
        return len(members) if members else 0

    def pod_added(self, rec: PodRecord, row: int) -> None:
        pod = rec.pod
        if pod.pod_group and rec.temporary is None:
            key = pod_group_key(pod.namespace, pod.pod_group)
            self._by_group.setdefault(key, {})[pod.uid] = rec

    def pod_removed(self, rec: PodRecord, row: int) -> None:
        pod = rec.pod
        if pod.pod_group and rec.temporary is None:
            key = pod_group_key(pod.namespace, pod.pod_group)
            members = self._by_group.get(key)
            if members is not None:
                members.pop(pod.uid, None)
                if not members:
                    del self._by_group[key]

    def grow(self, capacity: int) -> None:
        pass
