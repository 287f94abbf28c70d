"""JSON shapes of Kubernetes objects: typed reads that fail with the JSON path of the bad field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedsvc.quantity import QuantityError, parse_quantity

__all__ = [
    "controller_field",
    "object_parts",
    "KubeObjectError",
    "as_bool",
    "as_int",
    "as_list",
    "as_object",
    "as_str",
    "join",
    "quantities",
    "quantity_text",
    "str_map",
]

_INT32_MAX = 2**31 - 1


class KubeObjectError(ValueError):
    """A Kubernetes object we cannot convert; `path` is the JSON path of the bad field."""

    def __init__(self, path: str, description: str) -> None:
        super().__init__(f"{path}: {description}" if path else description)
        self.path = path
        self.description = description


def join(path: str, key: str) -> str:
    """`path.key`; a path naming only a file (`pods.json:`) takes the key directly."""
    return f"{path}.{key}" if path and not path.endswith(":") else f"{path}{key}"


def as_object(obj: Any, path: str) -> Mapping[str, Any]:
    """A JSON object, or {} for an absent (null) one: YAML writes `tolerations:` as null."""
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise KubeObjectError(path, f"expected an object, got {type(obj).__name__}")
    return obj


def object_parts(
    obj: Mapping[str, Any], path: str
) -> tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]]:
    """An object's metadata, spec and status ({} where absent), each checked to be an object."""
    return (
        as_object(obj.get("metadata"), join(path, "metadata")),
        as_object(obj.get("spec"), join(path, "spec")),
        as_object(obj.get("status"), join(path, "status")),
    )


def as_list(obj: Any, path: str) -> list[Any]:
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise KubeObjectError(path, f"expected a list, got {type(obj).__name__}")
    return obj


def as_str(obj: Any, path: str) -> str:
    if obj is None:
        return ""
    if not isinstance(obj, str):
        raise KubeObjectError(path, f"expected a string, got {type(obj).__name__}")
    return obj


def as_bool(obj: Any, path: str) -> bool:
    """A boolean; absent (null) is false, as Go's zero value."""
    if obj is None:
        return False
    if not isinstance(obj, bool):
        raise KubeObjectError(path, f"expected a boolean, got {obj!r}")
    return obj


def as_int(obj: Any, path: str, lo: int = -_INT32_MAX - 1, hi: int = _INT32_MAX) -> int:
    if obj is None:
        return 0
    if isinstance(obj, bool) or not isinstance(obj, int):
        raise KubeObjectError(path, f"expected an integer, got {obj!r}")
    if not lo <= obj <= hi:
        raise KubeObjectError(path, f"{obj} is out of range [{lo}, {hi}]")
    return obj


def str_map(obj: Any, path: str) -> dict[str, str]:
    """labels / nodeSelector: strings only, as kube's map[string]string unmarshalling demands."""
    out: dict[str, str] = {}
    for k, v in as_object(obj, path).items():
        if not isinstance(k, str):
            raise KubeObjectError(path, f"key {k!r} is not a string")
        if not isinstance(v, str):
            raise KubeObjectError(join(path, k), f"expected a string, got {v!r}")
        out[k] = v
    return out


def quantity_text(value: Any, path: str) -> str:
    """A quantity as text: kube accepts JSON numbers (`cpu: 2`) as well as strings."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise KubeObjectError(path, f"expected a quantity, got {value!r}")
    text = value if isinstance(value, str) else repr(value)
    try:
        if parse_quantity(text) < 0:
            raise KubeObjectError(path, f"negative quantity {text!r}")
    except QuantityError as exc:
        raise KubeObjectError(path, str(exc)) from None
    return text


def quantities(obj: Any, path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in as_object(obj, path).items():
        if not isinstance(k, str) or not k:
            raise KubeObjectError(path, f"bad resource name {k!r}")
        out[k] = quantity_text(v, join(path, k))
    return out


def controller_field(meta: Mapping[str, Any], path: str, name: str) -> str:
    """A string field (`kind`, `uid`) of metav1.GetControllerOf's owner reference, the one
    with controller: true ("" when there is none)."""
    refs_path = join(path, "metadata.ownerReferences")
    for i, ref in enumerate(as_list(meta.get("ownerReferences"), refs_path)):
        r = as_object(ref, f"{refs_path}[{i}]")
        if r.get("controller") is True:
            return as_str(r.get(name), f"{refs_path}[{i}].{name}")
    return ""

