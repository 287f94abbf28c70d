"""What one request, and one cluster's queue, may ask of the server (`schedsvc serve` flags)."""

from __future__ import annotations

from dataclasses import dataclass

from .counts import DEFAULT_MAX_ITEMS

__all__ = ["Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-request limits: a request beyond them is INVALID_ARGUMENT, before any work."""

    max_pods_per_request: int = 10_000
    max_nodes_per_update: int = 100_000
    max_pods_per_update: int = 1_000_000
    # also the bound of remove_nodes (by max_nodes_per_update) and remove_pods (max_pods_...)
    max_namespaces_per_update: int = 100_000
    # PodDisruptionBudgets upserted, and removed, by one UpdateSnapshot: a list of their own,
    # as namespaces have, since budgets are neither nodes nor pods; each of the PodGroup and
    # Workload lists (upserts and removals) has the same bound
    max_pdbs_per_update: int = 100_000
    # each storage list of an UpdateSnapshot (PVs, claims, classes, CSI objects, attachments),
    # upserts and removals alike
    max_storage_objects_per_update: int = 1_000_000
    max_cluster_name: int = 253
    # entries in any repeated or map field inside a pod, node or namespace (server/counts.py)
    max_items_per_field: int = DEFAULT_MAX_ITEMS
    # requests queued or running per cluster (Schedule, UpdateSnapshot, Explain: all that take
    # its lock); more is RESOURCE_EXHAUSTED (0 = no bound)
    max_queue_per_cluster: int = 8
    # open ScheduleStream calls in total and per cluster; more is RESOURCE_EXHAUSTED (0 = none)
    max_streams: int = 1024
    max_streams_per_cluster: int = 16
    # requests handed to the engine's threads and not finished, over all clusters (0 = none)
    max_in_flight: int = 256
    # stop a batch this long before the caller's deadline, so the partial answer still arrives
    deadline_margin_seconds: float = 0.05
    # Simulate (issue 27; simulation_limits.py): steps in one request, pods it may place or
    # try, nodes it may add (beyond any: INVALID_ARGUMENT naming the step's field), and
    # Simulate calls queued or running per cluster (beyond: RESOURCE_EXHAUSTED; 0 = no bound)
    max_simulation_steps: int = 100
    max_simulated_pods: int = 100_000
    max_simulated_nodes: int = 10_000
    max_concurrent_simulations_per_cluster: int = 2
