"""Names a simulation makes up: new nodes as a node group names them, copies of a fill's
template. Each skips what the fork already holds, so a generated object never collides with
a real one or with one an earlier step made."""

from __future__ import annotations

import dataclasses
import operator

from ...framework.snapshot import Snapshot
from ...model import Pod

__all__ = ["PodCopies", "node_names", "pod_copies"]

_FIELDS = tuple(f.name for f in dataclasses.fields(Pod))
if _FIELDS[:2] != ("uid", "name"):  # pragma: no cover - guards a model change
    raise ImportError("names.py expects model.Pod to open with uid, name")
_REST = operator.attrgetter(*_FIELDS[2:])


def node_names(snap: Snapshot, template: str, count: int) -> list[str]:
    """`count` names "<template>-<k>", k from 0, skipping names `snap` holds (the
    autoscaler's estimator counts e-<k> the same way; we keep the template's name)."""
    out: list[str] = []
    k = 0
    while len(out) < count:
        name = f"{template}-{k}"
        if name not in snap.index:
            out.append(name)
        k += 1
    return out


class PodCopies:
    """Copies of `template` named "<name or fill>-<i>" with uids "<uid or fill>~<i>", i from
    0, skipping uids `snap` holds (placed or nominated, at the moment the copy is made). They
    keep the template's shape token (one is given if it has none), so the cycle reuses its
    PodInfo and batching signature for every copy. An iterator; `skip` passes over copies a
    fill never makes (their records are read by nothing), naming the next one as if made."""

    __slots__ = ("template", "_name", "_uid", "_rest", "_pods", "_nominated", "_i")

    def __init__(self, snap: Snapshot, template: Pod) -> None:
        if template.shape is None:
            template = dataclasses.replace(template, shape=object())
        self.template = template
        self._name, self._uid = template.name or "fill", template.uid or "fill"
        self._rest = _REST(template)  # the fields after uid and name: 1/10 of replace's cost
        self._pods, self._nominated = snap.pods, snap.nominated
        self._i = 0

    def __iter__(self) -> PodCopies:
        return self

    def __next__(self) -> Pod:
        i = self._next_free()
        return Pod(f"{self._uid}~{i}", f"{self._name}-{i}", *self._rest)

    def skip(self, k: int) -> None:
        for _ in range(k):
            self._next_free()

    def _next_free(self) -> int:
        """The next index whose uid the snapshot does not hold; taken."""
        pods, nominated, uid = self._pods, self._nominated, self._uid
        i = self._i
        while f"{uid}~{i}" in pods or f"{uid}~{i}" in nominated:
            i += 1
        self._i = i + 1
        return i


def pod_copies(snap: Snapshot, template: Pod) -> PodCopies:
    """The copies of `template` (PodCopies)."""
    return PodCopies(snap, template)
