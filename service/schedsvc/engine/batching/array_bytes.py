"""The bytes of the numpy arrays an object holds: what a parked cache costs the budget."""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["array_bytes"]

# per class: its dataclass field names, or None when it is no dataclass (asked once per class:
# dataclasses.fields and is_dataclass cost more than the walk itself)
_FIELDS: dict[type, tuple[str, ...] | None] = {}


def array_bytes(obj: object, depth: int = 0) -> int:
    """Bytes of the arrays in `obj`, walked through dataclasses, lists and tuples (a plugin's
    window state), at most four levels deep."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if depth > 3:
        return 0
    if isinstance(obj, (list, tuple)):
        return sum(array_bytes(x, depth + 1) for x in obj)
    kind = type(obj)
    names = _FIELDS.get(kind, ())
    if names == ():
        names = _FIELDS[kind] = (
            tuple(f.name for f in dataclasses.fields(obj))
            if dataclasses.is_dataclass(obj) and not isinstance(obj, type) else None
        )
    if names is None:
        return 0
    return sum(array_bytes(getattr(obj, n), depth + 1) for n in names)
