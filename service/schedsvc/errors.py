"""Domain errors. The server maps them to gRPC codes in one place; they know nothing of gRPC.

SchedsvcError
├── InvalidArgument        a request field is malformed (the request changes nothing)
├── FailedPrecondition     expected generation/epoch mismatch: the client must resync
├── ResourceExhausted      a limit or queue is full: retry later
├── ConfigError            a KubeSchedulerConfiguration we cannot honour (start-up)
├── DeadlineExceeded       a batch met its caller's deadline before any pod was attempted
└── Cancelled              a batch's caller left before any pod was attempted
"""

from __future__ import annotations

__all__ = [
    "SchedsvcError",
    "InvalidArgument",
    "FailedPrecondition",
    "ResourceExhausted",
    "ConfigError",
    "DeadlineExceeded",
    "Cancelled",
]


class SchedsvcError(Exception):
    """Base of every error the engine raises on purpose."""


class InvalidArgument(SchedsvcError):
    def __init__(self, field: str, description: str) -> None:
        super().__init__(f"{field}: {description}")
        self.field = field
        self.description = description


class FailedPrecondition(SchedsvcError):
    pass


class ResourceExhausted(SchedsvcError):
    def __init__(self, message: str, retry_after_seconds: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class ConfigError(SchedsvcError):
    def __init__(self, field: str, description: str) -> None:
        super().__init__(f"{field}: {description}")
        self.field = field


class DeadlineExceeded(SchedsvcError):
    """Pods placed before the stop stay assumed; a retry with the same uids returns them."""


class Cancelled(SchedsvcError):
    """As DeadlineExceeded, but the caller went away (nobody reads the answer)."""
