"""Domain types: what the engine schedules, with no trace of protobuf or gRPC.

Resources are canonical int64 units (CPU millicores, bytes, counts), already parsed from
Kubernetes quantities by the server layer. Types are frozen: a snapshot shares them freely.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

from .model_volume import Volume

__all__ = [
    "CPU",
    "MEMORY",
    "EPHEMERAL_STORAGE",
    "PODS",
    "DEFAULT_MILLI_CPU_REQUEST",
    "DEFAULT_MEMORY_REQUEST",
    "CONTAINER_RESTART_POLICY_ALWAYS",
    "HUGEPAGES_PREFIX",
    "is_supported_pod_level_resource",
    "MAX_QUANTITY",
    "Taint",
    "Toleration",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "PreferredSchedulingTerm",
    "NodeAffinity",
    "LabelSelectorRequirement",
    "LabelSelector",
    "PodAffinityTerm",
    "WeightedPodAffinityTerm",
    "PodAffinity",
    "Affinity",
    "TopologySpreadConstraint",
    "ContainerPort",
    "Container",
    "ContainerImage",
    "Node",
    "Namespace",
    "Pod",
    "PodDisruption",
    "PreemptionPolicy",
    "PodDisruptionBudget",
    "Outcome",
    "frozen_map",
]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# kube's schedutil.DefaultMilliCPURequest / DefaultMemoryRequest: used for scoring only, for a
# container that does not set the request at all (an explicit zero stays zero).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

# The largest quantity, pod's summed request and node's summed usage accepted, in canonical
# units (2**61: 2 EiB, 2.3e15 cores). kube caps a quantity at int64; its int64 sums then wrap.
# A quarter of int64 keeps every sum the engine makes in range by construction: a node's usage
# (<= this) plus the pods nominated to it (<= this, for the two-pass filter) is at most 2**62,
# and the 100m/200Mi scoring defaults of containers without requests would need more than 2**34
# containers on one node to cover the other 2**62.
MAX_QUANTITY = 2**61

_EMPTY: Mapping[str, str] = MappingProxyType({})

HUGEPAGES_PREFIX = "hugepages-"


def is_supported_pod_level_resource(name: str) -> bool:
    """kube's IsSupportedPodLevelResource: what pod-level spec.resources may name."""
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def frozen_map(d: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """A read-only view, so a frozen dataclass cannot be mutated through its maps."""
    return MappingProxyType(dict(d)) if d else _EMPTY


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """kube's v1.Toleration.ToleratesTaint, with the comparison operators (Lt, Gt) gated
        off as in kube 1.35: an operator other than Exists and Equal tolerates nothing."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return self.operator == "Exists"


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm


@dataclass(frozen=True, slots=True)
class NodeAffinity:
    # None: no required node affinity at all; () would be "no term can match" (kube: a
    # NodeSelector with zero terms matches nothing).
    required: tuple[NodeSelectorTerm, ...] | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@dataclass(frozen=True, slots=True)
class LabelSelectorRequirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LabelSelector:
    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """metav1.LabelSelectorAsSelector(...).Matches: every requirement must hold."""
        for k, v in self.match_labels:
            if labels.get(k) != v:
                return False
        for r in self.match_expressions:
            present = r.key in labels
            if r.operator == "In":
                if not present or labels[r.key] not in r.values:
                    return False
            elif r.operator == "NotIn":
                if present and labels[r.key] in r.values:
                    return False
            elif r.operator == "Exists":
                if not present:
                    return False
            elif r.operator == "DoesNotExist":
                if present:
                    return False
            else:  # validated at the edge; an unknown operator never matches
                return False
        return True

    @property
    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions

    def canonical(self) -> LabelSelector:
        """The same selector with its parts sorted and deduplicated, so equal selectors are
        equal objects (one cache entry in the pod-count indexes)."""
        labels = tuple(sorted(set(self.match_labels)))
        exprs = tuple(
            sorted(
                {
                    LabelSelectorRequirement(r.key, r.operator, tuple(sorted(set(r.values))))
                    for r in self.match_expressions
                },
                key=lambda r: (r.key, r.operator, r.values),
            )
        )
        return LabelSelector(match_labels=labels, match_expressions=exprs)


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    topology_key: str
    # None: kube's nil selector, which matches nothing; an empty LabelSelector matches all.
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class PodAffinity:
    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(frozen=True, slots=True)
class Affinity:
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule | ScheduleAnyway
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"
    match_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ContainerPort:
    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


# An init container with this restartPolicy is a sidecar (kube's restartable init container):
# it starts in order with the init containers and keeps running beside the app containers.
CONTAINER_RESTART_POLICY_ALWAYS = "Always"


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    image: str = ""
    # canonical units; a key that is absent is "not set" (kube tells unset from zero)
    requests: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str = ""  # init containers only: "Always" makes it a sidecar

    @property
    def is_sidecar(self) -> bool:
        """kube's isRestartableInitContainer (meaningful for init containers)."""
        return self.restart_policy == CONTAINER_RESTART_POLICY_ALWAYS


@dataclass(frozen=True, slots=True)
class ContainerImage:
    names: tuple[str, ...]
    size_bytes: int


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: Mapping[str, str] = field(default_factory=frozen_map)
    taints: tuple[Taint, ...] = ()
    allocatable: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    unschedulable: bool = False
    images: tuple[ContainerImage, ...] = ()


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    labels: Mapping[str, str] = field(default_factory=frozen_map)


class PreemptionPolicy(Enum):
    """v1.PreemptionPolicy: whether a pod that fits nowhere may evict lower-priority pods."""

    PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
    NEVER = "Never"


@dataclass(frozen=True, slots=True)
class PodDisruption:
    """What the cluster-autoscaler's drainability rules read of a pod's metadata (a simulated
    drain, issue 27); no scheduling plugin reads it, so batching does not sign it."""

    # metadata.ownerReferences[controller=true].kind ("" = no controller)
    controller_kind: str = ""
    mirror: bool = False  # kubernetes.io/config.mirror: a static pod's mirror
    # cluster-autoscaler.kubernetes.io/safe-to-evict: "" (absent), "true" or "false"
    safe_to_evict: str = ""
    # cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes: volume names
    safe_to_evict_local_volumes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Pod:
    uid: str
    name: str = ""
    namespace: str = "default"
    labels: Mapping[str, str] = field(default_factory=frozen_map)
    scheduler_name: str = "default-scheduler"
    priority: int = 0
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    node_selector: Mapping[str, str] = field(default_factory=frozen_map)
    # Pod-level spec.resources.requests (PodLevelResources): cpu, memory, hugepages-* only.
    # When set they replace the containers' aggregate for those resources (engine/podinfo.py).
    requests: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    # what DefaultPreemption reads: kube's spec.preemptionPolicy, status.startTime (unix
    # nanoseconds; None = not started, which kube reads as "now") and podTerminatingByPreemption
    preemption_policy: PreemptionPolicy = PreemptionPolicy.PREEMPT_LOWER_PRIORITY
    start_time: int | None = None
    terminating_by_preemption: bool = False
    # metadata.deletionTimestamp set: PodTopologySpread does not count it, as kube
    terminating: bool = False
    node_name: str = ""
    nominated_node_name: str = ""
    default_selector: LabelSelector | None = None
    # spec.volumes, as the volume plugins read them (model_volume.py)
    volumes: tuple[Volume, ...] = ()
    # what a simulated drain reads (PodDisruption); None = no controller, no annotations
    disruption: PodDisruption | None = None
    # spec.schedulingGroup.podGroupName: the PodGroup (this namespace's) whose pod group cycle
    # schedules the pod (model_pod_group.py); "" = none. Read only under GenericWorkload.
    pod_group: str = ""
    # Set by the server's conversion cache: pods holding the same token are equal in every
    # field but uid and name, so per-pod work (PodInfo, signature) can be memoized by it.
    shape: object | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    """policy/v1 PodDisruptionBudget, the part DefaultPreemption reads."""

    name: str
    namespace: str = "default"
    # None selects no pod: kube's preemption skips a nil or empty selector
    selector: LabelSelector | None = None
    disruptions_allowed: int = 0
    disrupted_pods: frozenset[str] = frozenset()  # names already being disrupted

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class Outcome(Enum):
    SCHEDULED = 1
    UNSCHEDULABLE = 2
    REJECTED = 3
