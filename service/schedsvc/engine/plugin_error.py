"""kube's Error status at PreFilter and Filter: how its framework runtime wraps the message,
and a Filter result's Error rows among a block's rejected ones (the filter chain reaches here
only when a plugin erred).
"""

from __future__ import annotations

import numpy as np

from ..framework import Code, FilterResult, Rows
from ..framework.snapshot import BoolArray

__all__ = ["error_reasons", "filter_error_message", "pre_filter_error_message"]


def filter_error_message(plugin: str, message: str) -> str:
    """kube's RunFilterPlugins wrapping of a status that is no rejection."""
    return f'running "{plugin}" filter plugin: {message}'


def pre_filter_error_message(plugin: str, message: str) -> str:
    """kube's RunPreFilterPlugins wrapping of an Error status."""
    return f'running PreFilter plugin "{plugin}": {message}'


def error_reasons(
    plugin: str, res: FilterResult, sub: Rows, bad: BoolArray, live: Rows
) -> tuple[list[tuple[str, Rows]], Rows | None, tuple[int, str] | None]:
    """The rejected rows' reasons, those of Error rows wrapped as kube's; the Error rows; the
    first Error's (position in the block, message)."""
    reasons: list[tuple[str, Rows]] = []
    err_mask: BoolArray | None = None
    first: tuple[int, str] | None = None
    for r, m in res.reasons:
        m = m & bad
        if not m.any():
            continue
        if res.reason_codes.get(r, res.code) is not Code.ERROR:
            reasons.append((r, np.asarray(sub[m], dtype=np.intp)))
            continue
        msg = filter_error_message(plugin, r)
        reasons.append((msg, np.asarray(sub[m], dtype=np.intp)))
        err_mask = m if err_mask is None else err_mask | m
        pos = int(live[int(np.flatnonzero(m)[0])])
        if first is None or pos < first[0]:
            first = (pos, msg)
    errors = None if err_mask is None else np.asarray(sub[err_mask], dtype=np.intp)
    return reasons, errors, first
