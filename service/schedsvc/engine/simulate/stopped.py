"""The signal a step's runner raises when the caller's should_continue says no midway."""

from __future__ import annotations

__all__ = ["Stopped"]


class Stopped(Exception):
    """should_continue said no inside a step: the run ends, that step cut short (the
    fork, dropped with the run, holds whatever the step had done)."""
