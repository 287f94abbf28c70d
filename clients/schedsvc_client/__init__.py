"""Python client side of schedsvc: Kubernetes JSON/YAML conversion to the schedsvc.v1 messages."""

from __future__ import annotations

from .kube import (
    KubeObjectError,
    default_selector_for,
    load_objects,
    namespace_from_kube,
    node_from_kube,
    pod_from_kube,
)

__all__ = [
    "KubeObjectError",
    "default_selector_for",
    "load_objects",
    "namespace_from_kube",
    "node_from_kube",
    "pod_from_kube",
]
