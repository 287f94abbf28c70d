"""Names a simulation makes up: new nodes as a node group names them, copies of a fill's
template. Each skips what the fork already holds, so a generated object never collides with
a real one or with one an earlier step made."""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterator

from ...framework.snapshot import Snapshot
from ...model import Pod

__all__ = ["node_names", "pod_copies"]

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


def pod_copies(snap: Snapshot, template: Pod) -> Iterator[Pod]:
    """Copies of `template` named "<name or fill>-<i>" with uids "<uid or fill>~<i>", i from
    0, skipping uids `snap` holds (placed or nominated, at the moment the copy is made). They
    keep the template's shape token (one is given if it has none), so the cycle reuses its
    PodInfo and batching signature for every copy."""
    if template.shape is None:
        template = dataclasses.replace(template, shape=object())
    name, uid = template.name or "fill", template.uid or "fill"
    rest = _REST(template)  # the fields after uid and name, positionally: 1/10 of replace's cost
    pods, nominated = snap.pods, snap.nominated
    i = 0
    while True:
        u = f"{uid}~{i}"
        if u not in pods and u not in nominated:
            yield Pod(u, f"{name}-{i}", *rest)
        i += 1
