"""The parts of Kubernetes objects our proto mirrors field for field (affinity, tolerations,
topologySpreadConstraints, taints, images, selectors), parsed with protobuf's JSON mapping; a
parse error is narrowed down to the innermost bad field's JSON path."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format, message_factory
from google.protobuf.message import Message

from .kube_json import KubeObjectError, join

__all__ = ["parse_into"]

_PARSE_PREFIX = re.compile(r"^(Failed to parse \w+ field: )+")


def _parse_error(data: Mapping[str, Any], cls: type[Message]) -> str | None:
    try:
        json_format.ParseDict(dict(data), cls(), ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        return _PARSE_PREFIX.sub("", str(exc)).rstrip(".") or str(exc)
    return None


def _class(desc: Any) -> type[Message]:
    cls: type[Message] = message_factory.GetMessageClass(desc)
    return cls


def _locate(data: Any, cls: type[Message], path: str, why: str) -> tuple[str, str]:
    """Narrow a ParseError down to the innermost bad field. Error path only: it reparses."""
    if not isinstance(data, Mapping):
        return path, f"expected an object, got {type(data).__name__}"
    desc = cls.DESCRIPTOR
    for key, value in data.items():
        fd = desc.fields_by_camelcase_name.get(key) or desc.fields_by_name.get(key)
        if fd is None:
            continue
        err = _parse_error({key: value}, cls)
        if err is None:
            continue
        sub = join(path, key)
        sub_type = fd.message_type
        if sub_type is not None and sub_type.GetOptions().map_entry:
            if isinstance(value, Mapping):
                for k, v in value.items():
                    e = _parse_error({key: {k: v}}, cls)
                    if e is not None:
                        return join(sub, str(k)), e
        elif fd.is_repeated:
            if isinstance(value, list):
                for i, item in enumerate(value):
                    e = _parse_error({key: [item]}, cls)
                    if e is not None:
                        if sub_type is not None and isinstance(item, Mapping):
                            return _locate(item, _class(sub_type), f"{sub}[{i}]", e)
                        return f"{sub}[{i}]", e
        elif sub_type is not None and isinstance(value, Mapping):
            return _locate(value, _class(sub_type), sub, err)
        return sub, err
    return path, why


def parse_into(message: Message, data: Mapping[str, Any], path: str) -> None:
    """ParseDict `data` into `message`; on failure, a KubeObjectError at the bad field."""
    try:
        json_format.ParseDict(dict(data), message, ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        where, why = _locate(data, type(message), path, str(exc))
        raise KubeObjectError(where, why) from None
