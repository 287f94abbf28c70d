"""Kubernetes objects out of files or text: JSON or (multi-document) YAML, lists unwrapped,
each object with its kind and the JSON path an error should name."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from .kube_json import KubeObjectError, as_list, join

__all__ = ["Source", "flat_objects"]

Source = str | os.PathLike[str]


def _documents(text: str) -> list[Any]:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return [json.loads(text)]
        except json.JSONDecodeError:
            pass  # YAML flow style also starts with { or [
    try:
        return [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise KubeObjectError("", f"neither JSON nor YAML: {exc}") from None


def _flatten(doc: Any, path: str, kind_hint: str | None, out: list[tuple[str, Any, str]]) -> None:
    """Unwrap lists (`kind: List`, NodeList, PodList, plain arrays) into (kind, object, path)."""
    if doc is None:
        return
    if isinstance(doc, list):
        for i, item in enumerate(doc):
            _flatten(item, f"{path}[{i}]", kind_hint, out)
        return
    if not isinstance(doc, Mapping):
        raise KubeObjectError(path, f"expected a Kubernetes object, got {type(doc).__name__}")
    kind = doc.get("kind", kind_hint)
    if "items" in doc and (kind is None or (isinstance(kind, str) and kind.endswith("List"))):
        # Raw API lists (NodeList) omit each item's kind; `kubectl get` Lists keep it.
        item_kind = kind[: -len("List")] if kind and kind != "List" else None
        items_path = join(path, "items")
        for i, item in enumerate(as_list(doc["items"], items_path)):
            _flatten(item, f"{items_path}[{i}]", item_kind, out)
        return
    if not isinstance(kind, str) or not kind:
        raise KubeObjectError(join(path, "kind"), "missing kind")
    out.append((kind, doc, path))


def _read(source: str | os.PathLike[str]) -> tuple[str, str | None]:
    """The text, and the file name it came from (None for text given as such)."""
    if isinstance(source, os.PathLike):
        with open(source, encoding="utf-8") as f:
            return f.read(), os.fspath(source)
    if "\n" not in source and not source.lstrip().startswith(("{", "[")):
        try:
            with open(source, encoding="utf-8") as f:
                return f.read(), source
        except OSError:
            pass  # one line of YAML, not a file name
    return source, None


def flat_objects(source: Source | Sequence[Source]) -> list[tuple[str, Any, str]]:
    """Every object of the input as (kind, object, JSON path)."""
    several = not isinstance(source, str | os.PathLike)
    sources: Sequence[Source] = [source] if isinstance(source, str | os.PathLike) else source
    flat: list[tuple[str, Any, str]] = []
    for i, one in enumerate(sources):
        text, file_name = _read(one)
        docs = _documents(text)
        doc = docs if len(docs) > 1 else (docs[0] if docs else None)
        _flatten(doc, (f"{file_name}:" if file_name else f"[{i}]") if several else "", None, flat)
    return flat
