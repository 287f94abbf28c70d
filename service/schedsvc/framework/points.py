"""Which extension points a plugin class implements, read from its methods.

A plugin declares its points once, by defining the methods of their protocols (interface.py):
the registry derives the configuration's points from the class, as Go derives them from the
interfaces a plugin's type satisfies, so there is no second table to keep in step.
"""

from __future__ import annotations

from .interface import (
    FilterPlugin,
    Plugin,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
)

__all__ = ["EXTENSION_POINTS", "POINT_NAMES", "protocol_methods", "implements", "points_of"]

# the points a profile lists plugins under, by their KubeSchedulerConfiguration names, in the
# order a cycle runs them, each with the protocol a plugin implements to run there
EXTENSION_POINTS: tuple[tuple[str, type], ...] = (
    ("preFilter", PreFilterPlugin),
    ("filter", FilterPlugin),
    ("preScore", PreScorePlugin),
    ("score", ScorePlugin),
    ("reserve", ReservePlugin),
)
POINT_NAMES: tuple[str, ...] = tuple(name for name, _ in EXTENSION_POINTS)


def protocol_methods(protocol: type) -> frozenset[str]:
    """The methods `protocol` and the point protocols it extends declare (Plugin's `name` and
    `traits` are attributes every plugin has, not a point)."""
    mro = protocol.__mro__
    own = mro[: mro.index(Plugin)] if Plugin in mro else mro[:1]
    return frozenset(
        name
        for cls in own
        for name, value in vars(cls).items()
        if callable(value) and not name.startswith("_")
    )


def implements(cls: type, protocol: type) -> bool:
    """Whether instances of `cls` have every method of `protocol` (issubclass refuses protocols
    with attributes, and a class is all the registry has before a profile's args are read)."""
    return all(callable(getattr(cls, m, None)) for m in protocol_methods(protocol))


def points_of(cls: type) -> frozenset[str]:
    """The configuration names of the points `cls` implements."""
    return frozenset(name for name, protocol in EXTENSION_POINTS if implements(cls, protocol))
