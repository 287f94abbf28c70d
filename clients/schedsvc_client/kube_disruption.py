"""What a simulated drain reads of a v1.Pod (Pod.disruption, issue 27): the controller's kind
and the annotations the cluster-autoscaler's drainability rules read, read as it reads them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from schedsvc.v1 import schedule_pb2 as pb

from .kube_json import controller_field, join, str_map

__all__ = ["MIRROR", "SAFE_TO_EVICT", "SAFE_TO_EVICT_LOCAL_VOLUMES", "set_disruption"]

MIRROR = "kubernetes.io/config.mirror"
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
_VOLUME_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def set_disruption(pod: pb.Pod, meta: Mapping[str, Any], path: str) -> None:
    """Fill pod.disruption from metadata; left unset when nothing in it is set. The
    autoscaler compares safe-to-evict with "true" and "false" literally, so another value
    is read as absent; and it splits the local-volumes list at commas without trimming, so
    an entry that is no volume name matches no volume and is dropped."""
    notes = str_map(meta.get("annotations"), join(path, "metadata.annotations"))
    safe = notes.get(SAFE_TO_EVICT, "")
    volumes = [v for v in notes.get(SAFE_TO_EVICT_LOCAL_VOLUMES, "").split(",")
               if _VOLUME_NAME.fullmatch(v)]
    d = pb.PodDisruption(
        controller_kind=controller_field(meta, path, "kind"), mirror=MIRROR in notes,
        safe_to_evict=safe if safe in ("true", "false") else "",
        safe_to_evict_local_volumes=volumes,
    )
    if d.ByteSize():
        pod.disruption.CopyFrom(d)
