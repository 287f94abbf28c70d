"""Pod signatures (kube's runtime/signature.go): equal signatures, equal filter and score.

A signature is the concatenation of every plugin's bytes for the fields it reads; a plugin that
returns None makes the pod unsignable, and one plugin the profile runs that cannot sign at all
makes every pod unsignable (kube's SignPod).
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any

from ...framework.podinfo import PodInfo
from ...model import Pod
from ..runtime import Framework

__all__ = ["Signed", "sign_parts", "sign_pod", "PodSigner"]

# (signature or None, whether hints for it must rescore every cached node)
Signed = tuple[bytes | None, bool]

# every Pod field a plugin may read: all but the pod's identity, and what only a simulated
# drain reads (signing it would split runs of pods equal for every plugin)
_SIGNED_FIELDS = tuple(
    f.name for f in dataclasses.fields(Pod)
    if f.name not in ("uid", "name", "shape", "disruption")
)
_signed_values = operator.attrgetter(*_SIGNED_FIELDS)  # a tuple: there are many fields
_MEMO_MAX = 1024
_SHAPES_MAX = 64
# bytes of signatures the memo may hold (a signature carries the pod's names: images, labels,
# ...; the fields it keeps alive are about as big), so huge dry-run pods cannot pin memory
_MEMO_BYTES = 4 * 1024 * 1024


def sign_parts(
    fw: Framework, pod: PodInfo, soft_spread: bool = False
) -> tuple[list[bytes], bool] | None:
    """Each signer's part of the pod's signature, in fw.signers order, and whether hints for
    it must rescore every cached node; None when the pod is unsignable. With `soft_spread`,
    a plugin that can sign a pod whose scores reach other nodes (SignRescoredPlugin) does."""
    if not fw.fully_signable:
        return None
    parts: list[bytes] = []
    full = False
    for p in fw.signers:
        s = p.sign(pod)
        if s is None and soft_spread:
            rescored = fw.rescored_signers.get(p.name)
            if rescored is not None:
                s = rescored.sign_rescored(pod)
                full = s is not None
        if s is None:
            return None
        parts.append(s)
    return parts, full


def sign_pod(fw: Framework, pod: PodInfo, soft_spread: bool = False) -> Signed:
    """The pod's signature under `fw`: its signers' parts (sign_parts), each named."""
    signed = sign_parts(fw, pod, soft_spread)
    if signed is None:
        return None, False
    parts, full = signed
    names = [p.name for p in fw.signers]
    return b"".join(
        n.encode() + b"\x00" + s + b"\x01" for n, s in zip(names, parts, strict=True)
    ), full


class PodSigner:
    """sign_pod, memoized per pod shape: by the conversion cache's shape token (Pod.shape) for a
    run of equal pods, else by the identities of the pod's fields.

    Pods converted from equal messages share every field object but uid and name (the server's
    conversion cache), so the memo is keyed by those objects' identities and holds them, which
    keeps the identities from being reused while the entry lives."""

    def __init__(self, fw: Framework, soft_spread: bool) -> None:
        self.fw = fw
        self.soft_spread = soft_spread
        # by shape token, the most recent first: interleaved runs of a few shapes hit too
        self._shapes: dict[object, Signed] = {}
        self._memo: dict[tuple[int, ...], tuple[tuple[Any, ...], Signed]] = {}
        self._memo_bytes = 0

    def sign(self, info: PodInfo) -> Signed:
        pod = info.pod
        if pod.nominated_node_name:  # tried on its node first: no batching for it
            return None, False
        shape = pod.shape
        if shape is not None:
            hit = self._shapes.get(shape)
            if hit is not None:
                return hit
        result = self._sign_fields(info)
        if shape is not None:
            if len(self._shapes) >= _SHAPES_MAX:
                self._shapes.clear()
            self._shapes[shape] = result  # holds the token: its id is not reused meanwhile
        return result

    def _sign_fields(self, info: PodInfo) -> Signed:
        fields: tuple[Any, ...] = _signed_values(info.pod)
        key = tuple(map(id, fields))
        hit = self._memo.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], fields, strict=True)):
            return hit[1]
        result = sign_pod(self.fw, info, self.soft_spread)
        size = len(result[0] or b"")
        if len(self._memo) >= _MEMO_MAX or self._memo_bytes + size > _MEMO_BYTES:
            self._memo.clear()
            self._memo_bytes = 0
        if size <= _MEMO_BYTES:
            self._memo[key] = (fields, result)
            self._memo_bytes += size
        return result
