"""Field-level validation shared by the request converters: names, labels, IPs, resources.

kube's apimachinery rules (IsQualifiedName, IsValidLabelValue, IsDNS1123Label/Subdomain) and
its container resource-name rule, each failing as an InvalidArgument that names the field.
Checks on values that repeat (label keys, values, IPs, quantities) are cached for valid input
only, bounded in bytes (server/cache.py). Lengths are checked before any regex, and errors
never echo a value longer than the rule allows.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from types import MappingProxyType

from schedsvc import model
from schedsvc.errors import InvalidArgument
from schedsvc.quantity import to_canonical

from .cache import ConversionCache

__all__ = [
    "DNS1123_LABEL_RE",
    "annotation_map",
    "INT_RE",
    "check_key",
    "container_resource_error",
    "dns1123_label_error",
    "dns1123_subdomain_error",
    "field_key",
    "ip_error",
    "label_value_error",
    "labels",
    "qualified_name_error",
    "pod_level_resources",
    "resources",
    "to_storage",
]

_EMPTY_INTS: Mapping[str, int] = MappingProxyType({})

# --- field paths and names (error path only, except the cached validity checks) ---------------


def field_key(k: str) -> str:
    """A map entry in a field path: labels["app"]."""
    return '["' + k.replace("\\", "\\\\").replace('"', '\\"') + '"]'


# kube's apimachinery validation: IsQualifiedName, IsValidLabelValue, IsDNS1123Label.
_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
DNS1123_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN_RE = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
INT_RE = re.compile(r"^[+-]?[0-9]+$")


# Validity checks are cached for strings found valid only (errors are computed again, they are
# rare), bounded in bytes and kept only for requests that converted in full (server/cache.py).
_CHECK_BYTES = 512 * 1024  # a few thousand names each: a re-check costs a regex
_VALID_KEYS: ConversionCache[str, bool] = ConversionCache("valid label keys", _CHECK_BYTES)
_VALID_VALUES: ConversionCache[str, bool] = ConversionCache("valid label values", _CHECK_BYTES)
_VALID_IPS: ConversionCache[str, bool] = ConversionCache("valid IPs", _CHECK_BYTES)
_QUANTITIES: ConversionCache[tuple[str, str], int] = ConversionCache("quantities", _CHECK_BYTES)

# the longest a qualified name can be: a 253-character DNS subdomain prefix, "/", 63 characters
MAX_QUALIFIED_NAME = 253 + 1 + 63


def qualified_name_error(key: str) -> str | None:
    """Why `key` is not a label key (kube's IsQualifiedName), or None."""
    if _VALID_KEYS.get(key):
        return None
    err = _qualified_name_error(key)
    if err is None:
        _VALID_KEYS.put(key, True, len(key))
    return err


def _qualified_name_error(key: str) -> str | None:
    if not key:
        return "must not be empty"
    if len(key) > MAX_QUALIFIED_NAME:  # before any regex, and without echoing it back
        return f"must be no more than {MAX_QUALIFIED_NAME} characters"
    prefix, slash, name = key.rpartition("/")
    if slash:
        if not prefix:
            return "prefix part must not be empty"
        if len(prefix) > 253:
            return "prefix part must be no more than 253 characters"
        if not _DNS1123_SUBDOMAIN_RE.match(prefix):
            return f"prefix {prefix!r} must be a DNS-1123 subdomain"
    if not name:
        return "name part must not be empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    if not _NAME_RE.match(name):
        return (
            f"name part {name!r} must consist of alphanumerics, '-', '_' or '.', "
            "and start and end with an alphanumeric"
        )
    return None


def label_value_error(value: str) -> str | None:
    """Why `value` is not a label value (kube's IsValidLabelValue), or None."""
    if not value or _VALID_VALUES.get(value):
        return None
    if len(value) > 63:
        return "must be no more than 63 characters"
    if not _NAME_RE.match(value):
        return (
            f"{value!r} must consist of alphanumerics, '-', '_' or '.', "
            "and start and end with an alphanumeric"
        )
    _VALID_VALUES.put(value, True, len(value))
    return None


def ip_error(text: str) -> str | None:
    if _VALID_IPS.get(text):
        return None
    if len(text) > 45:  # the longest IPv6 text form
        return "not a valid IP address (too long)"
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return f"{text!r} is not a valid IP address"
    _VALID_IPS.put(text, True, len(text))
    return None


def dns1123_label_error(name: str) -> str | None:
    """Why `name` is not a DNS-1123 label (kube's IsDNS1123Label: namespace names), or None."""
    if len(name) > 63:
        return "must be no more than 63 characters"
    if not DNS1123_LABEL_RE.match(name):
        return (
            f"{name!r} must consist of lower case alphanumerics or '-', and start and end "
            "with an alphanumeric (a DNS-1123 label)"
        )
    return None


def dns1123_subdomain_error(name: str) -> str | None:
    """Why `name` is not a DNS-1123 subdomain (kube's IsDNS1123Subdomain: node names), or
    None."""
    if len(name) > 253:
        return "must be no more than 253 characters"
    if not _DNS1123_SUBDOMAIN_RE.match(name):
        return (
            f"{name!r} must consist of lower case alphanumerics, '-' or '.', and start and "
            "end with an alphanumeric (a DNS-1123 subdomain)"
        )
    return None


def check_key(key: str, field: str) -> None:
    err = qualified_name_error(key)
    if err is not None:
        raise InvalidArgument(field, err)


def labels(m: Mapping[str, str], path: str) -> Mapping[str, str]:
    """Labels, node selectors: valid keys and values, frozen."""
    if not m:
        return model.frozen_map()
    d = dict(m)
    for k, v in d.items():
        if qualified_name_error(k) is not None or label_value_error(v) is not None:
            err = qualified_name_error(k)
            if err is not None:
                raise InvalidArgument(f"{path}{field_key(k)}", f"bad key {k!r}: {err}")
            raise InvalidArgument(f"{path}{field_key(k)}", f"bad value: {label_value_error(v)}")
    return MappingProxyType(d)


_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})


def container_resource_error(name: str) -> str | None:
    """kube's container resource-name rule: cpu, memory, ephemeral-storage, hugepages-*, or
    an extended resource (a qualified name with a domain outside kubernetes.io). Anything else,
    such as "pods", would be counted against the node's columns as if it were real."""
    if name in _CONTAINER_RESOURCES or name.startswith("hugepages-"):
        return None
    if "/" not in name or name.startswith("requests.") or "kubernetes.io/" in name:
        return f"{name!r} is not a container resource (cpu, memory, ephemeral-storage, " \
            "hugepages-*, or an extended resource like example.com/gpu)"
    return qualified_name_error(name)


def resources(m: Mapping[str, str], path: str, container: bool = False) -> Mapping[str, int]:
    """Quantities (requests, overhead, allocatable) in canonical units."""
    if not m:
        return _EMPTY_INTS
    out: dict[str, int] = {}
    for k, v in m.items():
        if not k:
            raise InvalidArgument(f"{path}{field_key(k)}", "empty resource name")
        err = container_resource_error(k) if container else qualified_name_error(k)
        if err is not None:
            raise InvalidArgument(f"{path}{field_key(k)}", err)
        hit = _QUANTITIES.get((k, v))
        if hit is not None:
            out[k] = hit
            continue
        try:
            out[k] = to_canonical(k, v, "")
        except InvalidArgument as exc:
            raise InvalidArgument(f"{path}{field_key(k)}", exc.description) from None
        _QUANTITIES.put((k, v), out[k], len(k) + len(v))
    return MappingProxyType(out)


def pod_level_resources(m: Mapping[str, str], path: str) -> Mapping[str, int]:
    """Pod-level spec.resources.requests: kube's API validation allows cpu, memory and
    hugepages-* only (IsSupportedPodLevelResource)."""
    for k in m:
        if not model.is_supported_pod_level_resource(k):
            raise InvalidArgument(
                f"{path}{field_key(k)}",
                f"{k!r} is not a supported pod-level resource (cpu, memory, hugepages-*)",
            )
    return resources(m, path)


def to_storage(text: str, path: str) -> int:
    """A storage quantity (a claim's request, a PV's capacity) in bytes, rounded up."""
    return to_canonical("storage", text, path)


def annotation_map(m: Mapping[str, str], path: str) -> Mapping[str, str]:
    """Annotations: qualified-name keys (kube's ValidateAnnotations), any values, frozen."""
    if not m:
        return model.frozen_map()
    d = dict(m)
    for k in d:
        check_key(k, f"{path}{field_key(k)}")
    return MappingProxyType(d)
