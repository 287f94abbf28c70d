"""Python client side of schedsvc: Kubernetes JSON/YAML conversion to the schedsvc.v1 messages,
and the what-if questions (whatif.py)."""

from __future__ import annotations

from .kube import (
    KubeObjectError,
    default_selector_for,
    load_objects,
    namespace_from_kube,
    node_from_kube,
    pod_from_kube,
)
from .whatif import (
    DrainVerdict,
    FillAnswer,
    IncompleteSimulation,
    ScaleUpAnswer,
    TemplateAnswer,
    drain,
    fill,
    scale_up,
)

__all__ = [
    "DrainVerdict",
    "FillAnswer",
    "IncompleteSimulation",
    "ScaleUpAnswer",
    "TemplateAnswer",
    "drain",
    "fill",
    "scale_up",
    "KubeObjectError",
    "default_selector_for",
    "load_objects",
    "namespace_from_kube",
    "node_from_kube",
    "pod_from_kube",
]
