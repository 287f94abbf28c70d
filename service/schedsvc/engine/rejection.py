"""A plugin's rejection of rows in one block, as the filter chain records it, and kube's
wrapping of a status that is no rejection (Error) at PreFilter and Filter.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..framework import Code, FilterResult, Rows
from ..framework.snapshot import BoolArray

__all__ = ["Rejection", "rejection", "filter_error_message", "pre_filter_error_message"]


def _as_rows(a: object) -> Rows:
    return np.asarray(a, dtype=np.intp)


@dataclass(slots=True)
class Rejection:
    """Rows a plugin rejected in one block, and each reason's rows among them."""

    plugin: str
    rows: Rows
    reasons: list[tuple[str, Rows]]
    code: Code
    # rows among `rows` whose status is UnschedulableAndUnresolvable although `code` is
    # Unschedulable (a resource beyond allocatable, a reason_codes entry): preemption skips them
    unresolvable: Rows | None = None
    # rows among `rows` whose status is kube's Error (their reasons are wrapped as kube's
    # RunFilterPlugins wraps them): the cycle ends with the first in visiting order
    errors: Rows | None = None


def filter_error_message(plugin: str, message: str) -> str:
    """kube's RunFilterPlugins wrapping of a status that is no rejection."""
    return f'running "{plugin}" filter plugin: {message}'


def pre_filter_error_message(plugin: str, message: str) -> str:
    """kube's RunPreFilterPlugins wrapping of an Error status."""
    return f'running PreFilter plugin "{plugin}": {message}'


def rejection(
    plugin: str, res: FilterResult, sub: Rows, bad: BoolArray, live: Rows
) -> tuple[Rejection, tuple[int, str] | None]:
    """A plugin's rejected rows of a block; the reasons of Error rows wrapped as kube's, and
    the first Error's (position in the block, message) if any."""
    reasons: list[tuple[str, Rows]] = []
    err_mask: BoolArray | None = None
    first: tuple[int, str] | None = None
    for r, m in res.reasons:
        m = m & bad
        if not m.any():
            continue
        if res.reason_codes.get(r, res.code) is not Code.ERROR:
            reasons.append((r, _as_rows(sub[m])))
            continue
        msg = filter_error_message(plugin, r)
        reasons.append((msg, _as_rows(sub[m])))
        err_mask = m if err_mask is None else err_mask | m
        pos = int(live[int(np.flatnonzero(m)[0])])
        if first is None or pos < first[0]:
            first = (pos, msg)
    errors = None if err_mask is None else _as_rows(sub[err_mask])
    code = Code.UNRESOLVABLE if res.code is Code.ERROR else res.code
    rej = Rejection(plugin, _as_rows(sub[bad]), reasons, code, _unresolvable(res, sub, bad), errors)
    return rej, first


def _unresolvable(res: FilterResult, sub: Rows, bad: BoolArray) -> Rows | None:
    """The rejected rows whose code is UnschedulableAndUnresolvable under an Unschedulable
    result: by a plugin's per-row flag (NodeResourcesFit) or a reason's own code."""
    if res.code in (Code.UNRESOLVABLE, Code.ERROR):
        return None
    mask: BoolArray | None = res.unresolvable
    for reason, m in res.reasons:
        if res.reason_codes.get(reason) == Code.UNRESOLVABLE:
            mask = m if mask is None else mask | m
    if mask is None:
        return None
    mask = mask & bad
    return _as_rows(sub[mask]) if mask.any() else None
