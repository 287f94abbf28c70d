"""schedsvc.v1 -> domain for what DefaultPreemption reads: the pod's preemption fields and
PodDisruptionBudgets. Errors are InvalidArgument naming the field as the request spells it.

Budgets are held by the cluster, so they are bounded as kube's API server bounds them: the name
a DNS-1123 subdomain, the namespace a DNS-1123 label, every list and map inside under
--max-items-per-field (server/counts.py), and each disrupted pod name at most 253 characters
(a pod name is a DNS-1123 subdomain in kube; a longer entry could never match a pod)."""

from __future__ import annotations

from schedsvc import model
from schedsvc.errors import InvalidArgument
from schedsvc.v1 import schedule_pb2 as pb

from .cache import PodCaches
from .convert_selectors import label_selector
from .counts import check_counts
from .validation import dns1123_label_error, dns1123_subdomain_error

__all__ = ["preemption_policy", "start_time", "pdb_from_pb", "pdb_key"]

_POLICIES = {p.value: p for p in model.PreemptionPolicy}


def preemption_policy(msg: pb.Pod, prefix: str) -> model.PreemptionPolicy:
    """"" is kube's default, PreemptLowerPriority."""
    if not msg.preemption_policy:
        return model.PreemptionPolicy.PREEMPT_LOWER_PRIORITY
    policy = _POLICIES.get(msg.preemption_policy)
    if policy is None:
        raise InvalidArgument(
            f"{prefix}.preemption_policy",
            f"unknown preemption policy {msg.preemption_policy!r} "
            "(PreemptLowerPriority or Never)",
        )
    return policy


def start_time(msg: pb.Pod, prefix: str) -> int | None:
    """Unix nanoseconds, None when unset (a pod not started yet)."""
    if not msg.HasField("start_time"):
        return None
    ts = msg.start_time
    if not 0 <= ts.nanos < 1_000_000_000:
        raise InvalidArgument(f"{prefix}.start_time.nanos", "must be in [0, 1e9)")
    return int(ts.seconds) * 1_000_000_000 + int(ts.nanos)


def _namespace(ns: str, path: str) -> str:
    """"" is "default"; otherwise a DNS-1123 label (length checked first, never echoed)."""
    ns = ns or "default"
    if (err := dns1123_label_error(ns)) is not None:
        raise InvalidArgument(path, f"not a namespace name: {err}")
    return ns


# kube's pod names are DNS-1123 subdomains: no disrupted pod name is longer
MAX_POD_NAME = 253


def pdb_from_pb(
    msg: pb.PodDisruptionBudget, prefix: str, caches: PodCaches, max_items: int
) -> model.PodDisruptionBudget:
    """A validated budget. The name and counts are checked before anything is converted, so
    an oversized budget costs no more than reading its lists' lengths."""
    if not msg.name:
        raise InvalidArgument(f"{prefix}.name", "a PodDisruptionBudget needs a name")
    if (err := dns1123_subdomain_error(msg.name)) is not None:
        raise InvalidArgument(f"{prefix}.name", err)
    namespace = _namespace(msg.namespace, f"{prefix}.namespace")
    check_counts(msg, prefix, max_items)
    for i, name in enumerate(msg.disrupted_pods):
        if len(name) > MAX_POD_NAME:
            raise InvalidArgument(
                f"{prefix}.disrupted_pods[{i}]",
                f"must be no more than {MAX_POD_NAME} characters (a pod name)",
            )
    selector: model.LabelSelector | None = None
    if msg.HasField("selector"):
        sel = label_selector(msg.selector, f"{prefix}.selector", caches)
        selector = None if sel.is_empty else sel
    return model.PodDisruptionBudget(
        name=msg.name,
        namespace=namespace,
        selector=selector,
        disruptions_allowed=msg.disruptions_allowed,
        disrupted_pods=frozenset(msg.disrupted_pods),
    )


def pdb_key(key: str, path: str) -> str:
    """A remove_pod_disruption_budgets entry: "namespace/name", each part a name a budget
    could have (so no entry is longer than 63 + 1 + 253 characters)."""
    if len(key) > 63 + 1 + 253:
        raise InvalidArgument(path, "too long to be \"namespace/name\" of a budget")
    ns, sep, name = key.partition("/")
    if not sep or not ns or not name:
        raise InvalidArgument(path, f"{key!r} is not \"namespace/name\"")
    if (err := dns1123_label_error(ns)) is not None:
        raise InvalidArgument(path, f"namespace {err}")
    if (err := dns1123_subdomain_error(name)) is not None:
        raise InvalidArgument(path, f"name {err}")
    return key
