"""Walks of a message type's repeated and map fields at any depth, from its descriptor, for the
tests that check every list a request carries is bounded (test_tenancy.py and the simulation
limits)."""

from __future__ import annotations

from typing import Any

__all__ = ["fill_path", "list_paths"]


def list_paths(desc: Any, seen: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
    """Every repeated or map field reachable inside message type `desc`, as a chain of field
    descriptors (singular sub-messages and the first entry of repeated ones on the way)."""
    out: list[tuple[Any, ...]] = []
    for fd in desc.fields:
        sub = fd.message_type
        if fd.is_repeated:
            out.append((fd,))
        is_map = sub is not None and sub.GetOptions().map_entry
        if sub is not None and not is_map and sub.full_name not in seen:
            out.extend((fd, *rest) for rest in list_paths(sub, (*seen, sub.full_name)))
    return out


def fill_path(obj: Any, path: tuple[Any, ...], n: int) -> str:
    """Put `n` entries into the list at `path` inside `obj`; the field path check_counts names."""
    fd, rest = path[0], path[1:]
    if rest:
        if fd.is_repeated:
            entries = getattr(obj, fd.name)
            first = entries[0] if len(entries) else entries.add()
            return f".{fd.name}[0]" + fill_path(first, rest, n)
        return f".{fd.name}" + fill_path(getattr(obj, fd.name), rest, n)
    obj.ClearField(fd.name)  # the sample's own entries, if any, make way
    field = getattr(obj, fd.name)
    sub = fd.message_type
    if sub is not None and sub.GetOptions().map_entry:
        value = sub.fields_by_name["value"]
        for i in range(n):
            if value.message_type is None:
                field[f"k{i}"] = "1" if value.type == value.TYPE_STRING else 1
            else:
                field[f"k{i}"].SetInParent()
    elif sub is not None:
        for _ in range(n):
            field.add()
    else:
        field.extend([f"v{i}" if fd.type == fd.TYPE_STRING else i for i in range(n)])
    return f".{fd.name}"
