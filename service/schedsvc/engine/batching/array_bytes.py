"""The bytes of the numpy arrays an object holds: what a parked cache costs the budget."""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["array_bytes"]


def array_bytes(obj: object, depth: int = 0) -> int:
    """Bytes of the arrays in `obj`, walked through dataclasses, lists and tuples (a plugin's
    window state), at most four levels deep."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if depth > 3:
        return 0
    if isinstance(obj, (list, tuple)):
        return sum(array_bytes(x, depth + 1) for x in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return sum(array_bytes(getattr(obj, f.name), depth + 1) for f in dataclasses.fields(obj))
    return 0
