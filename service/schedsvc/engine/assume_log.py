"""The assumes of a pod group cycle, to take back: kube's revertFns (schedule_one_podgroup.go),
each member's Unreserve and ForgetPod, in reverse order, with the nomination the assume ended
put back (unreserveAndForget). A group that fails leaves the snapshot as it found it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..framework.pod_record import PodRecord
from ..framework.snapshot import Snapshot

__all__ = ["AssumeLog"]


@dataclass(slots=True)
class AssumeLog:
    """The uids assumed in this cycle, in order, and the nominated records they replaced."""

    uids: list[str] = field(default_factory=list)
    nominations: dict[str, PodRecord] = field(default_factory=dict)

    def before_assume(self, snap: Snapshot, uid: str) -> None:
        """Called before a member's assume: keeps the nomination it is about to end."""
        rec = snap.nominated.get(uid)
        if rec is not None:
            self.nominations[uid] = rec

    def assumed(self, uid: str) -> None:
        self.uids.append(uid)

    def revert(self, snap: Snapshot) -> bool:
        """Take every assume back, last first; True when there was any."""
        for uid in reversed(self.uids):
            snap.storage.restore(uid)  # VolumeBinding's Unreserve
            snap.remove_pod(uid)
            nominated = self.nominations.get(uid)
            if nominated is not None:
                snap.add_nominated(nominated.pod, nominated.info)
        done = bool(self.uids)
        self.uids.clear()
        self.nominations.clear()
        return done
