"""apimachinery's name validation (IsQualifiedName, IsValidLabelValue, IsDNS1123Subdomain),
once for every layer: the server validates requests with it, plugins validate their arguments
and resource names with it."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "qualified_name_error",
    "is_qualified_name",
    "label_value_error",
    "is_valid_label_value",
    "is_dns1123_subdomain",
]

_QNAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_LABEL + r"(\." + _DNS1123_LABEL + r")*")
_MAX_NAME = 63
_MAX_SUBDOMAIN = 253


@lru_cache(maxsize=65536)
def qualified_name_error(key: str) -> str | None:
    """Why `key` is not a qualified name (a label key: `[dns-subdomain/]name`), or None."""
    if not key:
        return "must not be empty"
    prefix, slash, name = key.rpartition("/")
    if slash:
        if not prefix:
            return "prefix part must not be empty"
        if "/" in prefix:
            return "a qualified name must have at most one '/'"
        if not is_dns1123_subdomain(prefix):
            return f"prefix {prefix!r} must be a DNS-1123 subdomain"
    if not name:
        return "name part must not be empty"
    if len(name) > _MAX_NAME:
        return f"name part must be no more than {_MAX_NAME} characters"
    if not _QNAME_RE.fullmatch(name):
        return (
            f"name part {name!r} must consist of alphanumerics, '-', '_' or '.', "
            "and start and end with an alphanumeric"
        )
    return None


def is_qualified_name(key: str) -> bool:
    return qualified_name_error(key) is None


@lru_cache(maxsize=65536)
def label_value_error(value: str) -> str | None:
    """Why `value` is not a label value (empty, or a short qualified-name part), or None."""
    if not value:
        return None
    if len(value) > _MAX_NAME:
        return f"must be no more than {_MAX_NAME} characters"
    if not _QNAME_RE.fullmatch(value):
        return (
            f"{value!r} must consist of alphanumerics, '-', '_' or '.', "
            "and start and end with an alphanumeric"
        )
    return None


def is_valid_label_value(value: str) -> bool:
    return label_value_error(value) is None


def is_dns1123_subdomain(value: str) -> bool:
    return len(value) <= _MAX_SUBDOMAIN and _DNS1123_SUBDOMAIN_RE.fullmatch(value) is not None
