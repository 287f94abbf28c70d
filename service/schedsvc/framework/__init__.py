"""The bottom layer (kube's kube-scheduler/framework): the extension-point interfaces and the
data plugins read (pod info, the columnar snapshot, the selector-count and affinity indexes).
It imports nothing of plugins, engine or server."""

from .interface import (
    MAX_NODE_SCORE,
    NO_TRAITS,
    SKIP,
    Code,
    FilterOnePlugin,
    FilterPlugin,
    FilterResult,
    Plugin,
    PluginTraits,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    Rows,
    ScoreOnePlugin,
    ScorePlugin,
    SignPlugin,
    SignRescoredPlugin,
    Skip,
    WindowScorePlugin,
    default_normalize_score,
)

__all__ = [
    "MAX_NODE_SCORE",
    "NO_TRAITS",
    "SKIP",
    "Code",
    "FilterOnePlugin",
    "FilterPlugin",
    "FilterResult",
    "Plugin",
    "PluginTraits",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "Rows",
    "ScoreOnePlugin",
    "ScorePlugin",
    "SignPlugin",
    "SignRescoredPlugin",
    "WindowScorePlugin",
    "Skip",
    "default_normalize_score",
]
