"""schedsvc.v1 PodDisruption -> domain: what a simulated drain reads of a pod (issue 27).

The cluster-autoscaler compares its annotations literally (`== "true"`, `== "false"`), so the
one annotation with a value is accepted only as those two or absent: any other spelling would
be read as absent there, and a client sending it most likely meant something else.
"""

from __future__ import annotations

import re

from schedsvc import model
from schedsvc.errors import InvalidArgument
from schedsvc.v1 import schedule_pb2 as pb

from .validation import DNS1123_LABEL_RE

__all__ = ["disruption", "pod_disruption"]

SAFE_TO_EVICT = frozenset({"", "true", "false"})
# an API kind: CamelCase, as ownerReferences[].kind holds it
_KIND_RE = re.compile(r"[A-Za-z][A-Za-z0-9]{0,62}")


def disruption(msg: pb.PodDisruption, prefix: str) -> model.PodDisruption:
    """`msg` validated; errors name fields under `prefix` (e.g. "pods[0].disruption")."""
    kind = msg.controller_kind
    if kind and not _KIND_RE.fullmatch(kind):
        raise InvalidArgument(f"{prefix}.controller_kind", "not an API kind (e.g. ReplicaSet)")
    if msg.safe_to_evict not in SAFE_TO_EVICT:
        raise InvalidArgument(f"{prefix}.safe_to_evict", 'one of "", "true", "false"')
    for i, name in enumerate(msg.safe_to_evict_local_volumes):
        if len(name) > 63 or not DNS1123_LABEL_RE.fullmatch(name):
            raise InvalidArgument(
                f"{prefix}.safe_to_evict_local_volumes[{i}]", "not a volume name (a DNS label)"
            )
    return model.PodDisruption(
        controller_kind=kind, mirror=msg.mirror, safe_to_evict=msg.safe_to_evict,
        safe_to_evict_local_volumes=tuple(msg.safe_to_evict_local_volumes),
    )


def pod_disruption(msg: pb.Pod, prefix: str) -> model.PodDisruption | None:
    """The pod's disruption fields (errors under "<prefix>.disruption"); None when unset."""
    if not msg.HasField("disruption"):
        return None
    return disruption(msg.disruption, f"{prefix}.disruption")
