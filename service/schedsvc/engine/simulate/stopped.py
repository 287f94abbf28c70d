"""The stop a simulation's caller asked for (deadline, cancel), raised from inside a step.

Its own module so that the steps (fill, schedule, drain, scale_up) and the run loop (run.py)
share one class without importing each other: run.py catches it, ends the run with the steps
completed before, and drops the fork."""

from __future__ import annotations

__all__ = ["Stopped"]


class Stopped(Exception):
    """`should_continue()` said no midway through a step; the step's fork is dropped whole."""
