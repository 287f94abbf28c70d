"""Domain errors. The server maps them to gRPC codes in one place; they know nothing of gRPC.

SchedsvcError
├── InvalidArgument        a request field is malformed (the request changes nothing)
├── FailedPrecondition     expected generation/epoch mismatch: the client must resync
├── ResourceExhausted      a limit or queue is full: retry later
└── ConfigError            a KubeSchedulerConfiguration we cannot honour (start-up)
"""

from __future__ import annotations

__all__ = [
    "SchedsvcError",
    "InvalidArgument",
    "FailedPrecondition",
    "ResourceExhausted",
    "ConfigError",
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
