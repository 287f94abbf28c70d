"""Count limits on the repeated fields inside a pod, node, namespace or PodDisruptionBudget.

Request-level lists (pods, nodes, removals, namespaces, budgets) have limits of their own
(Limits in limits.py). Inside an object every repeated or map field (containers, ports,
tolerations, terms, values, labels, images, disrupted pods, ...) holds at most `max_items`
entries, checked before the object is converted, so no object can carry an unbounded list into
the engine. The default is far above what real objects carry (kube itself caps a node's
reported images at 50).
"""

from __future__ import annotations

from google.protobuf.message import Message

from ..errors import InvalidArgument

__all__ = ["DEFAULT_MAX_ITEMS", "check_counts"]

DEFAULT_MAX_ITEMS = 5000


def check_counts(msg: Message, prefix: str, limit: int) -> None:
    """InvalidArgument naming the first repeated or map field of `msg` (recursively) with more
    than `limit` entries. Costs one ListFields per set sub-message."""
    if limit <= 0:
        return
    for fd, value in msg.ListFields():
        sub = fd.message_type
        if fd.is_repeated:
            if len(value) > limit:
                raise InvalidArgument(
                    f"{prefix}.{fd.name}", f"at most {limit} entries (--max-items-per-field)"
                )
            if sub is not None and not sub.GetOptions().map_entry:
                for i, item in enumerate(value):
                    check_counts(item, f"{prefix}.{fd.name}[{i}]", limit)
        elif sub is not None:
            check_counts(value, f"{prefix}.{fd.name}", limit)
