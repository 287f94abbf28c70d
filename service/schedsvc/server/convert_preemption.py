"""schedsvc.v1 -> domain for what DefaultPreemption reads: the pod's preemption fields and
PodDisruptionBudgets. Errors are InvalidArgument naming the field as the request spells it."""

from __future__ import annotations

from schedsvc import model
from schedsvc.errors import InvalidArgument
from schedsvc.v1 import schedule_pb2 as pb

from .cache import PodCaches
from .convert_selectors import label_selector
from .validation import DNS1123_LABEL_RE

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
    ns = ns or "default"
    if not DNS1123_LABEL_RE.match(ns) or len(ns) > 63:
        raise InvalidArgument(path, f"{ns!r} is not a namespace name")
    return ns


def pdb_from_pb(
    msg: pb.PodDisruptionBudget, prefix: str, caches: PodCaches
) -> model.PodDisruptionBudget:
    if not msg.name:
        raise InvalidArgument(f"{prefix}.name", "a PodDisruptionBudget needs a name")
    if "/" in msg.name:
        raise InvalidArgument(f"{prefix}.name", "must not contain '/'")
    namespace = _namespace(msg.namespace, f"{prefix}.namespace")
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
    """A remove_pod_disruption_budgets entry: "namespace/name"."""
    ns, sep, name = key.partition("/")
    if not sep or not ns or not name:
        raise InvalidArgument(path, f"{key!r} is not \"namespace/name\"")
    return key
